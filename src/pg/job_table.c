/*
 * The table scipis_job and the advisory locks that go with it. Rows are
 * written as the bootstrap superuser: the table grants nothing, the
 * callers check privileges first.
 */
#include "jobs.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

static void
advisory_tag(LOCKTAG *tag, uint32 space, Oid database, uint32 key)
{
	SET_LOCKTAG_ADVISORY(*tag, database, space, key, 2);
}

bool
scipis_lock_try(uint32 space, Oid database, uint32 key)
{
	LOCKTAG		tag;

	advisory_tag(&tag, space, database, key);
	return LockAcquire(&tag, ExclusiveLock, true, true) != LOCKACQUIRE_NOT_AVAIL;
}

void
scipis_lock_release(uint32 space, Oid database, uint32 key)
{
	LOCKTAG		tag;

	advisory_tag(&tag, space, database, key);
	LockRelease(&tag, ExclusiveLock, true);
}

const char *
scipis_job_table(void)
{
	return psprintf("%s.scipis_job",
					quote_identifier(get_namespace_name(scipis_extension_schema())));
}

/* Runs one statement as the bootstrap superuser. */
void
scipis_job_exec(const char *sql, int nargs, Oid *types, Datum *values)
{
	Oid			save_user;
	int			save_sec;
	int			ret;

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "scipis: SPI_connect failed");
		ret = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
		if (ret < 0)
			elog(ERROR, "scipis: job table statement failed: %s", SPI_result_code_string(ret));
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
}

/* A query's single int8 result (0 when no row), as the superuser. */
int64
scipis_job_query_int8(const char *sql, int nargs, Oid *types, Datum *values)
{
	Oid			save_user;
	int			save_sec;
	volatile int64 result = 0;

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		int			ret;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "scipis: SPI_connect failed");
		ret = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
		if (ret < 0)
			elog(ERROR, "scipis: job table statement failed: %s", SPI_result_code_string(ret));
		if (SPI_processed > 0)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				result = DatumGetInt64(d);
		}
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
	return result;
}

int64
scipis_job_insert(const char *kind, const char *target, int64 collection_id, Oid role,
				  bool waited, bool scheduled, const char *args)
{
	Oid			types[7] = {TEXTOID, TEXTOID, INT8OID, OIDOID, BOOLOID, BOOLOID, TEXTOID};
	Datum		values[7];

	values[0] = CStringGetTextDatum(kind);
	values[1] = CStringGetTextDatum(target);
	values[2] = Int64GetDatum(collection_id);
	values[3] = ObjectIdGetDatum(role);
	values[4] = BoolGetDatum(waited);
	values[5] = BoolGetDatum(scheduled);
	values[6] = CStringGetTextDatum(args ? args : "");
	return scipis_job_query_int8(psprintf("INSERT INTO %s (kind, target, collection_id, submitted_by,"
										  " waited, scheduled, args)"
										  " VALUES ($1, $2, nullif($3, 0), $4, $5, $6, nullif($7, '')::jsonb)"
										  " RETURNING id", scipis_job_table()),
								 7, types, values);
}

/*
 * The row as last committed, whatever the caller's isolation level: a
 * waiting caller in REPEATABLE READ must still see the worker's updates.
 */
ScipisJobRow *
scipis_job_read_latest(int64 id)
{
	Oid			schema = scipis_extension_schema();
	Oid			relid = get_relname_relid("scipis_job", schema);
	Oid			indid = get_relname_relid("scipis_job_pkey", schema);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Snapshot	snap;
	ScipisJobRow *row = NULL;

	if (!OidIsValid(relid) || !OidIsValid(indid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the scipis job table or its index is missing")));
	rel = table_open(relid, AccessShareLock);
	snap = RegisterSnapshot(GetLatestSnapshot());
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(id));
	scan = systable_beginscan(rel, indid, true, snap, 1, &key);
	tup = systable_getnext(scan);
	/* Column numbers as src/sql/40_jobs.sql creates them. */
	if (HeapTupleIsValid(tup))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		isnull;
		Datum		d;

		row = palloc0(sizeof(ScipisJobRow));
		row->id = id;
		row->target = TextDatumGetCString(heap_getattr(tup, 2, desc, &isnull));
		d = heap_getattr(tup, 3, desc, &isnull);
		row->collection_id = isnull ? 0 : DatumGetInt64(d);
		row->state = TextDatumGetCString(heap_getattr(tup, 5, desc, &isnull));
		row->submitted_by = DatumGetObjectId(heap_getattr(tup, 16, desc, &isnull));
		row->attempts = DatumGetInt32(heap_getattr(tup, 22, desc, &isnull));
		row->cancel_requested = DatumGetBool(heap_getattr(tup, 23, desc, &isnull));
	}
	systable_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);
	return row;
}

/*
 * A running job whose job lock nobody holds lost its worker (a restart, a
 * crash, a killed process): queue it again. Taking the lock here for a
 * moment keeps a worker that is just starting from being taken for gone:
 * workers take it before their claim commits.
 */
int64
scipis_jobs_recover(void)
{
	Oid			save_user;
	int			save_sec;
	volatile int64 requeued = 0;

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		char	   *sql = psprintf("SELECT id FROM %s WHERE state IN ('queued', 'running')"
								   " AND (state = 'running' OR waited) ORDER BY id FOR UPDATE SKIP LOCKED",
								   scipis_job_table());
		List	   *lost = NIL;
		ListCell   *lc;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "scipis: SPI_connect failed");
		if (SPI_execute(sql, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "scipis: job recovery query failed");
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			int64		id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
														 SPI_tuptable->tupdesc, 1, &isnull));

			if (scipis_lock_try(SCIPIS_LOCK_JOB, MyDatabaseId, (uint32) id))
			{
				scipis_lock_release(SCIPIS_LOCK_JOB, MyDatabaseId, (uint32) id);
				lost = lappend(lost, palloc(sizeof(int64)));
				*(int64 *) llast(lost) = id;
			}
		}
		foreach(lc, lost)
		{
			Oid			types[1] = {INT8OID};
			Datum		values[1] = {Int64GetDatum(*(int64 *) lfirst(lc))};

			if (SPI_execute_with_args(psprintf("UPDATE %s SET state = CASE WHEN cancel_requested"
											   " THEN 'canceled' ELSE 'queued' END,"
											   " finished = CASE WHEN cancel_requested THEN now() END,"
											   " waited = false, worker_pid = NULL, phase = NULL"
											   " WHERE id = $1", scipis_job_table()),
									  1, types, values, NULL, false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "scipis: job recovery update failed");
			requeued++;
		}
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
	return requeued;
}

int64
scipis_jobs_queued(void)
{
	return scipis_job_query_int8(psprintf("SELECT count(*) FROM %s WHERE state = 'queued' AND NOT waited",
							  scipis_job_table()), 0, NULL, NULL);
}
