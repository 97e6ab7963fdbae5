/*
 * scipis_index_segments(index): the segments the index's metapage lists,
 * oldest first, as pgstatindex shows a B-tree's shape: how many there are
 * and where their pages go, so that merges can be watched; and the checks
 * of every SQL function that inspects an index.
 */
#include "am.h"

#include "access/table.h"
#include "catalog/index.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "scipis_pg.h"

PG_FUNCTION_INFO_V1(scipis_index_segments);

/*
 * indexoid as a scipis index whose table the user may read, for the SQL
 * functions that inspect one; with heap, its table opened first (tables
 * are locked before their indexes).
 */
Relation
scipis_am_open_for_sql(Oid indexoid, Relation *heap)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	index;

	if (!OidIsValid(heapoid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a scipis index", get_rel_name(indexoid))));
	if (heap)
		*heap = table_open(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_rel->relam != get_index_am_oid("scipis", false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a scipis index", RelationGetRelationName(index))));
	if (pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(heapoid))));
	return index;
}

Datum
scipis_index_segments(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	index;
	ScipisMeta	meta;
	uint32		i;

	InitMaterializedSRF(fcinfo, 0);
	index = scipis_am_open_for_sql(indexoid, NULL);
	LockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
	scipis_am_read_meta(index, &meta);
	UnlockPage(index, SCIPIS_LOCK_VIEW, ShareLock);
	for (i = 0; i < meta.nsegments; i++)
	{
		const scipis_am_segment *s = &meta.segments[i];
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = Int32GetDatum((int32) i + 1);
		values[1] = Int64GetDatum((int64) s->id);
		values[2] = Int64GetDatum((int64) s->start);
		values[3] = Int64GetDatum((int64) s->npages);
		values[4] = Int64GetDatum((int64) s->bytes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	index_close(index, AccessShareLock);
	PG_RETURN_VOID();
}
