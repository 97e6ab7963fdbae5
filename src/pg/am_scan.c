/*
 * Scans. `col @@@ q` keys: every matching row (bitmap or plain scan), the
 * keys' row sets intersected. `ORDER BY col <@> q`: rows by descending
 * score in rounds of growing size, each round resuming after the last row
 * returned with the statistics fixed at the first, so a filter that rejects
 * rows never shortens the result; after the matches, the rows that do not
 * match (distance 0), then NULL values (distance NULL), as a sequential
 * scan with a sort would give them.
 */
#include "am.h"

#include "access/relscan.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "storage/lmgr.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "scipis_pg.h"

#define FIRST_ROUND 10
#define ROUND_GROWTH 8

typedef enum
{
	PHASE_START,
	PHASE_RANKED,
	PHASE_REST,
	PHASE_DONE
} Phase;

typedef struct ScipisScan
{
	MemoryContext cxt;
	ScipisMeta	meta;
	bool		empty;			/* a key is NULL: nothing matches */
	int			nkeys;
	scipis_am_query **keys;
	scipis_am_query *order;
	ScipisQuery *order_q;
	bool		recheck;
	bool		rest_needed;
	bool		all_rows;		/* no key, no ordering: every entry */
	scipis_am_filter *filters;	/* keys on filter columns */
	int			nfilters;
	IndexTuple	nulls;			/* what an index-only scan gets: no column is stored */
	/* plain scan over @@@ */
	uint64	   *tids;
	size_t		ntids,
				pos;
	bool		matched_done;
	/* ordered scan */
	Phase		phase;
	scipis_am_hit *hits;
	size_t		nhits,
				hpos;
	uint64		round;
	bool		has_last;
	scipis_am_hit last;
} ScipisScan;

static void
free_queries(void *arg)
{
	ScipisScan  *so = (ScipisScan *) arg;
	int			i;

	for (i = 0; i < so->nkeys; i++)
		if (so->keys[i])
			scipis_am_query_free(so->keys[i]);
	so->nkeys = 0;
	if (so->order)
		scipis_am_query_free(so->order);
	so->order = NULL;
}

IndexScanDesc
scipis_am_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	ScipisScan  *so = palloc0(sizeof(ScipisScan));
	MemoryContextCallback *cb;

	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "scipis scan", ALLOCSET_DEFAULT_SIZES);
	{
		/*
		 * The planner picks an index-only scan when a query needs no column
		 * (count(*)); the executor then wants a tuple, whatever it holds.
		 */
		Datum		v[INDEX_MAX_KEYS] = {0};
		bool		isnull[INDEX_MAX_KEYS];

		memset(isnull, true, sizeof(isnull));
		so->nulls = index_form_tuple(RelationGetDescr(index), v, isnull);
	}
	cb = MemoryContextAlloc(so->cxt, sizeof(MemoryContextCallback));
	cb->func = free_queries;
	cb->arg = so;
	MemoryContextRegisterResetCallback(so->cxt, cb);
	if (norderbys > 0)
	{
		/* The access method provides these (as GiST does). */
		scan->xs_orderbyvals = palloc0(sizeof(Datum) * norderbys);
		scan->xs_orderbynulls = palloc(sizeof(bool) * norderbys);
		memset(scan->xs_orderbynulls, true, sizeof(bool) * norderbys);
	}
	scan->opaque = so;
	return scan;
}

static bool
same_query(const ScipisQuery *a, const ScipisQuery *b)
{
	return a->match == b->match && VARSIZE(a) == VARSIZE(b) &&
		memcmp(a->text, b->text, ScipisQueryTextLen(a)) == 0;
}

void
scipis_am_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	ScipisScan  *so = (ScipisScan *) scan->opaque;
	MemoryContext old;
	int			i;
	ScipisQuery *order_q = NULL;
	bool		other_key = false;

	MemoryContextReset(so->cxt);
	{
		/* The reset dropped the callback with the context's memory: again. */
		MemoryContextCallback *cb = MemoryContextAlloc(so->cxt, sizeof(MemoryContextCallback));

		cb->func = free_queries;
		cb->arg = so;
		MemoryContextRegisterResetCallback(so->cxt, cb);
	}
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
	if (orderbys && scan->numberOfOrderBys > 0)
		memmove(scan->orderByData, orderbys, scan->numberOfOrderBys * sizeof(ScanKeyData));

	old = MemoryContextSwitchTo(so->cxt);
	scipis_am_read_meta(scan->indexRelation, &so->meta);
	so->empty = false;
	so->keys = palloc0(sizeof(scipis_am_query *) * Max(scan->numberOfKeys, 1));
	so->nkeys = 0;
	so->order = NULL;
	so->order_q = NULL;
	so->tids = NULL;
	so->ntids = so->pos = 0;
	so->matched_done = false;
	so->phase = PHASE_START;
	so->hits = NULL;
	so->nhits = so->hpos = 0;
	so->round = FIRST_ROUND;
	so->has_last = false;
	so->recheck = false;
	so->rest_needed = true;
	so->all_rows = scan->numberOfKeys == 0 && scan->numberOfOrderBys == 0;
	so->filters = palloc(sizeof(scipis_am_filter) * Max(scan->numberOfKeys, 1));
	so->nfilters = 0;

	if (scan->numberOfOrderBys > 0)
	{
		ScanKey		ob = &scan->orderByData[0];

		if (ob->sk_flags & SK_ISNULL)
			so->empty = true;
		else
		{
			order_q = DatumGetScipisQuery(ob->sk_argument);
			so->order = scipis_am_open_query(order_q, so->meta.delimiter);
			so->order_q = order_q;
		}
	}
	for (i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		k = &scan->keyData[i];
		ScipisQuery *q;

		if (k->sk_flags & SK_ISNULL)
		{
			so->empty = true;
			continue;
		}
		if (k->sk_attno > 1)
		{
			/* A range on a filter column: every query of the scan takes it. */
			if (scipis_am_key_filter(scan->indexRelation, k, &so->filters[so->nfilters]))
				so->nfilters++;
			else
				so->empty = true;
			continue;
		}
		q = DatumGetScipisQuery(k->sk_argument);
		so->keys[so->nkeys++] = scipis_am_open_query(q, so->meta.delimiter);
		if (order_q && same_query(q, order_q))
			so->rest_needed = false;
		else
			other_key = true;
	}

	/*
	 * An ordered scan returns rows in score order and lets the executor
	 * filter by the keys, unless each key is the ordering query: its ranked
	 * rows all match it.
	 */
	if (so->order && other_key)
		so->recheck = true;
	for (i = 0; i < so->nfilters; i++)
	{
		scipis_error err;
		int			k;

		if (so->order && scipis_am_query_filter(so->order, &so->filters[i], &err) != 0)
			scipis_raise(&err);
		for (k = 0; k < so->nkeys; k++)
			if (scipis_am_query_filter(so->keys[k], &so->filters[i], &err) != 0)
				scipis_raise(&err);
	}
	MemoryContextSwitchTo(old);
}

/* Reads the current view under the view lock and runs f on it. */
typedef void (*ViewFn) (ScipisScan *so, const scipis_am_view *view, const scipis_am_reader *rd,
						void *arg, scipis_error *err, int *rc);

static void
with_view(IndexScanDesc scan, ViewFn fn, void *arg)
{
	ScipisScan  *so = (ScipisScan *) scan->opaque;
	Relation	index = scan->indexRelation;
	ScipisMeta	meta;
	scipis_am_view view;
	scipis_am_reader rd;
	ScipisReadCtx ctx;
	scipis_error err;
	int			rc = 0;
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "scipis view",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);

	LockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
	scipis_am_read_meta(index, &meta);
	scipis_am_view_read(index, &meta, &view, NULL, NULL);
	scipis_am_reader_init(&rd, &ctx, index);
	fn(so, &view, &rd, arg, &err, &rc);
	UnlockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
	if (rc != 0)
		scipis_am_fail(&ctx, &err, index);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

static void
view_matches(ScipisScan *so, const scipis_am_view *view, const scipis_am_reader *rd, void *arg,
			 scipis_error *err, int *rc)
{
	int			k;

	for (k = 0; k < so->nkeys && *rc == 0; k++)
	{
		const uint64_t *tids;
		size_t		n,
					i = 0,
					j = 0,
					out = 0;

		if (scipis_am_query_matches(so->keys[k], view, rd, &tids, &n, err) != 0)
		{
			*rc = -1;
			return;
		}
		if (k == 0)
		{
			so->tids = MemoryContextAllocHuge(so->cxt, sizeof(uint64) * Max(n, 1));
			memcpy(so->tids, tids, sizeof(uint64) * n);
			so->ntids = n;
			continue;
		}
		/* Intersect: both ascending. */
		while (i < so->ntids && j < n)
		{
			if (so->tids[i] < tids[j])
				i++;
			else if (so->tids[i] > tids[j])
				j++;
			else
			{
				so->tids[out++] = so->tids[i];
				i++;
				j++;
			}
		}
		so->ntids = out;
	}
}

/* A scan without conditions (count(*) through the index): every entry. */
static void
view_all(ScipisScan *so, const scipis_am_view *view, const scipis_am_reader *rd, void *arg,
		 scipis_error *err, int *rc)
{
	size_t		cap = 1024;
	int			i;
	uint64		p;

	so->tids = MemoryContextAllocHuge(so->cxt, sizeof(uint64) * cap);
	so->ntids = 0;
	for (i = 0; i <= view->nsegs; i++)
	{
		uint64_t   *tids = NULL;
		size_t		n;

		if (i < view->nsegs)
		{
			if (scipis_am_segment_tids(rd, &view->segs[i], &tids, &n, err) != 0)
			{
				*rc = -1;
				return;
			}
		}
		else
		{
			n = view->npending;
			tids = malloc(sizeof(uint64) * Max(n, 1));
			if (tids == NULL)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
			for (p = 0; p < n; p++)
				if (scipis_am_entry_tid(view->pending[p], view->pending_len[p], &tids[p], err) != 0)
				{
					free(tids);
					*rc = -1;
					return;
				}
		}
		if (so->ntids + n > cap)
		{
			while (so->ntids + n > cap)
				cap *= 2;
			so->tids = repalloc_huge(so->tids, sizeof(uint64) * cap);
		}
		memcpy(so->tids + so->ntids, tids, sizeof(uint64) * n);
		so->ntids += n;
		free(tids);
	}
}

/* A scan whose conditions are all on filter columns. */
static void
view_filtered(ScipisScan *so, const scipis_am_view *view, const scipis_am_reader *rd, void *arg,
			  scipis_error *err, int *rc)
{
	uint64_t   *tids;
	size_t		n;

	if (scipis_am_filter_tids(view, rd, so->filters, so->nfilters, &tids, &n, err) != 0)
	{
		*rc = -1;
		return;
	}
	so->tids = MemoryContextAllocHuge(so->cxt, sizeof(uint64) * Max(n, 1));
	memcpy(so->tids, tids, sizeof(uint64) * n);
	so->ntids = n;
	free(tids);
}

static void
load_matches(IndexScanDesc scan)
{
	ScipisScan  *so = (ScipisScan *) scan->opaque;

	if (so->matched_done)
		return;
	if (so->all_rows)
		with_view(scan, view_all, NULL);
	else if (!so->empty && so->nkeys > 0)
		with_view(scan, view_matches, NULL);
	else if (!so->empty && so->nfilters > 0)
		with_view(scan, view_filtered, NULL);
	so->matched_done = true;
}

static void
view_ranked(ScipisScan *so, const scipis_am_view *view, const scipis_am_reader *rd, void *arg,
			scipis_error *err, int *rc)
{
	const scipis_am_hit *hits;
	size_t		n;
	bool		rest = *(bool *) arg;

	if (rest)
		*rc = scipis_am_query_rest(so->order, view, rd, so->round, so->has_last,
								   so->has_last ? so->last.is_null : 0,
								   so->has_last ? so->last.tid : 0, &hits, &n, err);
	else
		*rc = scipis_am_query_ranked(so->order, view, rd, so->round, so->has_last,
									 so->has_last ? so->last.score : 0,
									 so->has_last ? so->last.tid : 0, &hits, &n, err);
	if (*rc != 0)
		return;
	if (so->hits)
		pfree(so->hits);
	so->hits = MemoryContextAllocHuge(so->cxt, sizeof(scipis_am_hit) * Max(n, 1));
	memcpy(so->hits, hits, sizeof(scipis_am_hit) * n);
	so->nhits = n;
	so->hpos = 0;
}

/* Fills the next round of the ordered scan; false when it is over. */
static bool
next_round(IndexScanDesc scan)
{
	ScipisScan  *so = (ScipisScan *) scan->opaque;

	for (;;)
	{
		bool		rest;

		if (so->phase == PHASE_DONE)
			return false;
		if (so->phase == PHASE_START)
		{
			so->phase = PHASE_RANKED;
			/* The statistics the operators of this statement use too. */
			scipis_am_statement_stats(scan->indexRelation, so->order_q, so->order, SCIPIS_STATS_SCAN);
		}
		else if (so->nhits < so->round)
		{
			/* The last round came back short: this phase is over. */
			if (so->phase == PHASE_RANKED && so->rest_needed)
			{
				so->phase = PHASE_REST;
				so->has_last = false;
				so->round = FIRST_ROUND;
			}
			else
			{
				so->phase = PHASE_DONE;
				return false;
			}
		}
		else if (so->round < UINT64CONST(1) << 40)
			so->round *= ROUND_GROWTH;
		rest = so->phase == PHASE_REST;
		with_view(scan, view_ranked, &rest);
		if (so->nhits > 0)
			return true;
	}
}

bool
scipis_am_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	ScipisScan  *so = (ScipisScan *) scan->opaque;

	if (dir != ForwardScanDirection)
		elog(ERROR, "scipis index scans go forward only");
	if (so->order == NULL)
	{
		load_matches(scan);
		if (so->pos >= so->ntids)
			return false;
		scipis_am_key_tid(so->tids[so->pos++], &scan->xs_heaptid);
		scan->xs_recheck = false;
		if (scan->xs_want_itup)
		{
			scan->xs_itup = so->nulls;
			scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
		}
		return true;
	}
	if (so->empty)
		return false;
	while (so->hpos >= so->nhits)
		if (!next_round(scan))
			return false;
	{
		scipis_am_hit *h = &so->hits[so->hpos++];

		so->last = *h;
		so->has_last = true;
		scipis_am_key_tid(h->tid, &scan->xs_heaptid);
		scan->xs_recheck = so->recheck;
		if (scan->xs_want_itup)
		{
			scan->xs_itup = so->nulls;
			scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
		}
		scan->xs_recheckorderby = false;
		if (so->phase == PHASE_REST && h->is_null)
		{
			scan->xs_orderbyvals[0] = (Datum) 0;
			scan->xs_orderbynulls[0] = true;
		}
		else
		{
			scan->xs_orderbyvals[0] = Float8GetDatum(so->phase == PHASE_REST ? 0.0 : -h->score);
			scan->xs_orderbynulls[0] = false;
			scipis_am_memo_note(scan->indexRelation, so->order_q, &scan->xs_heaptid,
								so->phase != PHASE_REST, so->phase == PHASE_REST ? 0.0 : h->score);
		}
	}
	return true;
}

int64
scipis_am_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	ScipisScan  *so = (ScipisScan *) scan->opaque;
	size_t		i;
	ItemPointerData tid;

	load_matches(scan);
	for (i = 0; i < so->ntids; i++)
	{
		scipis_am_key_tid(so->tids[i], &tid);
		tbm_add_tuples(tbm, &tid, 1, false);
	}
	return (int64) so->ntids;
}

void
scipis_am_endscan(IndexScanDesc scan)
{
	ScipisScan  *so = (ScipisScan *) scan->opaque;

	MemoryContextDelete(so->cxt);
	pfree(so);
}
