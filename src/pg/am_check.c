/*
 * scipis_index_check(index): the index against its table, as amcheck's
 * heapallindexed does for a B-tree. Each row visible to a fresh snapshot
 * must have exactly one entry whose terms and counts are the row's value's;
 * an entry may outlive its row until VACUUM, but never point at no tuple;
 * every segment's statistics are recomputed from its postings. Problems
 * come back as rows.
 */
#include "am.h"

#include "access/heapam.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "scipis_pg.h"

PG_FUNCTION_INFO_V1(scipis_index_check);

typedef struct CheckState
{
	Tuplestorestate *out;
	TupleDesc	desc;
	scipis_am_check_entry *entries;
	size_t		n;
	bool	   *seen;
	unsigned char delimiter[256];
	uint64		problems;
	uint64		rows;
} CheckState;

static void
report(CheckState *st, const char *problem, const ItemPointer tid, const char *detail)
{
	Datum		values[3];
	bool		nulls[3] = {false, tid == NULL, detail == NULL};

	values[0] = CStringGetTextDatum(problem);
	values[1] = tid ? PointerGetDatum(tid) : (Datum) 0;
	values[2] = detail ? CStringGetTextDatum(detail) : (Datum) 0;
	tuplestore_putvalues(st->out, st->desc, values, nulls);
	st->problems++;
}

static size_t
find_entry(CheckState *st, uint64 key)
{
	size_t		lo = 0,
				hi = st->n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (st->entries[mid].tid < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
check_row(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool alive, void *arg)
{
	CheckState *st = (CheckState *) arg;
	uint64		key = scipis_am_tid_key(tid);
	size_t		i = find_entry(st, key);
	scipis_am_check_entry want;
	scipis_error err;
	const char *data = NULL;
	size_t		len = 0;
	uint64		keys[SCIPIS_MAX_VALS];
	unsigned char nulls[SCIPIS_MAX_VALS];
	scipis_am_vals vals;

	st->rows++;
	if (i >= st->n || st->entries[i].tid != key)
	{
		report(st, "row not indexed", tid, NULL);
		return;
	}
	if (i + 1 < st->n && st->entries[i + 1].tid == key)
		report(st, "row indexed more than once", tid, NULL);
	st->seen[i] = true;
	if (!isnull[0])
	{
		text	   *t = DatumGetTextPP(values[0]);

		data = VARDATA_ANY(t);
		len = VARSIZE_ANY_EXHDR(t);
	}
	scipis_am_row_vals(index, values, isnull, keys, nulls, &vals);
	if (scipis_am_value_fingerprint(data, len, isnull[0], &vals, st->delimiter, &want, &err) != 0)
		scipis_raise(&err);
	if (want.len != st->entries[i].len)
		report(st, "entry length disagrees with the row", tid,
			   psprintf("index %u tokens, row %u tokens", st->entries[i].len, want.len));
	else if (want.fingerprint != st->entries[i].fingerprint)
		report(st, "entry terms disagree with the row", tid,
			   vals.n > 0 ? "its terms or its filter values" : NULL);
}

/* An entry no row of the scan claimed must still point at a tuple. */
static void
check_unclaimed(Relation heap, CheckState *st)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(heap);
	size_t		i;

	for (i = 0; i < st->n; i++)
	{
		ItemPointerData tid;
		BlockNumber blk;
		OffsetNumber off;
		Buffer		buf;
		Page		page;
		bool		bad;

		if (st->seen[i])
			continue;
		CHECK_FOR_INTERRUPTS();
		scipis_am_key_tid(st->entries[i].tid, &tid);
		blk = ItemPointerGetBlockNumberNoCheck(&tid);
		off = ItemPointerGetOffsetNumberNoCheck(&tid);
		if (blk >= nblocks || off == InvalidOffsetNumber)
		{
			report(st, "entry points past the table", &tid, NULL);
			continue;
		}
		buf = ReadBuffer(heap, blk);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		bad = off > PageGetMaxOffsetNumber(page) || !ItemIdIsUsed(PageGetItemId(page, off));
		UnlockReleaseBuffer(buf);
		if (bad)
			report(st, "entry points at no tuple", &tid, NULL);
	}
}

Datum
scipis_index_check(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	CheckState	st;
	Relation	index,
				heap;
	ScipisMeta	meta;
	scipis_am_view view;
	scipis_am_reader rd;
	ScipisReadCtx ctx;
	scipis_error err;
	int			rc;
	IndexInfo  *info;
	Snapshot	snapshot;
	TableScanDesc scan;

	InitMaterializedSRF(fcinfo, 0);
	memset(&st, 0, sizeof(st));
	st.out = rsinfo->setResult;
	st.desc = rsinfo->setDesc;

	index = scipis_am_open_for_sql(indexoid, &heap);
	if (!index->rd_index->indisvalid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" is not valid", RelationGetRelationName(index))));

	LockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
	PG_TRY();
	{
		scipis_am_read_meta(index, &meta);
		scipis_am_view_read(index, &meta, &view, NULL, NULL);
	}
	PG_CATCH();
	{
		UnlockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
		PG_RE_THROW();
	}
	PG_END_TRY();
	memcpy(st.delimiter, meta.delimiter, 256);
	scipis_am_reader_init(&rd, &ctx, index);
	rc = scipis_am_check_entries(&view, &rd, &st.entries, &st.n, &err);
	UnlockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
	if (rc != 0)
	{
		if (ctx.saved && ctx.saved->sqlerrcode != ERRCODE_DATA_CORRUPTED)
			ReThrowError(ctx.saved);
		report(&st, "index damaged", NULL, ctx.saved ? ctx.saved->message : err.message);
		index_close(index, AccessShareLock);
		table_close(heap, AccessShareLock);
		PG_RETURN_NULL();
	}
	st.seen = palloc0(sizeof(bool) * Max(st.n, 1));

	/* The rows a fresh snapshot sees, with the index's own expression. */
	info = BuildIndexInfo(index);
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, false);
	PG_TRY();
	{
		table_index_build_scan(heap, index, info, false, false, check_row, &st, scan);
		check_unclaimed(heap, &st);
	}
	PG_FINALLY();
	{
		free(st.entries);
	}
	PG_END_TRY();
	UnregisterSnapshot(snapshot);
	index_close(index, AccessShareLock);
	table_close(heap, AccessShareLock);
	PG_RETURN_NULL();
}
