/*
 * CREATE INDEX: the heap scan feeds the engine's indexer threads (this
 * thread scans and detoasts; they tokenize, count and serialise), and
 * finished segments are appended to the relation's file and WAL-logged as
 * they come (write_bulk), the metapage last.
 */
#include "am.h"

#include "access/tableam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"

#include "scipis_pg.h"

typedef struct BuildState
{
	Relation	index;
	scipis_am_build *build;
	ScipisMeta *meta;			/* the metapage being filled */
	double		tuples;
	MemoryContext tmp;
} BuildState;

static void
fail_build(const scipis_error *err, Relation index)
{
	scipis_am_fail(NULL, err, index);
}

static void
write_taken(BuildState *st, scipis_am_blob *blob)
{
	ScipisMeta *meta = st->meta;
	scipis_am_segment seg = {0};
	if (meta->nsegments >= SCIPIS_MAX_SEGMENTS)
	{
		scipis_am_blob_free(blob);
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("scipis index \"%s\" would need more than %d segments",
						RelationGetRelationName(st->index), SCIPIS_MAX_SEGMENTS),
				 errhint("Give the build more memory: raise maintenance_work_mem or the index option tfidf_index_size.")));
	}
	seg.id = meta->next_segment_id++;
	scipis_am_write_blob(st->index, &seg, blob, true);
	meta->segments[meta->nsegments++] = seg;
}

/* Takes what the indexers have finished; returns the take's status. */
static int
take_some(BuildState *st, int timeout_ms)
{
	scipis_am_blob *blob;
	scipis_error err;
	int			r;

	CHECK_FOR_INTERRUPTS();
	r = scipis_am_build_take(st->build, timeout_ms, &blob, &err);
	if (r < 0)
		fail_build(&err, st->index);
	if (r == 1)
		write_taken(st, blob);
	return r;
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *st = (BuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(st->tmp);
	const char *data = NULL;
	size_t		len = 0;
	scipis_error err;
	int			r;
	uint64		keys[SCIPIS_MAX_VALS];
	unsigned char nulls[SCIPIS_MAX_VALS];
	scipis_am_vals vals;

	scipis_am_row_vals(index, values, isnull, keys, nulls, &vals);
	if (!isnull[0])
	{
		text	   *t = DatumGetTextPP(values[0]);

		data = VARDATA_ANY(t);
		len = VARSIZE_ANY_EXHDR(t);
	}
	while ((r = scipis_am_build_add(st->build, scipis_am_tid_key(tid), data, len, isnull[0],
									&vals, &err)) == 1)
		take_some(st, 10);
	if (r < 0)
		fail_build(&err, st->index);
	st->tuples += 1;
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->tmp);
}

IndexBuildResult *
scipis_ambuild(Relation heap, Relation index, IndexInfo *info)
{
	IndexBuildResult *result;
	BuildState	st;
	unsigned char delimiter[256];
	scipis_error err;
	Buffer		metabuf;
	volatile double reltuples = 0;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data", RelationGetRelationName(index));
	scipis_am_check_columns(index);
	scipis_am_delimiters(index, delimiter);

	memset(&st, 0, sizeof(st));
	st.index = index;
	st.tmp = AllocSetContextCreate(CurrentMemoryContext, "scipis build tuple",
								   ALLOCSET_DEFAULT_SIZES);
	/* Block 0 is the metapage; it is filled at the end (no lock held meanwhile). */
	metabuf = ReadBufferExtended(index, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	Assert(BufferGetBlockNumber(metabuf) == SCIPIS_METAPAGE_BLKNO);
	ReleaseBuffer(metabuf);
	{
		PGAlignedBlock scratch;

		scipis_am_init_metapage(scratch.data, delimiter);
		st.meta = palloc(sizeof(ScipisMeta));
		memcpy(st.meta, ScipisPageGetMeta(scratch.data), sizeof(ScipisMeta));
	}

	st.build = scipis_am_build_start(delimiter, scipis_am_threads(index),
									 scipis_am_memory(index),
									 IndexRelationGetNumberOfKeyAttributes(index) - 1, &err);
	if (!st.build)
		fail_build(&err, index);
	PG_TRY();
	{
		int			r;

		reltuples = table_index_build_scan(heap, index, info, true, true, build_callback,
										   &st, NULL);
		while ((r = scipis_am_build_finish_input(st.build, &err)) == 1)
			take_some(&st, 10);
		if (r < 0)
			fail_build(&err, index);
		while (take_some(&st, 100) != 2)
			;
		elog(DEBUG1, "scipis index \"%s\": %llu writes of the indexers' memory merged into %u segments",
			 RelationGetRelationName(index), (unsigned long long) scipis_am_build_flushes(st.build),
			 st.meta->nsegments);
	}
	PG_FINALLY();
	{
		scipis_am_build_free(st.build);
	}
	PG_END_TRY();

	metabuf = ReadBuffer(index, SCIPIS_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	scipis_am_init_metapage(BufferGetPage(metabuf), delimiter);
	memcpy(ScipisPageGetMeta(BufferGetPage(metabuf)), st.meta, sizeof(ScipisMeta));
	MarkBufferDirty(metabuf);
	UnlockReleaseBuffer(metabuf);
	if (RelationNeedsWAL(index))
	{
		log_newpage_range(index, MAIN_FORKNUM, SCIPIS_METAPAGE_BLKNO, SCIPIS_METAPAGE_BLKNO + 1, true);
		/*
		 * The segments' pages bypassed shared buffers: a checkpoint taken
		 * since they were logged would not replay them after a crash, so
		 * they must be on disk now (as nbtree's build does). Without WAL,
		 * the commit syncs a new relation (or an unlogged one needs none).
		 */
		smgrimmedsync(RelationGetSmgr(index), MAIN_FORKNUM);
	}

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = st.tuples;
	return result;
}

/* The init fork of an unlogged index: an empty metapage. */
void
scipis_ambuildempty(Relation index)
{
	PGAlignedBlock block;
	Page		page = (Page) block.data;
	unsigned char delimiter[256];

	scipis_am_check_columns(index);
	scipis_am_delimiters(index, delimiter);
	scipis_am_init_metapage(page, delimiter);
	PageSetChecksumInplace(page, SCIPIS_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, SCIPIS_METAPAGE_BLKNO, (char *) page, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
				SCIPIS_METAPAGE_BLKNO, page, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
}
