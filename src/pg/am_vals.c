/*
 * Filter columns: an index's columns after the first (`USING scipis (line,
 * ts)`) hold integers, floats, dates or timestamps, stored per row as keys
 * whose unsigned order is the type's order, so that `ts >= a AND ts < b`
 * is decided inside the index. An ORDER BY ... LIMIT with such a condition
 * then never hands the executor rows it will throw away, and ranges of
 * rows outside the condition are skipped without being scored.
 */
#include "am.h"

#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "scipis_pg.h"

#define SIGN_BIT (UINT64CONST(1) << 63)

static bool
is_filter_type(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case FLOAT4OID:
		case FLOAT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return true;
		default:
			return false;
	}
}

bool
scipis_am_filter_type(Oid type)
{
	return is_filter_type(type);
}

/* The key of d (of type type): integers and times by value, floats by bits. */
static uint64
key_of(Oid type, Datum d)
{
	switch (type)
	{
		case INT2OID:
			return (uint64) (int64) DatumGetInt16(d) ^ SIGN_BIT;
		case INT4OID:
			return (uint64) (int64) DatumGetInt32(d) ^ SIGN_BIT;
		case DATEOID:
			return (uint64) (int64) DatumGetDateADT(d) ^ SIGN_BIT;
		case INT8OID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return (uint64) DatumGetInt64(d) ^ SIGN_BIT;
		case FLOAT4OID:
		case FLOAT8OID:
			{
				double		f = type == FLOAT4OID ? (double) DatumGetFloat4(d) : DatumGetFloat8(d);
				uint64		bits;

				/* PostgreSQL's order: every NaN equal and above infinity; -0 = 0. */
				if (isnan(f))
					return PG_UINT64_MAX;
				if (f == 0)
					f = 0;
				memcpy(&bits, &f, sizeof(bits));
				return (bits & SIGN_BIT) ? ~bits : bits | SIGN_BIT;
			}
		default:
			elog(ERROR, "scipis: type %u is not a filter column type", type);
	}
	return 0;
}

void
scipis_am_check_columns(Relation index)
{
	TupleDesc	desc = RelationGetDescr(index);
	int			n = IndexRelationGetNumberOfKeyAttributes(index);
	int			i;

	if (n - 1 > SCIPIS_MAX_VALS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_COLUMNS),
				 errmsg("index \"%s\" has %d filter columns; scipis indexes hold at most %d",
						RelationGetRelationName(index), n - 1, SCIPIS_MAX_VALS)));
	if (index->rd_opcintype[0] != TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the first column of scipis index \"%s\" must be text (the searched column), not %s",
						RelationGetRelationName(index), format_type_be(TupleDescAttr(desc, 0)->atttypid)),
				 errhint("Put the text column first: USING scipis (body, ts).")));
	for (i = 1; i < n; i++)
		if (!is_filter_type(TupleDescAttr(desc, i)->atttypid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of scipis index \"%s\" is %s; columns after the first are filter columns of type smallint, integer, bigint, real, double precision, date, timestamp or timestamptz",
							i + 1, RelationGetRelationName(index),
							format_type_be(TupleDescAttr(desc, i)->atttypid))));
}

void
scipis_am_row_vals(Relation index, Datum *values, bool *isnull, uint64 *keys,
				   unsigned char *nulls, scipis_am_vals *out)
{
	TupleDesc	desc = RelationGetDescr(index);
	int			n = IndexRelationGetNumberOfKeyAttributes(index);
	int			i;

	out->n = n - 1;
	out->keys = n > 1 ? keys : NULL;
	out->nulls = n > 1 ? nulls : NULL;
	for (i = 1; i < n; i++)
	{
		nulls[i - 1] = isnull[i] ? 1 : 0;
		keys[i - 1] = isnull[i] ? 0 : key_of(TupleDescAttr(desc, i)->atttypid, values[i]);
	}
}

bool
scipis_am_key_filter(Relation index, ScanKey k, scipis_am_filter *f)
{
	Oid			coltype = TupleDescAttr(RelationGetDescr(index), k->sk_attno - 1)->atttypid;
	Oid			argtype = OidIsValid(k->sk_subtype) ? k->sk_subtype : coltype;
	uint64		key;

	if (k->sk_flags & SK_ISNULL)
		return false;
	/* The families mix integers with integers, floats with floats only. */
	if (!is_filter_type(argtype))
		elog(ERROR, "scipis: a condition on a filter column compares with type %u", argtype);
	key = key_of(argtype, k->sk_argument);
	f->col = k->sk_attno - 2;
	f->lo = 0;
	f->hi = PG_UINT64_MAX;
	switch (k->sk_strategy)
	{
		case BTLessStrategyNumber:
			if (key == 0)
				return false;
			f->hi = key - 1;
			break;
		case BTLessEqualStrategyNumber:
			f->hi = key;
			break;
		case BTEqualStrategyNumber:
			f->lo = f->hi = key;
			break;
		case BTGreaterEqualStrategyNumber:
			f->lo = key;
			break;
		case BTGreaterStrategyNumber:
			if (key == PG_UINT64_MAX)
				return false;
			f->lo = key + 1;
			break;
		default:
			elog(ERROR, "scipis: unknown strategy %d on a filter column", k->sk_strategy);
	}
	return true;
}
