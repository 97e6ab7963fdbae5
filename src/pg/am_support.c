/*
 * Binds a query to its index at plan time. The executor calls the
 * operators' functions even under an index scan (the ORDER BY expression is
 * computed for each row; a lossy bitmap rechecks @@@), and they need an
 * index's tokenizer and statistics. When the query names none and the
 * other operand is a column or expression that exactly one scipis index of
 * its table indexes, the planner's constant folding gets the same operator
 * back with that index in the query.
 */
#include "am.h"

#include "access/table.h"
#include "commands/defrem.h"
#include "nodes/pathnodes.h"
#include "parser/parse_func.h"
#include "catalog/namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "scipis_pg.h"

PG_FUNCTION_INFO_V1(scipis_op_support);

static Node *
strip(Node *n)
{
	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	return n;
}

/* The one scipis index of relid whose text column is expr (varno in the query). */
static Oid
index_of(Oid relid, Index varno, Node *expr)
{
	Oid			am = get_index_am_oid("scipis", true);
	Relation	heap;
	List	   *indexes;
	ListCell   *lc;
	Oid			found = InvalidOid;
	int			n = 0;

	if (!OidIsValid(am))
		return InvalidOid;
	heap = table_open(relid, NoLock);
	indexes = RelationGetIndexList(heap);
	table_close(heap, NoLock);
	expr = strip(expr);
	foreach(lc, indexes)
	{
		Oid			ixoid = lfirst_oid(lc);
		Relation	ix = index_open(ixoid, AccessShareLock);
		bool		match = false;

		if (ix->rd_rel->relam == am && ix->rd_index->indisvalid)
		{
			AttrNumber key = ix->rd_index->indkey.values[0];

			if (key != 0)
				match = IsA(expr, Var) && ((Var *) expr)->varno == varno &&
					((Var *) expr)->varattno == key && ((Var *) expr)->varlevelsup == 0;
			else
			{
				Node	   *ixexpr = copyObject(linitial(RelationGetIndexExpressions(ix)));

				if (varno != 1)
					ChangeVarNodes(ixexpr, 1, varno, 0);
				match = equal(strip(ixexpr), expr);
			}
		}
		index_close(ix, AccessShareLock);
		if (match)
		{
			found = ixoid;
			n++;
		}
	}
	list_free(indexes);
	return n == 1 ? found : InvalidOid;
}

/* scipis_query_on(scipisquery, oid): the query bound to an index. */
static Oid
bind_function(void)
{
	static Oid	cached = InvalidOid;
	Oid			args[2] = {InvalidOid, OIDOID};

	if (!OidIsValid(cached))
	{
		args[0] = TypenameGetTypid("scipisquery");
		cached = LookupFuncName(list_make1(makeString("scipis_query_on")), 2, args, true);
	}
	return cached;
}

Datum
scipis_op_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestSimplify *req;
	FuncExpr   *call;
	Node	   *left;
	Const	   *right;
	ScipisQuery *q;
	Relids		varnos;
	int			varno;
	RangeTblEntry *rte;
	Oid			ixoid;
	ScipisQuery *bound;
	Node	   *c;
	Oid			opno;
	OpExpr	   *op;
	Oid			right_type;

	if (IsA(rawreq, SupportRequestCost))
	{
		SupportRequestCost *creq = (SupportRequestCost *) rawreq;
		List	   *args = NIL;
		Cost		per_call;

		if (creq->node && IsA(creq->node, OpExpr))
			args = ((OpExpr *) creq->node)->args;
		else if (creq->node && IsA(creq->node, FuncExpr))
			args = ((FuncExpr *) creq->node)->args;
		if (list_length(args) != 2 || !scipis_am_call_cost(creq->root, linitial(args), &per_call))
			PG_RETURN_POINTER(NULL);
		creq->startup = 0;
		creq->per_tuple = per_call;
		PG_RETURN_POINTER(creq);
	}
	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestSimplify *) rawreq;
	call = req->fcall;
	if (req->root == NULL || list_length(call->args) != 2)
		PG_RETURN_POINTER(NULL);
	left = linitial(call->args);
	right = (Const *) lsecond(call->args);
	if (IsA(right, Const))
	{
		if (right->constisnull)
			PG_RETURN_POINTER(NULL);
		q = DatumGetScipisQuery(right->constvalue);
		if (OidIsValid(q->index))
			PG_RETURN_POINTER(NULL);
	}
	else
	{
		/* A parameter or an expression: bound when it is evaluated. */
		q = NULL;
		if (IsA(right, FuncExpr) && ((FuncExpr *) right)->funcid == bind_function())
			PG_RETURN_POINTER(NULL);
	}
	varnos = pull_varnos(req->root, left);
	if (!bms_get_singleton_member(varnos, &varno) ||
		varno > list_length(req->root->parse->rtable))
		PG_RETURN_POINTER(NULL);
	rte = rt_fetch(varno, req->root->parse->rtable);
	if (rte->rtekind != RTE_RELATION)
		PG_RETURN_POINTER(NULL);
	ixoid = index_of(rte->relid, varno, left);
	if (!OidIsValid(ixoid))
		PG_RETURN_POINTER(NULL);

	if (q)
	{
		bound = palloc(VARSIZE(q));
		memcpy(bound, q, VARSIZE(q));
		bound->index = ixoid;
		c = (Node *) makeConst(right->consttype, right->consttypmod, right->constcollid, -1,
							   PointerGetDatum(bound), false, false);
	}
	else
		c = (Node *) makeFuncExpr(bind_function(), exprType((Node *) right),
								  list_make2(right, makeConst(OIDOID, -1, InvalidOid, sizeof(Oid),
															 ObjectIdGetDatum(ixoid), false, true)),
								  InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
	/* The same operator, so that the index still matches it. */
	right_type = exprType((Node *) right);
	opno = OpernameGetOprid(list_make2(makeString(get_namespace_name(get_func_namespace(call->funcid))),
									   makeString(call->funcresulttype == BOOLOID ? "@@@" : "<@>")),
							TEXTOID, right_type);
	if (!OidIsValid(opno))
		PG_RETURN_POINTER(NULL);
	op = (OpExpr *) make_opclause(opno, call->funcresulttype, false, (Expr *) left, (Expr *) c,
								  InvalidOid, call->inputcollid);
	op->opfuncid = call->funcid;
	PG_RETURN_POINTER(op);
}
