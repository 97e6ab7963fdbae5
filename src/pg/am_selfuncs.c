/*
 * What the planner is told about the operators. A fixed guess of how many
 * rows match (contsel's 0.1%) and of what a call costs (one operator) made
 * it sort every match of a frequent term of long documents rather than
 * take the top k from the index: each of those calls detoasts and
 * tokenizes a whole value. So: the fraction that matches comes from the
 * index's own N and df of the query's terms (read once per statement, the
 * reads kept for the scan that follows), and a call costs in proportion to
 * the bytes of an average value of the table.
 */
#include "am.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "scipis_pg.h"

PG_FUNCTION_INFO_V1(scipis_matchsel);

/* contsel's guess, for a query whose index is not known yet. */
#define GUESS_SEL 0.001

static bool
is_scipis_index_of(Oid ixoid, Oid relid)
{
	Oid			am = get_index_am_oid("scipis", true);
	HeapTuple	tup;
	bool		ok;

	if (!OidIsValid(am) || get_rel_relkind(ixoid) != RELKIND_INDEX)
		return false;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(ixoid));
	if (!HeapTupleIsValid(tup))
		return false;
	ok = ((Form_pg_class) GETSTRUCT(tup))->relam == am;
	ReleaseSysCache(tup);
	if (!ok)
		return false;
	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(ixoid));
	if (!HeapTupleIsValid(tup))
		return false;
	ok = ((Form_pg_index) GETSTRUCT(tup))->indrelid == relid;
	ReleaseSysCache(tup);
	return ok;
}

static double
estimate(Oid ixoid, const ScipisQuery *q)
{
	Relation	index = index_open(ixoid, AccessShareLock);
	ScipisMeta	meta;
	scipis_am_query *volatile eq = NULL;
	volatile double sel = 0;

	scipis_am_read_meta(index, &meta);
	PG_TRY();
	{
		eq = scipis_am_open_query(q, meta.delimiter);
		scipis_am_statement_stats(index, q, eq, SCIPIS_STATS_PLAN);
		sel = scipis_am_query_selectivity(eq);
	}
	PG_FINALLY();
	{
		if (eq)
			scipis_am_query_free(eq);
	}
	PG_END_TRY();
	index_close(index, AccessShareLock);
	return sel;
}

/* Restriction estimator of @@@. */
Datum
scipis_matchsel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	int			varRelid = PG_GETARG_INT32(3);
	VariableStatData vardata;
	Node	   *other;
	bool		varonleft;
	bool		acl_ok;
	Oid			relid = InvalidOid;
	ScipisQuery *q;
	Selectivity sel;

	if (!get_restriction_variable(root, args, varRelid, &vardata, &other, &varonleft))
		PG_RETURN_FLOAT8(GUESS_SEL);
	/* The index's counts are the column's data: only for who may read it. */
	acl_ok = vardata.acl_ok;
	if (vardata.rel && vardata.rel->rtekind == RTE_RELATION)
		relid = planner_rt_fetch(vardata.rel->relid, root)->relid;
	ReleaseVariableStats(vardata);
	if (!varonleft || !acl_ok || !OidIsValid(relid) || !IsA(other, Const) ||
		((Const *) other)->constisnull)
		PG_RETURN_FLOAT8(GUESS_SEL);
	q = DatumGetScipisQuery(((Const *) other)->constvalue);
	if (!OidIsValid(q->index) || !is_scipis_index_of(q->index, relid))
		PG_RETURN_FLOAT8(GUESS_SEL);
	sel = estimate(q->index, q);
	CLAMP_PROBABILITY(sel);
	PG_RETURN_FLOAT8(sel);
}

/*
 * The cost of one call of an operator on arg (a column or expression of
 * one table): tokenizing costs about a tenth of an operator per byte, and
 * the table's pages, TOAST included, over its rows are the bytes of an
 * average value. False when the table has no statistics yet.
 */
bool
scipis_am_call_cost(PlannerInfo *root, Node *arg, Cost *per_call)
{
	Relids		varnos;
	int			varno;
	RangeTblEntry *rte;
	HeapTuple	tup;
	double		pages,
				tuples;
	Oid			toast;

	if (root == NULL)
		return false;
	varnos = pull_varnos(root, arg);
	if (!bms_get_singleton_member(varnos, &varno) || varno > list_length(root->parse->rtable))
		return false;
	rte = rt_fetch(varno, root->parse->rtable);
	if (rte->rtekind != RTE_RELATION)
		return false;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rte->relid));
	if (!HeapTupleIsValid(tup))
		return false;
	pages = ((Form_pg_class) GETSTRUCT(tup))->relpages;
	tuples = ((Form_pg_class) GETSTRUCT(tup))->reltuples;
	toast = ((Form_pg_class) GETSTRUCT(tup))->reltoastrelid;
	ReleaseSysCache(tup);
	if (tuples <= 0)
		return false;
	if (OidIsValid(toast) && HeapTupleIsValid(tup = SearchSysCache1(RELOID, ObjectIdGetDatum(toast))))
	{
		pages += ((Form_pg_class) GETSTRUCT(tup))->relpages;
		ReleaseSysCache(tup);
	}
	*per_call = cpu_operator_cost * (1.0 + pages * BLCKSZ / tuples / 10.0);
	return true;
}
