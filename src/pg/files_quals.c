/*
 * Which WHERE conditions on scipis_files narrow the engine's reading, and
 * the ranges their values give. A range may be wider than its condition
 * (the condition still runs on every row), never narrower:
 * - numbers compared as numeric or float8 are widened past rounding;
 * - times: a row shows floor(ns / 1000) microseconds (search-semantics.md,
 *   "File metadata"), so "mtime > T" is "ns >= (T + 1) * 1000";
 * - paths: a path's text is its bytes unless they are not valid in the
 *   database encoding, when they are shown with \xNN escapes from the
 *   first bad byte on; so only what comes before a backslash in a value
 *   bounds the bytes, and only from below or as a prefix (an escape sorts
 *   below the byte it stands for). Order comparisons need the "C"
 *   collation; equality, LIKE and starts_with any deterministic one.
 */
#include "files_quals.h"

#include <math.h>

#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/pg_locale.h"
#include "utils/timestamp.h"

static Oid
column_type(int column)
{
	switch (column)
	{
		case FC_COLLECTION:
		case FC_PATH:
			return TEXTOID;
		case FC_SIZE:
		case FC_UID:
		case FC_GID:
			return INT8OID;
		case FC_MTIME:
		case FC_CTIME:
			return TIMESTAMPTZOID;
	}
	return InvalidOid;
}

/* The pushed-down column e is (a Var of rti, perhaps cast), or 0. */
static int
column_of(Node *e, Index rti, bool *cast)
{
	Var		   *v;

	*cast = false;
	while (IsA(e, RelabelType))
		e = (Node *) ((RelabelType *) e)->arg;
	if (IsA(e, FuncExpr) && list_length(((FuncExpr *) e)->args) == 1 &&
		(((FuncExpr *) e)->funcid == F_NUMERIC_INT8 || ((FuncExpr *) e)->funcid == F_FLOAT8_INT8))
	{
		e = linitial(((FuncExpr *) e)->args);
		*cast = true;
	}
	if (!IsA(e, Var))
		return 0;
	v = (Var *) e;
	if (v->varno != rti || v->varlevelsup != 0 || v->varattno < 1 ||
		v->vartype != column_type(v->varattno))
		return 0;
	if (*cast && v->vartype != INT8OID)
		return 0;
	return v->varattno;
}

static bool
value_ok(Node *e)
{
	return !contain_var_clause(e) && !contain_volatile_functions(e) && !contain_subplans(e);
}

static int
btree_strategy(Oid opno)
{
	ListCell   *lc;

	foreach(lc, get_op_btree_interpretation(opno))
	{
		OpBtreeInterpretation *o = lfirst(lc);

		if (o->strategy >= BTLessStrategyNumber && o->strategy <= BTGreaterStrategyNumber)
			return o->strategy;
	}
	return 0;
}

static bool
deterministic(Oid coll)
{
	return OidIsValid(coll) && get_collation_isdeterministic(coll);
}

bool
files_qual_classify(Expr *clause, Index rti, PushedCond *pc, Expr **value)
{
	Node	   *l,
			   *r;
	Oid			funcid,
				coll;
	bool		cast;
	int			how = 0;

	if (IsA(clause, FuncExpr) && ((FuncExpr *) clause)->funcid == F_STARTS_WITH &&
		list_length(((FuncExpr *) clause)->args) == 2)
	{
		l = linitial(((FuncExpr *) clause)->args);
		r = lsecond(((FuncExpr *) clause)->args);
		funcid = F_STARTS_WITH;
		coll = ((FuncExpr *) clause)->inputcollid;
	}
	else if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;

		set_opfuncid(op);
		l = linitial(op->args);
		r = lsecond(op->args);
		funcid = op->opfuncid;
		coll = op->inputcollid;
		how = btree_strategy(op->opno);
		if (funcid != F_TEXTLIKE && funcid != F_STARTS_WITH && how == 0)
			return false;
	}
	else
		return false;

	if (funcid == F_TEXTLIKE || funcid == F_STARTS_WITH)
	{
		if (column_of(l, rti, &cast) != FC_PATH || cast || !value_ok(r) || !deterministic(coll))
			return false;
		pc->column = FC_PATH;
		pc->how = funcid == F_TEXTLIKE ? FH_LIKE : FH_PREFIX;
		*value = (Expr *) r;
		return true;
	}
	pc->column = column_of(l, rti, &cast);
	if (pc->column != 0 && value_ok(r))
		*value = (Expr *) r;
	else
	{
		pc->column = column_of(r, rti, &cast);
		if (pc->column == 0 || !value_ok(l))
			return false;
		*value = (Expr *) l;
		how = BTMaxStrategyNumber + 1 - how;	/* v < col is col > v */
	}
	pc->how = how;
	switch (pc->column)
	{
		case FC_COLLECTION:
			return how == BTEqualStrategyNumber && deterministic(coll);
		case FC_PATH:
			if (how == BTEqualStrategyNumber)
				return deterministic(coll);
			return (how == BTGreaterStrategyNumber || how == BTGreaterEqualStrategyNumber) &&
				OidIsValid(coll) && lc_collate_is_c(coll);
		case FC_SIZE:
		case FC_UID:
		case FC_GID:
		case FC_MTIME:
		case FC_CTIME:
			return true;
	}
	return false;
}

void
files_filter_start(FilesFilterBuild *fb)
{
	scipis_file_filter_init(&fb->filter);
	fb->collection = NULL;
	fb->empty = false;
}

static int64
clamp_double(double d)
{
	if (d >= 9223372036854775807.0)
		return PG_INT64_MAX;
	if (d <= -9223372036854775808.0)
		return PG_INT64_MIN;
	return (int64) d;
}

static int64
clamp128(__int128 v)
{
	return v > PG_INT64_MAX ? PG_INT64_MAX : v < PG_INT64_MIN ? PG_INT64_MIN : (int64) v;
}

/* [lo, hi] holding every integer x with "x how v"; false: no narrowing. */
static bool
int_range(int how, Oid t, Datum v, int64 *lo, int64 *hi)
{
	*lo = PG_INT64_MIN;
	*hi = PG_INT64_MAX;
	if (t == INT2OID || t == INT4OID || t == INT8OID)
	{
		int64		x = t == INT2OID ? DatumGetInt16(v) : t == INT4OID ? DatumGetInt32(v) : DatumGetInt64(v);

		if (how == BTLessStrategyNumber)
			*hi = x == PG_INT64_MIN ? (*lo = 1, 0) : x - 1;
		else if (how == BTGreaterStrategyNumber)
			*lo = x == PG_INT64_MAX ? (*hi = 0, 1) : x + 1;
		else
		{
			if (how != BTGreaterEqualStrategyNumber)
				*hi = x;
			if (how != BTLessEqualStrategyNumber)
				*lo = x;
		}
		return true;
	}
	if (t == NUMERICOID || t == FLOAT8OID || t == FLOAT4OID)
	{
		double		d;
		double		slack;

		if (t == NUMERICOID)
			d = strtod(DatumGetCString(DirectFunctionCall1(numeric_out, v)), NULL);
		else
			d = t == FLOAT8OID ? DatumGetFloat8(v) : DatumGetFloat4(v);
		if (isnan(d))
			return false;
		/* Rounding to double may have moved it by an ulp or so. */
		slack = fabs(d) * 1e-15 + 1;
		if (how <= BTEqualStrategyNumber)
			*hi = clamp_double(ceil(d + slack));
		if (how >= BTEqualStrategyNumber)
			*lo = clamp_double(floor(d - slack));
		return true;
	}
	return false;
}

/* The same for a time in microseconds shown as floor(ns / 1000): in ns. */
static bool
time_range(int how, Oid t, Datum v, int64 *lo, int64 *hi)
{
	TimestampTz ts;
	int			overflow = 0;
	__int128	us;

	*lo = PG_INT64_MIN;
	*hi = PG_INT64_MAX;
	if (t == TIMESTAMPTZOID)
		ts = DatumGetTimestampTz(v);
	else if (t == TIMESTAMPOID)
		ts = timestamp2timestamptz_opt_overflow(DatumGetTimestamp(v), &overflow);
	else if (t == DATEOID)
		ts = date2timestamptz_opt_overflow(DatumGetDateADT(v), &overflow);
	else
		return false;
	if (overflow != 0)
		return false;
	us = (__int128) ts + (__int128) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC;
	switch (how)
	{
		case BTLessStrategyNumber:
			*hi = clamp128(us * 1000 - 1);
			break;
		case BTLessEqualStrategyNumber:
			*hi = clamp128((us + 1) * 1000 - 1);
			break;
		case BTEqualStrategyNumber:
			*lo = clamp128(us * 1000);
			*hi = clamp128((us + 1) * 1000 - 1);
			break;
		case BTGreaterEqualStrategyNumber:
			*lo = clamp128(us * 1000);
			break;
		case BTGreaterStrategyNumber:
			*lo = clamp128((us + 1) * 1000);
			break;
	}
	return true;
}

static void
narrow_u64(FilesFilterBuild *fb, uint64_t *min, uint64_t *max, uint64 top, int64 lo, int64 hi)
{
	if (hi < 0 || hi < lo || (lo > 0 && (uint64) lo > top))
	{
		fb->empty = true;
		return;
	}
	if (lo > 0 && (uint64) lo > *min)
		*min = (uint64) lo;
	if ((uint64) hi < *max)
		*max = (uint64) hi;
}

static void
narrow_i64(FilesFilterBuild *fb, int64_t *min, int64_t *max, int64 lo, int64 hi)
{
	if (hi < lo)
		fb->empty = true;
	*min = Max(*min, lo);
	*max = Min(*max, hi);
}

/* p with its last byte raised (trailing 0xff bytes dropped first); NULL: none. */
static char *
successor(const char *p, size_t n, size_t *len)
{
	char	   *s;

	while (n > 0 && (unsigned char) p[n - 1] == 0xff)
		n--;
	if (n == 0)
		return NULL;
	s = palloc(n);
	memcpy(s, p, n);
	s[n - 1] = (char) ((unsigned char) s[n - 1] + 1);
	*len = n;
	return s;
}

static int
bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int			c = memcmp(a, b, Min(an, bn));

	return c != 0 ? c : (an < bn ? -1 : an > bn ? 1 : 0);
}

static void
narrow_path(FilesFilterBuild *fb, int how, const char *s, size_t n)
{
	scipis_file_filter *f = &fb->filter;
	const char *bs = memchr(s, '\\', n);
	size_t		k = bs ? (size_t) (bs - s) : n;

	if (how == FH_LIKE)
		for (size_t i = 0; i < k; i++)
			if (s[i] == '%' || s[i] == '_')
				k = i;
	if (bytes_cmp(s, k, f->path_from ? f->path_from : "", f->path_from_len) > 0)
	{
		f->path_from = pnstrdup(s, k);
		f->path_from_len = k;
	}
	if (how == BTEqualStrategyNumber || how == FH_PREFIX || how == FH_LIKE)
	{
		size_t		len = 0;
		char	   *to = successor(s, k, &len);

		if (to && (!f->path_to_set || bytes_cmp(to, len, f->path_to, f->path_to_len) < 0))
		{
			f->path_to = to;
			f->path_to_len = len;
			f->path_to_set = 1;
		}
	}
}

void
files_filter_add(FilesFilterBuild *fb, const PushedCond *pc, Oid t, Datum v, bool isnull)
{
	scipis_file_filter *f = &fb->filter;
	int64		lo,
				hi;

	if (isnull)
	{
		fb->empty = true;		/* a comparison with NULL holds for no row */
		return;
	}
	switch (pc->column)
	{
		case FC_COLLECTION:
			{
				char	   *name = TextDatumGetCString(v);

				if (fb->collection && strcmp(fb->collection, name) != 0)
					fb->empty = true;
				fb->collection = name;
				break;
			}
		case FC_PATH:
			{
				text	   *s = DatumGetTextPP(v);

				narrow_path(fb, pc->how, VARDATA_ANY(s), VARSIZE_ANY_EXHDR(s));
				break;
			}
		case FC_SIZE:
			if (int_range(pc->how, t, v, &lo, &hi))
				narrow_u64(fb, &f->size_min, &f->size_max, PG_UINT64_MAX, lo, hi);
			break;
		case FC_UID:
		case FC_GID:
			if (int_range(pc->how, t, v, &lo, &hi))
			{
				uint64_t	min = pc->column == FC_UID ? f->uid_min : f->gid_min;
				uint64_t	max = pc->column == FC_UID ? f->uid_max : f->gid_max;

				narrow_u64(fb, &min, &max, PG_UINT32_MAX, lo, hi);
				if (pc->column == FC_UID)
					f->uid_min = (uint32_t) min, f->uid_max = (uint32_t) max;
				else
					f->gid_min = (uint32_t) min, f->gid_max = (uint32_t) max;
			}
			break;
		case FC_MTIME:
			if (time_range(pc->how, t, v, &lo, &hi))
				narrow_i64(fb, &f->mtime_min, &f->mtime_max, lo, hi);
			break;
		case FC_CTIME:
			if (time_range(pc->how, t, v, &lo, &hi))
				narrow_i64(fb, &f->ctime_min, &f->ctime_max, lo, hi);
			break;
	}
}

const char *
files_column_name(int column)
{
	static const char *const names[] = {NULL, "collection", "path", "size", "mtime", NULL, "ctime", "uid", "gid"};

	return column >= 1 && column <= FC_GID && names[column] ? names[column] : "?";
}

const char *
files_how_name(int how)
{
	static const char *const names[] = {NULL, "<", "<=", "=", ">=", ">", "^@", "LIKE"};

	return how >= 1 && how <= FH_LIKE ? names[how] : "?";
}
