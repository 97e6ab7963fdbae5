/*
 * The scipisquery type, scipis_query(), and the operators' own functions,
 * which a sequential scan calls: @@@ tokenizes the row's value as the index
 * would; <@> scores it with the named index's N, df and avgdl.
 */
#include "am.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "access/xact.h"
#include "storage/proc.h"
#include "utils/rel.h"

#include "scipis_pg.h"

PG_FUNCTION_INFO_V1(scipisquery_in);
PG_FUNCTION_INFO_V1(scipisquery_out);
PG_FUNCTION_INFO_V1(scipis_query_make);
PG_FUNCTION_INFO_V1(scipis_query_from_text);
PG_FUNCTION_INFO_V1(scipis_query_on);
PG_FUNCTION_INFO_V1(scipis_match_op);
PG_FUNCTION_INFO_V1(scipis_distance_op);

static ScipisQuery *
make_query(const char *text, size_t len, int ranking, int match, Oid index)
{
	ScipisQuery *q;

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("scipis query is empty"),
				 errhint("A query needs at least one term.")));
	q = palloc0(offsetof(ScipisQuery, text) + len);
	SET_VARSIZE(q, offsetof(ScipisQuery, text) + len);
	q->ranking = ranking;
	q->match = match;
	q->index = index;
	memcpy(q->text, text, len);
	return q;
}

static int
ranking_of(const char *s)
{
	if (strcmp(s, "tfidf") == 0)
		return SCIPIS_TFIDF;
	if (strcmp(s, "bm25") == 0)
		return SCIPIS_BM25;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown scipis ranking \"%s\"", s),
			 errhint("Use 'tfidf' or 'bm25'.")));
	return 0;
}

static int
match_of(const char *s)
{
	if (strcmp(s, "any") == 0)
		return SCIPIS_MATCH_ANY;
	if (strcmp(s, "all") == 0)
		return SCIPIS_MATCH_ALL;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown scipis match \"%s\"", s),
			 errhint("Use 'any' or 'all'.")));
	return 0;
}

static char *
json_string(Jsonb *jb, const char *key)
{
	JsonbValue	v;

	if (!getKeyJsonValueFromContainer(&jb->root, key, strlen(key), &v))
		return NULL;
	if (v.type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("scipisquery key \"%s\" must be a string", key)));
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * Text form: the query itself (ranking tfidf, match any, no index), or a
 * JSON object {"query": ..., "ranking": ..., "match": ..., "index": ...}.
 */
Datum
scipisquery_in(PG_FUNCTION_ARGS)
{
	char	   *s = PG_GETARG_CSTRING(0);

	if (strncmp(s, "{\"query\"", 8) == 0)
	{
		Jsonb	   *jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(s)));
		char	   *text = json_string(jb, "query");
		char	   *ranking = json_string(jb, "ranking");
		char	   *match = json_string(jb, "match");
		char	   *index = json_string(jb, "index");

		PG_RETURN_POINTER(make_query(text, strlen(text),
									 ranking ? ranking_of(ranking) : SCIPIS_TFIDF,
									 match ? match_of(match) : SCIPIS_MATCH_ANY,
									 index ? DatumGetObjectId(DirectFunctionCall1(regclassin, CStringGetDatum(index)))
									 : InvalidOid));
	}
	PG_RETURN_POINTER(make_query(s, strlen(s), SCIPIS_TFIDF, SCIPIS_MATCH_ANY, InvalidOid));
}

Datum
scipisquery_out(PG_FUNCTION_ARGS)
{
	ScipisQuery *q = DatumGetScipisQuery(PG_GETARG_DATUM(0));
	char	   *text = pnstrdup(q->text, ScipisQueryTextLen(q));
	StringInfoData out;

	if (q->ranking == SCIPIS_TFIDF && q->match == SCIPIS_MATCH_ANY && !OidIsValid(q->index) &&
		strncmp(text, "{\"query\"", 8) != 0)
		PG_RETURN_CSTRING(text);
	initStringInfo(&out);
	appendStringInfoString(&out, "{\"query\": ");
	escape_json(&out, text);
	appendStringInfo(&out, ", \"ranking\": \"%s\", \"match\": \"%s\"",
					 q->ranking == SCIPIS_BM25 ? "bm25" : "tfidf",
					 q->match == SCIPIS_MATCH_ALL ? "all" : "any");
	if (OidIsValid(q->index))
	{
		appendStringInfoString(&out, ", \"index\": ");
		escape_json(&out, DatumGetCString(DirectFunctionCall1(regclassout,
															  ObjectIdGetDatum(q->index))));
	}
	appendStringInfoChar(&out, '}');
	PG_RETURN_CSTRING(out.data);
}

/* scipis_query(query, ranking, match, index) */
Datum
scipis_query_make(PG_FUNCTION_ARGS)
{
	text	   *t;
	Oid			index = PG_ARGISNULL(3) ? InvalidOid : PG_GETARG_OID(3);

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("scipis query is NULL")));
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("scipis ranking and match must not be NULL")));
	t = PG_GETARG_TEXT_PP(0);
	PG_RETURN_POINTER(make_query(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
								 ranking_of(text_to_cstring(PG_GETARG_TEXT_PP(1))),
								 match_of(text_to_cstring(PG_GETARG_TEXT_PP(2))), index));
}

Datum
scipis_query_from_text(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);

	PG_RETURN_POINTER(make_query(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), SCIPIS_TFIDF,
								 SCIPIS_MATCH_ANY, InvalidOid));
}

/* The query bound to an index (the planner's scipis_op_support puts it in). */
Datum
scipis_query_on(PG_FUNCTION_ARGS)
{
	ScipisQuery *q = DatumGetScipisQuery(PG_GETARG_DATUM(0));
	ScipisQuery *out;

	if (OidIsValid(q->index))
		PG_RETURN_POINTER(q);
	out = palloc(VARSIZE(q));
	memcpy(out, q, VARSIZE(q));
	out->index = PG_GETARG_OID(1);
	PG_RETURN_POINTER(out);
}

scipis_am_query *
scipis_am_open_query(const ScipisQuery *q, const unsigned char delimiter[256])
{
	scipis_error err;
	scipis_am_query *eq = scipis_am_query_new(q->text, ScipisQueryTextLen(q), delimiter,
											  (scipis_ranking) q->ranking,
											  (scipis_match) q->match, &err);

	if (!eq)
	{
		if (err.code == SCIPIS_E_INVALID)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("scipis query \"%s\" has no terms",
							pnstrdup(q->text, ScipisQueryTextLen(q))),
					 errhint("A query needs at least one term under the index's tokenizer.")));
		scipis_raise(&err);
	}
	return eq;
}

/* The index a query names, or the one scipis index the user can read. */
static Oid
index_for(const ScipisQuery *q)
{
	Oid			am = get_index_am_oid("scipis", false);
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			found = InvalidOid;
	int			n = 0;

	if (OidIsValid(q->index))
	{
		if (get_rel_relkind(q->index) != RELKIND_INDEX ||
			!HeapTupleIsValid(tup = SearchSysCache1(RELOID, ObjectIdGetDatum(q->index))))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a scipis index", get_rel_name(q->index))));
		if (((Form_pg_class) GETSTRUCT(tup))->relam != am)
		{
			ReleaseSysCache(tup);
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a scipis index", get_rel_name(q->index))));
		}
		ReleaseSysCache(tup);
		return q->index;
	}
	rel = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

		if (c->relam == am && c->relkind == RELKIND_INDEX)
		{
			n++;
			found = c->oid;
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (n != 1)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("scipis query names no index, and %s",
						n == 0 ? "there is no scipis index" : "there is more than one scipis index"),
				 errdetail("Without an index scan, the operators need an index for the tokenizer and the statistics."),
				 errhint("Name the index: scipis_query('...', index => 'my_index').")));
	return found;
}

/*
 * One statement's statistics per (index, query): the index scan and the
 * operators evaluated row by row in the same statement (the ORDER BY
 * expression, a recheck) score with the same N, df and avgdl, read once.
 */
#define SHARED_SLOTS 8
typedef struct SharedStats
{
	Oid			index;
	LocalTransactionId lxid;
	TimestampTz stmt;
	ScipisQuery *q;
	scipis_am_query *eq;
} SharedStats;

static SharedStats shared[SHARED_SLOTS];
static int	shared_next;

static bool
same_text(const ScipisQuery *a, const ScipisQuery *b)
{
	return a->ranking == b->ranking && a->match == b->match &&
		ScipisQueryTextLen(a) == ScipisQueryTextLen(b) &&
		memcmp(a->text, b->text, ScipisQueryTextLen(a)) == 0;
}

/*
 * into (q) with this statement's statistics of index, read once per
 * statement: by the planner's estimate, the scan or the operators, whichever
 * comes first, so that all of them score alike.
 */
void
scipis_am_statement_stats(Relation index, const ScipisQuery *q, scipis_am_query *into,
						  ScipisStatsFor who)
{
	TimestampTz stmt = GetCurrentStatementStartTimestamp();
	LocalTransactionId lxid = MyProc->lxid;
	SharedStats *slot = NULL;
	scipis_error err;
	int			i;

	for (i = 0; i < SHARED_SLOTS; i++)
	{
		SharedStats *s = &shared[i];

		if (s->eq && s->index == RelationGetRelid(index) && s->lxid == lxid && s->stmt == stmt &&
			same_text(s->q, q))
		{
			slot = s;
			break;
		}
	}
	if (slot == NULL)
	{
		ScipisMeta	meta;
		scipis_am_view view;
		scipis_am_reader rd;
		ScipisReadCtx ctx;
		int			rc;
		scipis_am_query *eq;

		LockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
		scipis_am_read_meta(index, &meta);
		scipis_am_view_read(index, &meta, &view, NULL, NULL);
		scipis_am_reader_init(&rd, &ctx, index);
		rc = scipis_am_query_prepare(into, &view, &rd, who != SCIPIS_STATS_OPERATOR, &err);
		UnlockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
		if (rc != 0)
			scipis_am_fail(&ctx, &err, index);
		eq = scipis_am_open_query(q, meta.delimiter);
		/* The planner's reads wait in the slot for the scan. */
		if (scipis_am_query_adopt(eq, into, who == SCIPIS_STATS_PLAN, &err) != 0)
		{
			scipis_am_query_free(eq);
			scipis_raise(&err);
		}
		slot = &shared[shared_next];
		shared_next = (shared_next + 1) % SHARED_SLOTS;
		if (slot->eq)
			scipis_am_query_free(slot->eq);
		if (slot->q)
			pfree(slot->q);
		slot->eq = eq;
		slot->q = MemoryContextAlloc(TopMemoryContext, VARSIZE(q));
		memcpy(slot->q, q, VARSIZE(q));
		slot->index = RelationGetRelid(index);
		slot->lxid = lxid;
		slot->stmt = stmt;
		return;
	}
	if (scipis_am_query_adopt(into, slot->eq, who == SCIPIS_STATS_SCAN, &err) != 0)
		scipis_raise(&err);
}

typedef struct OpCache
{
	ScipisQuery *q;
	scipis_am_query *eq;
	Oid			index;
	bool		prepared;
} OpCache;

static void
free_opcache(void *arg)
{
	OpCache    *c = (OpCache *) arg;

	if (c->eq)
		scipis_am_query_free(c->eq);
	c->eq = NULL;
}

static OpCache *
op_cache(FunctionCallInfo fcinfo, ScipisQuery *q, bool want_stats)
{
	OpCache    *c = (OpCache *) fcinfo->flinfo->fn_extra;
	Oid			ixoid;
	Relation	index;
	ScipisMeta	meta;
	MemoryContext old;

	if (c && VARSIZE(c->q) == VARSIZE(q) && memcmp(c->q, q, VARSIZE(q)) == 0 &&
		(c->prepared || !want_stats))
		return c;
	if (c == NULL)
	{
		MemoryContextCallback *cb;

		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(OpCache));
		cb = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(MemoryContextCallback));
		cb->func = free_opcache;
		cb->arg = c;
		MemoryContextRegisterResetCallback(fcinfo->flinfo->fn_mcxt, cb);
		fcinfo->flinfo->fn_extra = c;
	}
	free_opcache(c);
	c->prepared = false;
	ixoid = index_for(q);
	c->index = ixoid;
	index = index_open(ixoid, AccessShareLock);
	if (pg_class_aclcheck(index->rd_index->indrelid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for the table of index \"%s\"",
						RelationGetRelationName(index))));
	scipis_am_read_meta(index, &meta);
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	c->q = palloc(VARSIZE(q));
	memcpy(c->q, q, VARSIZE(q));
	MemoryContextSwitchTo(old);
	c->eq = scipis_am_open_query(q, meta.delimiter);
	if (want_stats)
	{
		scipis_am_statement_stats(index, q, c->eq, SCIPIS_STATS_OPERATOR);
		c->prepared = true;
	}
	index_close(index, AccessShareLock);
	return c;
}

static void
eval(FunctionCallInfo fcinfo, bool want_stats, int *matches, double *score)
{
	ScipisQuery *q = DatumGetScipisQuery(PG_GETARG_DATUM(1));
	OpCache    *c = op_cache(fcinfo, q, want_stats);
	text	   *t;
	scipis_error err;

	if (scipis_am_memo_lookup(c->index, q, PG_GETARG_DATUM(0), matches, score))
		return;
	t = PG_GETARG_TEXT_PP(0);
	if (scipis_am_query_value(c->eq, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), matches, score,
							  &err) != 0)
		scipis_raise(&err);
}

/* text @@@ scipisquery */
Datum
scipis_match_op(PG_FUNCTION_ARGS)
{
	int			matches;
	double		score;

	eval(fcinfo, false, &matches, &score);
	PG_RETURN_BOOL(matches != 0);
}

/* text <@> scipisquery: minus the score; 0 when the row does not match. */
Datum
scipis_distance_op(PG_FUNCTION_ARGS)
{
	int			matches;
	double		score;

	eval(fcinfo, true, &matches, &score);
	PG_RETURN_FLOAT8(matches ? -score : 0.0);
}
