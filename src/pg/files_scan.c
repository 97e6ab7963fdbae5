/*
 * A custom scan for scipis_files (scipis_list_files()): the WHERE clause's
 * conditions on size, mtime, ctime, uid, gid, path and collection become
 * ranges the engine answers from each block's statistics (index/
 * file_block_stats.h), reading only the blocks that can match. Every
 * condition still runs on each row as the query wrote it: the ranges are
 * never narrower than the conditions (the README's SQL tour lists what is
 * pushed down), so a pushed-down plan returns what a function scan would.
 */
#include "collection.h"
#include "files_quals.h"
#include "request.h"

#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

typedef struct FilesScanState
{
	CustomScanState css;
	List	   *values;			/* ExprState per pushed condition */
	bool		started;
	scipis_file_filter filter;
	List	   *colls;			/* collections left to read */
	const char *coll_name;		/* the one docs came from */
	scipis_docs docs;
	size_t		next;
	scipis_scan_stats stats;
	MemoryContextCallback free_docs;
} FilesScanState;

static set_rel_pathlist_hook_type prev_pathlist_hook = NULL;
static Plan *plan_files_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							 List *tlist, List *clauses, List *custom_plans);
static Node *create_files_state(CustomScan *cscan);
static void begin_files_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_files_scan(CustomScanState *node);
static void end_files_scan(CustomScanState *node);
static void rescan_files_scan(CustomScanState *node);
static void explain_files_scan(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods path_methods = {
	.CustomName = "ScipisFilesScan",
	.PlanCustomPath = plan_files_path,
};
static const CustomScanMethods scan_methods = {
	.CustomName = "ScipisFilesScan",
	.CreateCustomScanState = create_files_state,
};
static const CustomExecMethods exec_methods = {
	.CustomName = "ScipisFilesScan",
	.BeginCustomScan = begin_files_scan,
	.ExecCustomScan = exec_files_scan,
	.EndCustomScan = end_files_scan,
	.ReScanCustomScan = rescan_files_scan,
	.ExplainCustomScan = explain_files_scan,
};

/* Whether funcid is this module's scipis_list_files (by its C symbol). */
static bool
is_list_files(Oid funcid)
{
	static Oid	known = InvalidOid;
	HeapTuple	tup;
	bool		yes = false;

	if (OidIsValid(known) && funcid == known)
		return true;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		Datum		bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);

		yes = !isnull && strcmp(TextDatumGetCString(src), "scipis_files_sql") == 0 &&
			strstr(TextDatumGetCString(bin), "scipis") != NULL;
	}
	ReleaseSysCache(tup);
	if (yes)
		known = funcid;
	return yes;
}

static void
files_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	RangeTblFunction *rtf;
	List	   *conds = NIL;
	List	   *values = NIL;
	Bitmapset  *attrs = NULL;
	ListCell   *lc;
	CustomPath *cp;

	if (prev_pathlist_hook)
		prev_pathlist_hook(root, rel, rti, rte);
	if (rel->reloptkind != RELOPT_BASEREL || rte->rtekind != RTE_FUNCTION ||
		rte->funcordinality || list_length(rte->functions) != 1)
		return;
	rtf = linitial(rte->functions);
	if (!IsA(rtf->funcexpr, FuncExpr) || !is_list_files(((FuncExpr *) rtf->funcexpr)->funcid))
		return;
	/* A whole-row reference needs the function's own row type. */
	pull_varattnos((Node *) rel->reltarget->exprs, rti, &attrs);
	foreach(lc, rel->baserestrictinfo)
		pull_varattnos((Node *) ((RestrictInfo *) lfirst(lc))->clause, rti, &attrs);
	if (bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs))
		return;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);
		PushedCond	pc;
		Expr	   *value;

		if (ri->pseudoconstant || !files_qual_classify(ri->clause, rti, &pc, &value))
			continue;
		conds = lappend(conds, list_make2_int(pc.column, pc.how));
		values = lappend(values, value);
	}
	if (conds == NIL)
		return;
	cp = makeNode(CustomPath);
	cp->path.pathtype = T_CustomScan;
	cp->path.parent = rel;
	cp->path.pathtarget = rel->reltarget;
	cp->path.rows = rel->rows;
	/* Never more than the function scan it replaces: it reads a subset. */
	cp->path.startup_cost = 0;
	cp->path.total_cost = rel->rows * cpu_tuple_cost;
	cp->custom_private = list_make2(conds, values);
	cp->methods = &path_methods;
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	add_path(rel, &cp->path);
}

static Plan *
plan_files_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
				List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	RangeTblFunction *rtf = linitial(rte->functions);
	TupleDesc	desc;
	List	   *scan_tlist = NIL;

	if (get_expr_result_type(rtf->funcexpr, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "scipis_list_files must return rows");
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) makeVar(rel->relid, i + 1, a->atttypid,
															  a->atttypmod, a->attcollation, 0),
											 i + 1, pstrdup(NameStr(a->attname)), false));
	}
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = extract_actual_clauses(clauses, false);
	/* Not a relation: the scan's tuples are described by custom_scan_tlist. */
	cs->scan.scanrelid = 0;
	cs->custom_scan_tlist = scan_tlist;
	cs->custom_private = list_make1(linitial(best_path->custom_private));
	cs->custom_exprs = lsecond(best_path->custom_private);
	cs->flags = best_path->flags;
	cs->methods = &scan_methods;
	return &cs->scan.plan;
}

static Node *
create_files_state(CustomScan *cscan)
{
	FilesScanState *st = palloc0(sizeof(FilesScanState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &exec_methods;
	return (Node *) st;
}

static void
free_docs(void *arg)
{
	FilesScanState *st = arg;

	if (st->docs.owner)
		scipis_docs_free(&st->docs);
}

static void
begin_files_scan(CustomScanState *node, EState *estate, int eflags)
{
	FilesScanState *st = (FilesScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;

	st->values = ExecInitExprList(cs->custom_exprs, &node->ss.ps);
	/* The engine's rows are freed with the query, an error included. */
	st->free_docs.func = free_docs;
	st->free_docs.arg = st;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &st->free_docs);
}

/* Evaluates the pushed conditions into the filter, and picks collections. */
static void
start_scan(FilesScanState *st)
{
	CustomScan *cs = (CustomScan *) st->css.ss.ps.plan;
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MemoryContext old = MemoryContextSwitchTo(st->css.ss.ps.state->es_query_cxt);
	FilesFilterBuild fb;
	ListCell   *lc,
			   *lv;

	files_filter_start(&fb);
	forboth(lc, (List *) linitial(cs->custom_private), lv, st->values)
	{
		List	   *cond = lfirst(lc);
		ExprState  *es = lfirst(lv);
		PushedCond	pc = {linitial_int(cond), lsecond_int(cond)};
		bool		isnull;
		Datum		v = ExecEvalExpr(es, econtext, &isnull);

		files_filter_add(&fb, &pc, exprType((Node *) es->expr), v, isnull);
	}
	st->filter = fb.filter;
	st->colls = NIL;
	if (!fb.empty)
	{
		foreach(lc, collections_to_search(NULL))
		{
			ScipisCollection *c = lfirst(lc);

			if (fb.collection == NULL || strcmp(c->name, fb.collection) == 0)
				st->colls = lappend(st->colls, c);
		}
	}
	MemoryContextSwitchTo(old);
	st->started = true;
}

static TupleTableSlot *
next_row(ScanState *ss)
{
	FilesScanState *st = (FilesScanState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (!st->started)
		start_scan(st);
	ExecClearTuple(slot);
	while (st->next >= st->docs.n)
	{
		ScipisCollection *c;
		Request		req = {REQ_LIST_WHERE};

		if (st->docs.owner)
			scipis_docs_free(&st->docs);
		if (st->colls == NIL)
			return slot;
		CHECK_FOR_INTERRUPTS();
		c = linitial(st->colls);
		st->colls = list_delete_first(st->colls);
		req.filter = &st->filter;
		req.stats = &st->stats;
		st->next = 0;
		if (run_request(c, true, &req, &st->docs))
			st->coll_name = c->name;
	}
	{
		MemoryContext old = MemoryContextSwitchTo(ss->ps.ps_ExprContext->ecxt_per_tuple_memory);

		file_row_values(st->coll_name, &st->docs.docs[st->next++], slot->tts_values);
		memset(slot->tts_isnull, 0, sizeof(bool) * FILE_ROW_COLUMNS);
		MemoryContextSwitchTo(old);
	}
	return ExecStoreVirtualTuple(slot);
}

static bool
recheck_row(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_files_scan(CustomScanState *node)
{
	return ExecScan(&node->ss, next_row, recheck_row);
}

static void
end_files_scan(CustomScanState *node)
{
	free_docs(node);
}

static void
rescan_files_scan(CustomScanState *node)
{
	FilesScanState *st = (FilesScanState *) node;

	free_docs(st);
	st->docs = (scipis_docs) {0};
	st->next = 0;
	st->started = false;
}

static void
explain_files_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	FilesScanState *st = (FilesScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *ctx = set_deparse_context_plan(es->deparse_cxt, &cs->scan.plan, ancestors);
	StringInfoData buf;
	ListCell   *lc,
			   *lv;

	initStringInfo(&buf);
	forboth(lc, (List *) linitial(cs->custom_private), lv, cs->custom_exprs)
	{
		List	   *cond = lfirst(lc);
		PushedCond	pc = {linitial_int(cond), lsecond_int(cond)};

		if (buf.len > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfo(&buf, "%s %s %s", files_column_name(pc.column), files_how_name(pc.how),
						 deparse_expression(lfirst(lv), ctx, false, false));
	}
	ExplainPropertyText("Pushed Down", buf.data, es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Record Blocks", NULL, (int64) st->stats.blocks, es);
		ExplainPropertyInteger("Record Blocks Read", NULL, (int64) st->stats.blocks_read, es);
	}
}

/*
 * The support function of scipis_list_files. The planner calls it (for a
 * row estimate) before it builds the function's paths, which loads this
 * library: the path hook is then in place for a new backend's first query.
 */
PG_FUNCTION_INFO_V1(scipis_files_support);

Datum
scipis_files_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(NULL);
}

void
scipis_files_scan_init(void)
{
	prev_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = files_pathlist;
	RegisterCustomScanMethods(&scan_methods);
}
