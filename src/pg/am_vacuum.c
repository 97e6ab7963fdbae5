/*
 * VACUUM: every entry's row is checked against the dead set; segments
 * holding a dead row are rewritten without it (with the pending list), so
 * N, df and avgdl count exactly the rows VACUUM has left.
 */
#include "am.h"

#include "access/table.h"
#include "access/visibilitymap.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "storage/lmgr.h"

#include "scipis_pg.h"

static int
cmp_u64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

typedef struct DeadList
{
	uint64	   *keys;
	size_t		n,
				cap;
} DeadList;

static bool
check_row(uint64 key, IndexBulkDeleteCallback callback, void *state, DeadList *dead)
{
	ItemPointerData tid;

	scipis_am_key_tid(key, &tid);
	if (!callback(&tid, state))
		return false;
	if (dead->n == dead->cap)
	{
		dead->cap = dead->cap ? dead->cap * 2 : 1024;
		dead->keys = dead->keys ? repalloc_huge(dead->keys, dead->cap * sizeof(uint64))
			: palloc_extended(dead->cap * sizeof(uint64), MCXT_ALLOC_HUGE);
	}
	dead->keys[dead->n++] = key;
	return true;
}

/*
 * Removes the entries whose rows callback calls dead. With min_entries,
 * only when the index holds more entries than that (else nothing is read).
 */
static IndexBulkDeleteResult *
delete_where(Relation index, IndexBulkDeleteResult *stats, IndexBulkDeleteCallback callback,
			 void *state, double min_entries)
{
	ScipisMeta	meta;
	bool		rewrite[SCIPIS_MAX_SEGMENTS] = {0};
	bool		any = false;
	DeadList	dead = {0};
	scipis_am_reader rd;
	ScipisReadCtx ctx;
	scipis_am_view view;
	double		entries = 0;
	uint32		i;
	uint64		p;

	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));

	/* No merge may move rows between segments while the dead set is built. */
	LockPage(index, SCIPIS_LOCK_MERGE, ExclusiveLock);
	scipis_am_read_meta(index, &meta);
	scipis_am_reader_init(&rd, &ctx, index);
	if (min_entries >= 0)
	{
		double		held = meta.pending_entries;

		for (i = 0; i < meta.nsegments; i++)
		{
			scipis_am_stats s;
			scipis_error err;

			if (scipis_am_segment_stats(&rd, &meta.segments[i], &s, &err) != 0)
				scipis_am_fail(&ctx, &err, index);
			held += s.entries;
		}
		if (held <= min_entries)
		{
			UnlockPage(index, SCIPIS_LOCK_MERGE, ExclusiveLock);
			return stats;
		}
	}
	for (i = 0; i < meta.nsegments; i++)
	{
		uint64	   *tids;
		size_t		n,
					j;
		scipis_error err;

		if (scipis_am_segment_tids(&rd, &meta.segments[i], &tids, &n, &err) != 0)
			scipis_am_fail(&ctx, &err, index);
		for (j = 0; j < n; j++)
		{
			vacuum_delay_point();
			if (check_row(tids[j], callback, state, &dead))
				rewrite[i] = true;
		}
		entries += n;
		free(tids);
		any |= rewrite[i];
	}
	scipis_am_view_read(index, &meta, &view, NULL, NULL);
	for (p = 0; p < view.npending; p++)
	{
		uint64		key;
		scipis_error err;

		if (scipis_am_entry_tid(view.pending[p], view.pending_len[p], &key, &err) != 0)
			scipis_am_fail(NULL, &err, index);
		if (check_row(key, callback, state, &dead))
			any = true;
	}
	entries += view.npending;

	if (any)
	{
		qsort(dead.keys, dead.n, sizeof(uint64), cmp_u64);
		scipis_am_merge_vacuum(index, dead.keys, dead.n, rewrite);
	}
	else
		UnlockPage(index, SCIPIS_LOCK_MERGE, ExclusiveLock);
	stats->tuples_removed += dead.n;
	stats->num_index_tuples = entries - dead.n;
	stats->num_pages = RelationGetNumberOfBlocks(index);
	return stats;
}

IndexBulkDeleteResult *
scipis_am_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
					 IndexBulkDeleteCallback callback, void *state)
{
	return delete_where(info->index, stats, callback, state, -1);
}

/* The heap line pointer of a row, looked up a page at a time. */
typedef struct HeapProbe
{
	Relation	heap;
	BlockNumber nblocks;
	BlockNumber blk;
	Buffer		buf;
	Buffer		vmbuf;
	bool		all_visible;
	BufferAccessStrategy strategy;
} HeapProbe;

/* Dead: the row's line pointer is dead or unused (its tuple is gone). */
static bool
row_is_gone(ItemPointer tid, void *arg)
{
	HeapProbe  *p = (HeapProbe *) arg;
	BlockNumber blk = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Page		page;
	bool		gone;

	if (blk >= p->nblocks)
		return false;			/* a page added since: not ours to judge */
	if (p->blk != blk)
	{
		if (BufferIsValid(p->buf))
			ReleaseBuffer(p->buf);
		p->buf = InvalidBuffer;
		p->blk = blk;
		/* VACUUM marks a page all-visible only once no dead line pointer is left. */
		p->all_visible = (visibilitymap_get_status(p->heap, blk, &p->vmbuf) &
						  VISIBILITYMAP_ALL_VISIBLE) != 0;
		if (!p->all_visible)
			p->buf = ReadBufferExtended(p->heap, MAIN_FORKNUM, blk, RBM_NORMAL, p->strategy);
	}
	if (p->all_visible)
		return false;
	LockBuffer(p->buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(p->buf);
	gone = off > PageGetMaxOffsetNumber(page) || !ItemIdIsUsed(PageGetItemId(page, off)) ||
		ItemIdIsDead(PageGetItemId(page, off));
	LockBuffer(p->buf, BUFFER_LOCK_UNLOCK);
	return gone;
}

IndexBulkDeleteResult *
scipis_am_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	index = info->index;
	ScipisMeta	meta;
	uint32		i;
	double		free_pages = 0;

	if (info->analyze_only && !IsAutoVacuumWorkerProcess())
		return stats;
	/*
	 * A VACUUM that skipped the index pass (few dead rows: PostgreSQL's
	 * bypass) left their entries; while the index holds more entries than
	 * the table has rows, the rows whose line pointers are dead go now, so
	 * that N, df and avgdl count the live rows after any VACUUM.
	 */
	if (stats == NULL && !info->analyze_only)
	{
		HeapProbe	probe;

		probe.heap = table_open(index->rd_index->indrelid, NoLock);
		probe.nblocks = RelationGetNumberOfBlocks(probe.heap);
		probe.blk = InvalidBlockNumber;
		probe.buf = InvalidBuffer;
		probe.vmbuf = InvalidBuffer;
		probe.strategy = info->strategy;
		/* An exact row count tells at once whether any entry is left over. */
		stats = delete_where(index, NULL, row_is_gone, &probe,
							 info->estimated_count ? -1 : info->num_heap_tuples);
		if (BufferIsValid(probe.buf))
			ReleaseBuffer(probe.buf);
		if (BufferIsValid(probe.vmbuf))
			ReleaseBuffer(probe.vmbuf);
		table_close(probe.heap, NoLock);
	}
	/* Like GIN: VACUUM also empties the pending list. */
	scipis_am_flush_pending(index, true);
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	scipis_am_read_meta(index, &meta);
	if (stats->num_index_tuples == 0)
	{
		scipis_am_reader rd;
		ScipisReadCtx ctx;
		double		entries = 0;

		scipis_am_reader_init(&rd, &ctx, index);
		for (i = 0; i < meta.nsegments; i++)
		{
			scipis_am_stats s;
			scipis_error err;

			if (scipis_am_segment_stats(&rd, &meta.segments[i], &s, &err) != 0)
				scipis_am_fail(&ctx, &err, index);
			entries += s.entries;
		}
		stats->num_index_tuples = entries + meta.pending_entries;
	}
	for (i = 0; i < meta.nfree; i++)
		free_pages += meta.free[i].npages;
	stats->num_pages = RelationGetNumberOfBlocks(index);
	stats->pages_free = free_pages;
	stats->estimated_count = false;
	return stats;
}
