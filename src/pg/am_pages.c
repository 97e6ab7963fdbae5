/*
 * Pages of a scipis index: the metapage, segment pages read for the engine
 * (checked, copied, never held), the pending list and page allocation.
 */
#include "am.h"

#include "access/genam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/bufpage.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"
#include "utils/memutils.h"

#include "scipis_pg.h"

uint64
scipis_am_tid_key(ItemPointer tid)
{
	return ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);
}

void
scipis_am_key_tid(uint64 key, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (key >> 16), (OffsetNumber) (key & 0xffff));
}

static pg_crc32c
segment_page_crc(const ScipisPageOpaque *op, const char *payload)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &op->owner, sizeof(op->owner));
	COMP_CRC32C(crc, &op->aux, sizeof(op->aux));
	COMP_CRC32C(crc, payload, SCIPIS_PAYLOAD);
	FIN_CRC32C(crc);
	return crc;
}

static bool
page_has_opaque(Page page)
{
	return !PageIsNew(page) &&
		PageGetSpecialSize(page) == MAXALIGN(sizeof(ScipisPageOpaque));
}

static void
damaged(Relation index, BlockNumber blk, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("scipis index \"%s\" is damaged: block %u %s",
					RelationGetRelationName(index), blk, why),
			 errhint("REINDEX the index.")));
}

/*
 * The engine's page callback. Errors are raised here, inside PG_TRY, and
 * kept for scipis_am_fail to raise again once the engine has returned.
 */
static int
read_segment_page(void *vctx, const scipis_am_segment *seg, uint32_t pageno,
				  unsigned char *dst, scipis_error *err)
{
	ScipisReadCtx *ctx = (ScipisReadCtx *) vctx;
	MemoryContext old = CurrentMemoryContext;
	volatile int rc = 0;

	PG_TRY();
	{
		BlockNumber blk = seg->start + pageno;
		Buffer		buf;
		Page		page;
		ScipisPageOpaque *op;
		const char *problem = NULL;
		bool		moved = false;

		CHECK_FOR_INTERRUPTS();
		/* Asked again only past the known end: each ask is an lseek. */
		if (blk >= ctx->nblocks)
			ctx->nblocks = RelationGetNumberOfBlocks(ctx->index);
		if (pageno >= seg->npages || blk < seg->start || blk >= ctx->nblocks)
			damaged(ctx->index, blk, "is outside its segment");
		buf = ReadBuffer(ctx->index, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		op = ScipisPageGetOpaque(page);
		if (!page_has_opaque(page))
			problem = "is not a scipis page";
		else if (op->type != SCIPIS_PAGE_SEGMENT || op->owner != seg->id)
			moved = true;
		else if (op->aux != pageno)
			problem = "is out of place in its segment";
		else
		{
			memcpy(dst, PageGetContents(page), SCIPIS_PAYLOAD);
			if (segment_page_crc(op, (const char *) dst) != op->crc)
				problem = "fails its checksum";
		}
		UnlockReleaseBuffer(buf);
		if (moved)
		{
			/* Only a standby, which takes no lock against a merge, gets here. */
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("scipis index \"%s\" was merged while it was read",
							RelationGetRelationName(ctx->index)),
					 errhint("Run the statement again.")));
		}
		if (problem)
			damaged(ctx->index, blk, problem);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(ctx->cxt);
		if (ctx->saved == NULL)
			ctx->saved = CopyErrorData();
		FlushErrorState();
		MemoryContextSwitchTo(old);
		err->code = SCIPIS_E_IO;
		strlcpy(err->message, "page read failed", sizeof(err->message));
		rc = -1;
	}
	PG_END_TRY();
	return rc;
}

void
scipis_am_reader_init(scipis_am_reader *rd, ScipisReadCtx *ctx, Relation index)
{
	ctx->index = index;
	ctx->cxt = CurrentMemoryContext;
	ctx->saved = NULL;
	ctx->nblocks = 0;
	rd->ctx = ctx;
	/*
	 * A new file number for every build, REINDEX and TRUNCATE; with the
	 * segment's id (never reused within a file), start and length, a page's
	 * name in the cache never names other bytes.
	 */
	rd->cache_rel[0] = index->rd_node.spcNode;
	rd->cache_rel[1] = index->rd_node.dbNode;
	rd->cache_rel[2] = index->rd_node.relNode;
	rd->payload = SCIPIS_PAYLOAD;
	rd->read_page = read_segment_page;
}

/* Raises the error an engine call returned, naming the index. */
void
scipis_am_fail(ScipisReadCtx *ctx, const scipis_error *err, Relation index)
{
	if (ctx && ctx->saved)
		ReThrowError(ctx->saved);
	if (err->code == SCIPIS_E_CORRUPT)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("scipis index \"%s\" is damaged: %s",
						RelationGetRelationName(index), err->message),
				 errhint("REINDEX the index.")));
	scipis_raise(err);
}

void
scipis_am_init_metapage(Page page, const unsigned char delimiter[256])
{
	ScipisMeta *meta;

	PageInit(page, BLCKSZ, sizeof(ScipisPageOpaque));
	ScipisPageGetOpaque(page)->type = SCIPIS_PAGE_META;
	meta = ScipisPageGetMeta(page);
	memset(meta, 0, sizeof(ScipisMeta));
	meta->magic = SCIPIS_AM_MAGIC;
	meta->version = SCIPIS_AM_VERSION;
	memcpy(meta->delimiter, delimiter, 256);
	meta->next_segment_id = 1;
	meta->pending_head = InvalidBlockNumber;
	meta->pending_tail = InvalidBlockNumber;
	((PageHeader) page)->pd_lower = ((char *) meta + sizeof(ScipisMeta)) - (char *) page;
}

static void
check_meta(Relation index, Page page)
{
	ScipisMeta *meta = ScipisPageGetMeta(page);

	if (!page_has_opaque(page) || ScipisPageGetOpaque(page)->type != SCIPIS_PAGE_META ||
		meta->magic != SCIPIS_AM_MAGIC)
		damaged(index, SCIPIS_METAPAGE_BLKNO, "is not a scipis metapage");
	if (meta->version != SCIPIS_AM_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("scipis index \"%s\" has format version %u, this build reads version %u",
						RelationGetRelationName(index), meta->version, SCIPIS_AM_VERSION),
				 errhint("REINDEX the index.")));
	if (meta->nsegments > SCIPIS_MAX_SEGMENTS || meta->nfree > SCIPIS_MAX_FREE)
		damaged(index, SCIPIS_METAPAGE_BLKNO, "has counts out of range");
}

void
scipis_am_read_meta(Relation index, ScipisMeta *meta)
{
	Buffer		buf;
	Page		page;

	if (RelationGetNumberOfBlocks(index) == 0)
		damaged(index, SCIPIS_METAPAGE_BLKNO, "is missing");
	buf = ReadBuffer(index, SCIPIS_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	PG_TRY();
	{
		check_meta(index, page);
	}
	PG_FINALLY();
	{
		if (!PageIsNew(page))
			memcpy(meta, ScipisPageGetMeta(page), sizeof(ScipisMeta));
		UnlockReleaseBuffer(buf);
	}
	PG_END_TRY();
}

/*
 * The meta's pending entries, read from the list. end_block/end_item get
 * the last item of the last entry read (what a merge consumes).
 */
void
scipis_am_view_read(Relation index, const ScipisMeta *meta, scipis_am_view *view,
					BlockNumber *end_block, OffsetNumber *end_item)
{
	uint64		want = meta->pending_entries;
	unsigned char **entries = NULL;
	uint32	   *lens = NULL;
	uint64		have = 0;
	StringInfoData cur;
	bool		in_entry = false;
	BlockNumber blk = meta->pending_head;
	uint32		skip = meta->pending_skip;
	BlockNumber nblocks = RelationGetNumberOfBlocks(index);
	uint64		pages = 0;

	view->segs = meta->segments;
	view->nsegs = (int) meta->nsegments;
	if (end_block)
		*end_block = InvalidBlockNumber;
	if (end_item)
		*end_item = InvalidOffsetNumber;
	if (want > 0)
	{
		if (want > MaxAllocSize / sizeof(void *))
			damaged(index, SCIPIS_METAPAGE_BLKNO, "counts too many pending entries");
		entries = palloc(sizeof(unsigned char *) * want);
		lens = palloc(sizeof(uint32) * want);
	}
	initStringInfo(&cur);
	while (have < want)
	{
		Buffer		buf;
		Page		page;
		OffsetNumber maxoff,
					off;
		BlockNumber next;

		CHECK_FOR_INTERRUPTS();
		if (blk == InvalidBlockNumber || blk == SCIPIS_METAPAGE_BLKNO || blk >= nblocks ||
			++pages > nblocks)
			damaged(index, blk, "ends the pending list early");
		buf = ReadBuffer(index, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!page_has_opaque(page) || ScipisPageGetOpaque(page)->type != SCIPIS_PAGE_PENDING)
		{
			UnlockReleaseBuffer(buf);
			damaged(index, blk, "is not a pending-list page");
		}
		maxoff = PageGetMaxOffsetNumber(page);
		for (off = FirstOffsetNumber + skip; off <= maxoff && have < want; off++)
		{
			ItemId		iid = PageGetItemId(page, off);
			const char *item = (const char *) PageGetItem(page, iid);
			uint16		ilen = ItemIdGetLength(iid);
			uint8		flags;

			if (!ItemIdIsNormal(iid) || ilen < 1)
			{
				UnlockReleaseBuffer(buf);
				damaged(index, blk, "has a bad pending item");
			}
			flags = (uint8) item[0];
			/* A chunk run that never ended is what a crash left: dropped. */
			if (flags & SCIPIS_CHUNK_FIRST)
			{
				resetStringInfo(&cur);
				in_entry = true;
			}
			if (!in_entry)
				continue;
			appendBinaryStringInfo(&cur, item + 1, ilen - 1);
			if (flags & SCIPIS_CHUNK_LAST)
			{
				entries[have] = palloc(cur.len);
				memcpy(entries[have], cur.data, cur.len);
				lens[have] = cur.len;
				have++;
				in_entry = false;
				if (end_block)
					*end_block = blk;
				if (end_item)
					*end_item = off;
			}
		}
		next = ScipisPageGetOpaque(page)->aux;
		UnlockReleaseBuffer(buf);
		skip = 0;
		if (have < want)
			blk = next;
	}
	pfree(cur.data);
	view->pending = (const unsigned char *const *) entries;
	view->pending_len = lens;
	view->npending = have;
}

static void
add_free_extent(ScipisMeta *meta, BlockNumber start, uint32 npages)
{
	uint32		i;

	if (npages == 0)
		return;
	for (i = 0; i < meta->nfree; i++)
	{
		ScipisExtent *e = &meta->free[i];

		if (e->start + e->npages == start)
		{
			e->npages += npages;
			return;
		}
		if (start + npages == e->start)
		{
			e->start = start;
			e->npages += npages;
			return;
		}
	}
	if (meta->nfree < SCIPIS_MAX_FREE)
	{
		meta->free[meta->nfree].start = start;
		meta->free[meta->nfree].npages = npages;
		meta->nfree++;
	}
	else
		meta->leaked_pages += npages;
}

/* Into meta (being changed under the caller's generic WAL record). */
void
scipis_am_free_pages(Relation index, ScipisMeta *meta, BlockNumber start, uint32 npages)
{
	add_free_extent(meta, start, npages);
}

/* Gives a free extent back (one a tail allocation took but could not use). */
static void
return_extent(Relation index, BlockNumber start, uint32 npages)
{
	Buffer		metabuf = ReadBuffer(index, SCIPIS_METAPAGE_BLKNO);
	GenericXLogState *state;

	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	check_meta(index, BufferGetPage(metabuf));
	state = GenericXLogStart(index);
	add_free_extent(ScipisPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0)), start, npages);
	GenericXLogFinish(state);
	UnlockReleaseBuffer(metabuf);
}

/*
 * npages consecutive blocks: the smallest free extent that fits (the large
 * ones stay for large segments), else the free extent that ends the
 * relation, if any, and new blocks after it, else new blocks only. A VACUUM
 * that rewrites segments one after another then grows the index by little
 * more than the largest of them.
 */
BlockNumber
scipis_am_alloc_pages(Relation index, uint32 npages)
{
	Buffer		metabuf;
	Page		page;
	ScipisMeta *meta;
	BlockNumber start = InvalidBlockNumber,
				nblocks;
	BlockNumber tail_start = InvalidBlockNumber;
	uint32		tail_pages = 0;
	int			best = -1,
				tail = -1;
	uint32		i;

	metabuf = ReadBuffer(index, SCIPIS_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(metabuf);
	check_meta(index, page);
	meta = ScipisPageGetMeta(page);
	nblocks = RelationGetNumberOfBlocks(index);
	for (i = 0; i < meta->nfree; i++)
	{
		if (meta->free[i].npages >= npages &&
			(best < 0 || meta->free[i].npages < meta->free[best].npages))
			best = (int) i;
		if (meta->free[i].start + meta->free[i].npages == nblocks)
			tail = (int) i;
	}
	if (best >= 0 || tail >= 0)
	{
		GenericXLogState *state = GenericXLogStart(index);
		ScipisMeta *m = ScipisPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		ScipisExtent *e = &m->free[best >= 0 ? best : tail];

		if (best >= 0)
		{
			start = e->start;
			e->start += npages;
			e->npages -= npages;
		}
		else
		{
			tail_start = e->start;
			tail_pages = e->npages;
			e->npages = 0;
		}
		if (e->npages == 0)
			*e = m->free[--m->nfree];
		GenericXLogFinish(state);
	}
	UnlockReleaseBuffer(metabuf);
	if (start != InvalidBlockNumber)
		return start;

	LockRelationForExtension(index, ExclusiveLock);
	nblocks = RelationGetNumberOfBlocks(index);
	/* Nobody extended the relation since: the tail extent still ends it. */
	if (tail_pages > 0 && tail_start + tail_pages == nblocks)
	{
		start = tail_start;
		tail_pages = 0;
	}
	for (i = nblocks - (start == InvalidBlockNumber ? nblocks : start); i < npages; i++)
	{
		Buffer		buf = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

		if (start == InvalidBlockNumber)
			start = BufferGetBlockNumber(buf);
		ReleaseBuffer(buf);
	}
	UnlockRelationForExtension(index, ExclusiveLock);
	if (tail_pages > 0)
		return_extent(index, tail_start, tail_pages);
	return start;
}

void
scipis_am_fill_segment_page(Page page, uint32 id, uint32 pageno, const unsigned char *data,
							size_t len)
{
	ScipisPageOpaque *op;

	Assert(len <= SCIPIS_PAYLOAD);
	PageInit(page, BLCKSZ, sizeof(ScipisPageOpaque));
	memcpy(PageGetContents(page), data, len);
	((PageHeader) page)->pd_lower = (PageGetContents(page) - (char *) page) + len;
	op = ScipisPageGetOpaque(page);
	op->type = SCIPIS_PAGE_SEGMENT;
	op->owner = id;
	op->aux = pageno;
	op->crc = segment_page_crc(op, PageGetContents(page));
}

/*
 * CREATE INDEX's pages, appended straight to the relation's file as
 * nbtree's sorted build does: no shared buffer per page and no second
 * write of each at the next checkpoint. Each batch is WAL-logged before it
 * is written; the file's writeback starts at once, and scipis_ambuild
 * syncs it at the end (a checkpoint knows nothing of these pages).
 */
static BlockNumber
write_bulk(Relation index, uint32 id, const unsigned char *data, size_t len, uint32 npages)
{
	enum
	{
		BATCH = 32
	};
	PGAlignedBlock *bufs = palloc(sizeof(PGAlignedBlock) * BATCH);
	BlockNumber blknos[BATCH];
	Page		pages[BATCH];
	BlockNumber start = smgrnblocks(RelationGetSmgr(index), MAIN_FORKNUM);
	uint32		i,
				j,
				n;

	for (i = 0; i < npages; i += n)
	{
		n = Min(BATCH, npages - i);
		CHECK_FOR_INTERRUPTS();
		for (j = 0; j < n; j++)
		{
			size_t		off = (size_t) (i + j) * SCIPIS_PAYLOAD;

			pages[j] = (Page) bufs[j].data;
			blknos[j] = start + i + j;
			scipis_am_fill_segment_page(pages[j], id, i + j, data + off, Min(SCIPIS_PAYLOAD, len - off));
		}
		if (RelationNeedsWAL(index))
			log_newpages(&RelationGetSmgr(index)->smgr_rnode.node, MAIN_FORKNUM, (int) n, blknos,
						 pages, true);
		for (j = 0; j < n; j++)
		{
			PageSetChecksumInplace(pages[j], blknos[j]);
			smgrextend(RelationGetSmgr(index), MAIN_FORKNUM, blknos[j], (char *) pages[j], true);
		}
	}
	smgrwriteback(RelationGetSmgr(index), MAIN_FORKNUM, start, npages);
	pfree(bufs);
	return start;
}

/*
 * Writes a segment's bytes into newly allocated pages; seg->id is set by the
 * caller. bulk: CREATE INDEX (write_bulk); otherwise each page is logged
 * whole as it is written.
 */
void
scipis_am_write_segment(Relation index, scipis_am_segment *seg, const unsigned char *data,
						size_t len, bool bulk)
{
	uint64		npages = (len + SCIPIS_PAYLOAD - 1) / SCIPIS_PAYLOAD;
	BlockNumber start;
	uint32		i;

	if (npages == 0 || npages > MaxBlockNumber / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("scipis segment of %zu bytes does not fit in an index", len)));
	if (bulk)
		start = write_bulk(index, seg->id, data, len, (uint32) npages);
	else
	{
		start = scipis_am_alloc_pages(index, (uint32) npages);
		for (i = 0; i < npages; i++)
		{
			Buffer		buf = ReadBuffer(index, start + i);
			GenericXLogState *state;
			Page		page;

			CHECK_FOR_INTERRUPTS();
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			state = GenericXLogStart(index);
			page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
			scipis_am_fill_segment_page(page, seg->id, i,
										data + (size_t) i * SCIPIS_PAYLOAD,
										Min(SCIPIS_PAYLOAD, len - (size_t) i * SCIPIS_PAYLOAD));
			GenericXLogFinish(state);
			UnlockReleaseBuffer(buf);
		}
	}
	seg->start = start;
	seg->npages = (uint32) npages;
	seg->bytes = len;
}

static void
init_pending_page(Page page)
{
	PageInit(page, BLCKSZ, sizeof(ScipisPageOpaque));
	ScipisPageGetOpaque(page)->type = SCIPIS_PAGE_PENDING;
	ScipisPageGetOpaque(page)->aux = InvalidBlockNumber;
}

/*
 * Appends one entry to the pending list, in chunks of at most a page. The
 * metapage counts the entry only with its last chunk, so a reader (or a
 * crash) never sees half of it.
 */
void
scipis_am_append(Relation index, const unsigned char *entry, size_t len)
{
	size_t		off = 0;
	bool		first = true;

	LockPage(index, SCIPIS_LOCK_APPEND, ExclusiveLock);
	while (first || off < len)
	{
		size_t		n = Min(len - off, SCIPIS_CHUNK_MAX);
		bool		last = off + n == len;
		Size		itemsz = 1 + n;
		char	   *item = palloc(itemsz);
		ScipisMeta	meta;
		Buffer		tailbuf = InvalidBuffer,
					newbuf = InvalidBuffer,
					metabuf;
		BlockNumber newblk = InvalidBlockNumber;
		GenericXLogState *state;
		Page		target;
		ScipisMeta *m;

		item[0] = (first ? SCIPIS_CHUNK_FIRST : 0) | (last ? SCIPIS_CHUNK_LAST : 0);
		memcpy(item + 1, entry + off, n);
		scipis_am_read_meta(index, &meta);
		if (meta.pending_tail != InvalidBlockNumber)
		{
			tailbuf = ReadBuffer(index, meta.pending_tail);
			LockBuffer(tailbuf, BUFFER_LOCK_EXCLUSIVE);
			if (!page_has_opaque(BufferGetPage(tailbuf)) ||
				ScipisPageGetOpaque(BufferGetPage(tailbuf))->type != SCIPIS_PAGE_PENDING)
				damaged(index, meta.pending_tail, "is not a pending-list page");
			if (PageGetFreeSpace(BufferGetPage(tailbuf)) < MAXALIGN(itemsz))
			{
				/* Locks the metapage: pages are locked before it, always. */
				newblk = scipis_am_alloc_pages(index, 1);
			}
		}
		else
			newblk = scipis_am_alloc_pages(index, 1);
		if (newblk != InvalidBlockNumber)
		{
			newbuf = ReadBuffer(index, newblk);
			LockBuffer(newbuf, BUFFER_LOCK_EXCLUSIVE);
		}
		metabuf = ReadBuffer(index, SCIPIS_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);

		state = GenericXLogStart(index);
		m = ScipisPageGetMeta(GenericXLogRegisterBuffer(state, metabuf, 0));
		if (newblk != InvalidBlockNumber)
		{
			target = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
			init_pending_page(target);
			if (BufferIsValid(tailbuf))
				ScipisPageGetOpaque(GenericXLogRegisterBuffer(state, tailbuf, 0))->aux = newblk;
			else
			{
				m->pending_head = newblk;
				m->pending_skip = 0;
			}
			m->pending_tail = newblk;
			m->pending_pages++;
		}
		else
			target = GenericXLogRegisterBuffer(state, tailbuf, 0);
		if (PageAddItem(target, (Item) item, itemsz, InvalidOffsetNumber, false, false) ==
			InvalidOffsetNumber)
			elog(ERROR, "could not add a pending item to scipis index \"%s\"",
				 RelationGetRelationName(index));
		if (last)
		{
			m->pending_entries++;
			m->pending_bytes += len;
		}
		GenericXLogFinish(state);
		UnlockReleaseBuffer(metabuf);
		if (BufferIsValid(newbuf))
			UnlockReleaseBuffer(newbuf);
		if (BufferIsValid(tailbuf))
			UnlockReleaseBuffer(tailbuf);
		pfree(item);
		off += n;
		first = false;
	}
	UnlockPage(index, SCIPIS_LOCK_APPEND, ExclusiveLock);
}

/* scipis_am_write_segment of an engine blob, which is freed whatever happens. */
void
scipis_am_write_blob(Relation index, scipis_am_segment *seg, scipis_am_blob *blob, bool bulk)
{
	size_t		len;
	const unsigned char *data = scipis_am_blob_data(blob, &len);

	PG_TRY();
	{
		scipis_am_write_segment(index, seg, data, len, bulk);
	}
	PG_FINALLY();
	{
		scipis_am_blob_free(blob);
	}
	PG_END_TRY();
}
