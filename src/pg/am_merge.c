/*
 * Merges: the pending list and some segments into one new segment, rows
 * that VACUUM found dead left out. One merge at a time (SCIPIS_LOCK_MERGE);
 * the new segment is written first, then published with the pages it
 * replaces freed, in one WAL record on the metapage while no scan reads a
 * view (SCIPIS_LOCK_VIEW exclusive) and no insert appends.
 */
#include "am.h"

#include "miscadmin.h"
#include "storage/lmgr.h"

#include "scipis_pg.h"

/*
 * Which segments a pending flush takes with it: from the newest back, each
 * no more than twice what is merged so far and, past the first, larger
 * than the one taken before it, so segments grow geometrically and stay
 * few; all but the oldest when the table is full. A run of segments of
 * one size (CREATE INDEX writes many) is taken one at a time: without the
 * second rule, once the first was taken every other would be too, and a
 * small COPY would rewrite the whole index.
 */
static void
choose_for_flush(const ScipisMeta *meta, bool *take)
{
	uint64		acc = meta->pending_bytes;
	uint64		prev = 0;
	int			i;

	for (i = (int) meta->nsegments - 1; i >= 0; i--)
	{
		const scipis_am_segment *s = &meta->segments[i];
		int			left = i;	/* segments that would remain besides the new one */

		if ((s->bytes <= 2 * acc && (prev == 0 || s->bytes > prev)) ||
			left >= SCIPIS_MAX_SEGMENTS - 1)
		{
			take[i] = true;
			acc += s->bytes;
			prev = s->bytes;
		}
		else
			break;
	}
}

/* merge()'s choice of segments: the flush policy, none, or one by id. */
#define MERGE_BY_POLICY (-1)
#define MERGE_NO_SEGMENT (-2)

/*
 * dead: sorted row keys to leave out (VACUUM). which: MERGE_BY_POLICY (a
 * pending flush), MERGE_NO_SEGMENT, or the id of the one segment to
 * rewrite, which keeps its place among the others. fold_pending: the
 * pending list goes in too. unlock: SCIPIS_LOCK_MERGE is released at the
 * end. Returns false when another merge held the lock and wait is false.
 */
static bool
merge(Relation index, bool wait, const uint64 *dead, size_t ndead, int64 which, bool fold_pending,
	  bool locked, bool unlock)
{
	ScipisMeta	meta;
	bool		take[SCIPIS_MAX_SEGMENTS] = {0};
	scipis_am_segment chosen[SCIPIS_MAX_SEGMENTS];
	int			nchosen = 0;
	scipis_am_view view;
	BlockNumber end_block;
	OffsetNumber end_item;
	scipis_am_reader rd;
	ScipisReadCtx ctx;
	scipis_am_blob *blob = NULL;
	scipis_am_stats stats;
	scipis_error err;
	scipis_am_segment fresh = {0};
	uint64		consumed,
				consumed_bytes = 0;
	uint32		i;
	Buffer		metabuf;
	GenericXLogState *state;
	ScipisMeta *m;
	BlockNumber blk;

	if (locked)
		;
	else if (wait)
		LockPage(index, SCIPIS_LOCK_MERGE, ExclusiveLock);
	else if (!ConditionalLockPage(index, SCIPIS_LOCK_MERGE, ExclusiveLock))
		return false;

	scipis_am_read_meta(index, &meta);
	if (which == MERGE_BY_POLICY)
		choose_for_flush(&meta, take);
	else
		for (i = 0; i < meta.nsegments; i++)
			take[i] = (int64) meta.segments[i].id == which;
	for (i = 0; i < meta.nsegments; i++)
		if (take[i])
			chosen[nchosen++] = meta.segments[i];
	scipis_am_view_read(index, &meta, &view, &end_block, &end_item);
	if (!fold_pending)
		view.npending = 0;
	consumed = view.npending;
	for (i = 0; i < view.npending; i++)
		consumed_bytes += view.pending_len[i];
	view.segs = chosen;
	view.nsegs = nchosen;
	if (nchosen == 0 && consumed == 0)
	{
		if (unlock)
			UnlockPage(index, SCIPIS_LOCK_MERGE, ExclusiveLock);
		return true;
	}

	scipis_am_reader_init(&rd, &ctx, index);
	if (scipis_am_merge(&view, &rd, dead, ndead, &blob, &stats, &err) != 0)
		scipis_am_fail(&ctx, &err, index);
	if (blob)
	{
		fresh.id = meta.next_segment_id;
		scipis_am_write_blob(index, &fresh, blob, false);
	}

	/* Publish. */
	LockPage(index, SCIPIS_LOCK_APPEND, ExclusiveLock);
	LockPage(index, SCIPIS_LOCK_VIEW, ExclusiveLock);
	metabuf = ReadBuffer(index, SCIPIS_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(index);
	m = ScipisPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
	{
		uint32		kept = 0;
		bool		placed = false;

		for (i = 0; i < m->nsegments; i++)
		{
			bool		gone = false;
			int			c;

			for (c = 0; c < nchosen; c++)
				if (chosen[c].id == m->segments[i].id)
					gone = true;
			if (!gone)
				m->segments[kept++] = m->segments[i];
			else
			{
				scipis_am_free_pages(index, m, m->segments[i].start, m->segments[i].npages);
				/* A segment rewritten alone keeps its place. */
				if (blob && which >= 0 && !placed)
				{
					m->segments[kept++] = fresh;
					placed = true;
				}
			}
		}
		m->nsegments = kept;
		if (blob && !placed)
			m->segments[m->nsegments++] = fresh;
		if (blob)
			m->next_segment_id = fresh.id + 1;
	}
	if (consumed > 0)
	{
		/* Pages before the one holding the last consumed item are freed. */
		blk = m->pending_head;
		while (blk != end_block)
		{
			Buffer		buf = ReadBuffer(index, blk);
			BlockNumber next;

			LockBuffer(buf, BUFFER_LOCK_SHARE);
			next = ScipisPageGetOpaque(BufferGetPage(buf))->aux;
			UnlockReleaseBuffer(buf);
			scipis_am_free_pages(index, m, blk, 1);
			m->pending_pages--;
			blk = next;
		}
		m->pending_entries -= consumed;
		m->pending_bytes -= consumed_bytes;
		if (m->pending_entries == 0 && m->pending_tail == end_block)
		{
			/* Everything consumed: the last page goes too. */
			scipis_am_free_pages(index, m, end_block, 1);
			m->pending_pages--;
			m->pending_head = m->pending_tail = InvalidBlockNumber;
			m->pending_skip = 0;
		}
		else
		{
			m->pending_head = end_block;
			m->pending_skip = end_item;
		}
	}
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
	UnlockPage(index, SCIPIS_LOCK_VIEW, ExclusiveLock);
	UnlockPage(index, SCIPIS_LOCK_APPEND, ExclusiveLock);
	if (unlock)
		UnlockPage(index, SCIPIS_LOCK_MERGE, ExclusiveLock);
	return true;
}

bool
scipis_am_flush_pending(Relation index, bool wait)
{
	return merge(index, wait, NULL, 0, MERGE_BY_POLICY, true, false, true);
}

/*
 * VACUUM, holding SCIPIS_LOCK_MERGE since it read the rows (released here):
 * folds the pending list, then rewrites the segments flagged in rewrite one
 * at a time, each published before the next is read: a rewrite holds one
 * segment in memory and the pages each frees are there for the next, so
 * the index grows by about one segment, not by all it rewrites. Nothing
 * else merges meanwhile, so no dead row escapes into another segment.
 */
void
scipis_am_merge_vacuum(Relation index, const uint64 *dead, size_t ndead, const bool *rewrite)
{
	ScipisMeta	meta;
	uint32		ids[SCIPIS_MAX_SEGMENTS];
	uint32		n = 0,
				i;

	scipis_am_read_meta(index, &meta);
	for (i = 0; i < meta.nsegments; i++)
		if (rewrite[i])
			ids[n++] = meta.segments[i].id;
	merge(index, true, dead, ndead, MERGE_NO_SEGMENT, true, true, n == 0);
	for (i = 0; i < n; i++)
		merge(index, true, dead, ndead, (int64) ids[i], false, true, i + 1 == n);
}
