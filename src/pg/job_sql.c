/*
 * The SQL side of jobs: scipis_index (queued, or run in a worker while the
 * caller waits), scipis_cancel_job, scipis_wait_job and scipis_run_jobs.
 */
#include "jobs.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(scipis_index_collection);
PG_FUNCTION_INFO_V1(scipis_cancel_job);
PG_FUNCTION_INFO_V1(scipis_wait_job);
PG_FUNCTION_INFO_V1(scipis_run_jobs);
PG_FUNCTION_INFO_V1(scipis_refresh_collection);
PG_FUNCTION_INFO_V1(scipis_wait_fresh);

/* Whatever ends the caller's wait (an error, a cancel, its exit) cancels the job. */
static void
caller_detached(dsm_segment *seg, Datum arg)
{
	ScipisWaitedJob *w = (ScipisWaitedJob *) DatumGetPointer(arg);

	pg_atomic_write_u32(&w->caller_gone, 1);
}

static char *
jsonb_text(Jsonb *jb)
{
	return JsonbToCString(NULL, &jb->root, VARSIZE(jb));
}

static dsm_segment *
waited_segment(int kind, int64 collection_id, const char *const parts[5], bool refresh)
{
	Size		size = offsetof(ScipisWaitedJob, strings);
	dsm_segment *seg;
	ScipisWaitedJob *w;
	char	   *p;

	for (int i = 0; i < 5; i++)
		size += strlen(parts[i]) + 1;
	seg = dsm_create(size, 0);
	w = dsm_segment_address(seg);
	memset(w, 0, offsetof(ScipisWaitedJob, strings));
	w->database = MyDatabaseId;
	w->role = GetUserId();
	w->kind = kind;
	w->refresh = refresh;
	w->collection_id = collection_id;
	pg_atomic_init_u32(&w->caller_gone, 0);
	pg_atomic_init_u32(&w->state, WAITED_STARTING);
	p = w->strings;
	for (int i = 0; i < 5; i++)
	{
		size_t		n = strlen(parts[i]) + 1;

		memcpy(p, parts[i], n);
		p += n;
	}
	return seg;
}

/*
 * Runs the build in a worker and waits; raises its error as its own. With a
 * deadline (not 0) that passes first, the job is canceled and -1 returned.
 */
static int64
run_waited(dsm_segment *seg, scipis_build_stats *stats, scipis_block_info *info,
		   TimestampTz deadline)
{
	ScipisWaitedJob *w = dsm_segment_address(seg);
	BackgroundWorker bw = {0};
	BackgroundWorkerHandle *handle;
	Oid			none = InvalidOid;
	int64		job;

	on_dsm_detach(seg, caller_detached, PointerGetDatum(w));
	scipis_worker_fill(&bw, "scipis_job_worker_main", "scipis job");
	bw.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	memcpy(bw.bgw_extra, &none, sizeof(Oid));
	bw.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&bw, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start a scipis job worker"),
				 errhint("Raise max_worker_processes, or queue the job with wait => false.")));
	for (;;)
	{
		pid_t		pid;

		if (pg_atomic_read_u32(&w->state) == WAITED_DONE)
			break;
		if (deadline != 0 && GetCurrentTimestamp() >= deadline)
		{
			/* The worker sees the caller gone and cancels the job. */
			dsm_detach(seg);
			return -1;
		}
		if (GetBackgroundWorkerPid(handle, &pid) == BGWH_STOPPED)
		{
			pg_read_barrier();
			if (pg_atomic_read_u32(&w->state) == WAITED_DONE)
				break;
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("the scipis job worker exited before the job ended"),
					 errhint("See the server log; the job (if it was queued) shows in scipis_jobs.")));
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	pg_read_barrier();
	cancel_on_dsm_detach(seg, caller_detached, PointerGetDatum(w));
	job = w->job_id;
	if (w->sqlerrcode != 0)
	{
		int			code = w->sqlerrcode;
		char	   *message = pstrdup(w->message);
		char	   *detail = w->detail[0] ? pstrdup(w->detail) : NULL;
		char	   *hint = w->hint[0] ? pstrdup(w->hint) : NULL;

		dsm_detach(seg);
		ereport(ERROR,
				(errcode(code),
				 errmsg_internal("%s", message),
				 detail ? errdetail_internal("%s", detail) : 0,
				 hint ? errhint("%s", hint) : 0));
	}
	if (stats)
		*stats = w->stats;
	if (info)
		*info = w->block_info;
	dsm_detach(seg);
	return job;
}

/*
 * The collection a job function names (argument 0), the caller's right to
 * do what (checked), the row type of its result, and its options (bad ones
 * fail here, not later in the worker).
 */
static ScipisCollection *
job_collection(FunctionCallInfo fcinfo, const char *what, TupleDesc *desc, scipis_options *opts)
{
	ScipisCollection *c;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("collection name must not be null")));
	c = scipis_collection_get(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	scipis_require_read_server_files(what);
	scipis_require_read(c);
	if (get_call_result_type(fcinfo, NULL, desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "scipis job functions return a row");
	*desc = BlessTupleDesc(*desc);
	scipis_options_from_jsonb(c->options, opts);
	return c;
}

Datum
scipis_index_collection(PG_FUNCTION_ARGS)
{
	ScipisCollection *c;
	scipis_options opts;
	scipis_build_stats stats;
	TupleDesc	desc;
	Datum		values[9];
	bool		nulls[9] = {0};
	double		mib;
	bool		wait = PG_ARGISNULL(1) ? true : PG_GETARG_BOOL(1);

	c = job_collection(fcinfo, "index a scipis collection", &desc, &opts);

	if (!wait)
	{
		for (int i = 0; i < 8; i++)
			nulls[i] = true;
		values[8] = Int64GetDatum(scipis_job_insert("index", c->name, c->id, GetUserId(),
													false, false, NULL));
		scipis_start_runner_at_commit();
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
	}

	{
		const char *parts[5] = {c->name, c->root, jsonb_text(c->options), scipis_collection_dir(c), ""};

		values[8] = Int64GetDatum(run_waited(waited_segment(JOB_COLLECTION, c->id, parts, false),
											 &stats, NULL, 0));
	}
	scipis_index_forget(c);
	mib = stats.seconds > 0 ? (double) stats.bytes / (1024.0 * 1024.0) / stats.seconds : 0;
	values[0] = Int64GetDatum((int64) stats.files);
	values[1] = Int64GetDatum((int64) stats.bytes);
	values[2] = Int64GetDatum((int64) stats.tokens);
	values[3] = Int64GetDatum((int64) stats.terms);
	values[4] = Int64GetDatum((int64) stats.segments);
	values[5] = Float8GetDatum(stats.seconds);
	values[6] = Float8GetDatum(mib);
	values[7] = Int64GetDatum((int64) stats.skipped);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

static ScipisJobRow *
job_or_error(int64 id)
{
	ScipisJobRow *row = scipis_job_read_latest(id);

	if (row == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("scipis job " INT64_FORMAT " does not exist", id)));
	return row;
}

static bool
finished(const char *state)
{
	return strcmp(state, "succeeded") == 0 || strcmp(state, "failed") == 0 ||
		strcmp(state, "canceled") == 0;
}

/* The submitter, the collection's owner and superusers may cancel. */
static void
require_may_cancel(const ScipisJobRow *row)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(row->collection_id)};
	Oid			owner;

	if (has_privs_of_role(GetUserId(), row->submitted_by))
		return;
	owner = (Oid) scipis_job_query_int8(psprintf("SELECT owner::oid::int8 FROM %s.scipis_collection WHERE id = $1",
												 quote_identifier(get_namespace_name(scipis_extension_schema()))),
										1, types, values);
	if (!OidIsValid(owner))
	{
		/* A block index's owner, by name. */
		Oid			ttypes[1] = {TEXTOID};
		Datum		tvalues[1] = {CStringGetTextDatum(row->target)};

		owner = (Oid) scipis_job_query_int8(psprintf("SELECT r.oid::int8 FROM %s.scipis_block_index b"
													 " JOIN pg_catalog.pg_roles r ON r.rolname = b.owner"
													 " WHERE b.name = $1",
													 quote_identifier(get_namespace_name(scipis_extension_schema()))),
											1, ttypes, tvalues);
	}
	if (OidIsValid(owner) && has_privs_of_role(GetUserId(), owner))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to cancel scipis job " INT64_FORMAT, row->id),
			 errdetail("Only the role that submitted it, the owner of its collection and superusers may cancel it.")));
}

/*
 * A queued job is canceled at once; a running one is asked to stop and
 * stops within a second of this transaction's commit. False when the job
 * had already ended.
 */
Datum
scipis_cancel_job(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	ScipisJobRow *row = job_or_error(id);
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	require_may_cancel(row);
	if (finished(row->state))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(scipis_job_query_int8(psprintf("UPDATE %s SET cancel_requested = true,"
												  " state = CASE WHEN state = 'queued' AND NOT waited"
												  " THEN 'canceled' ELSE state END,"
												  " finished = CASE WHEN state = 'queued' AND NOT waited"
												  " THEN now() END"
												  " WHERE id = $1 AND state IN ('queued', 'running')"
												  " RETURNING 1::int8", scipis_job_table()),
										 1, types, values) != 0);
}

/* Waits until the job ends (or the timeout passes); returns its state. */
Datum
scipis_wait_job(PG_FUNCTION_ARGS)
{
	int64		id;
	TimestampTz deadline = 0;
	ScipisJobRow *row;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("job id must not be null")));
	id = PG_GETARG_INT64(0);
	if (!PG_ARGISNULL(1))
	{
		Interval   *iv = PG_GETARG_INTERVAL_P(1);
		double		secs = iv->time / 1e6 + (iv->day + iv->month * 30.0) * 86400.0;

		if (secs < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("timeout must not be negative")));
		deadline = GetCurrentTimestamp() + (TimestampTz) Min(secs * 1e6, 1e15);
	}
	for (;;)
	{
		row = job_or_error(id);
		if (finished(row->state))
			break;
		if (deadline != 0 && GetCurrentTimestamp() >= deadline)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_TEXT_P(cstring_to_text(row->state));
}

/* Queues interrupted jobs again and starts a worker at commit. */
Datum
scipis_run_jobs(PG_FUNCTION_ARGS)
{
	int64		queued;

	scipis_jobs_recover();
	queued = scipis_jobs_queued();
	if (queued > 0)
		scipis_start_runner_at_commit();
	PG_RETURN_INT64(queued);
}

/* Dropping a collection cancels its jobs (the running ones stop at commit). */
void
scipis_jobs_cancel_collection(int64 collection_id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(collection_id)};

	scipis_job_exec(psprintf("UPDATE %s SET cancel_requested = true,"
							 " state = CASE WHEN state = 'queued' AND NOT waited THEN 'canceled' ELSE state END,"
							 " finished = CASE WHEN state = 'queued' AND NOT waited THEN now() END,"
							 " error_message = 'its collection was dropped'"
							 " WHERE collection_id = $1 AND state IN ('queued', 'running')",
							 scipis_job_table()),
					1, types, values);
}

int64
scipis_block_job_waited(const char *name, Jsonb *variables, Jsonb *options, const char *path,
						scipis_block_info *info)
{
	const char *parts[5] = {name, jsonb_text(variables), jsonb_text(options), path, ""};

	return run_waited(waited_segment(JOB_BLOCK, 0, parts, false), NULL, info, 0);
}

int64
scipis_block_job_queue(const char *name, Jsonb *variables, Jsonb *options, bool rebuild)
{
	char	   *args = psprintf("{\"variables\": %s, \"options\": %s, \"rebuild\": %s}",
								jsonb_text(variables), jsonb_text(options),
								rebuild ? "true" : "false");
	int64		id = scipis_job_insert("block index", name, 0, GetUserId(), false, false, args);

	scipis_start_runner_at_commit();
	return id;
}

/*
 * A text[] of paths, checked, as a JSON array (the job's args); the
 * strings themselves in *list, their count in *count.
 */
static char *
paths_json(ArrayType *arr, const char ***list, int *count)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	StringInfoData buf;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	*list = palloc(sizeof(char *) * Max(n, 1));
	*count = n;
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("paths must name at least one path"),
				 errhint("Pass NULL to refresh the whole tree.")));
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("paths must not contain NULL")));
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		(*list)[i] = TextDatumGetCString(elems[i]);
		escape_json(&buf, (*list)[i]);
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/* Runs a refresh of the whole tree in a worker and waits (or until deadline: -1). */
static int64
refresh_waited(ScipisCollection *c, scipis_build_stats *stats, TimestampTz deadline)
{
	const char *parts[5] = {c->name, c->root, jsonb_text(c->options), scipis_collection_dir(c), ""};
	int64		job = run_waited(waited_segment(JOB_COLLECTION, c->id, parts, true), stats, NULL,
								 deadline);

	scipis_index_forget(c);
	return job;
}

Datum
scipis_refresh_collection(PG_FUNCTION_ARGS)
{
	ScipisCollection *c;
	scipis_options opts;
	scipis_build_stats stats;
	TupleDesc	desc;
	Datum		values[10];
	bool		nulls[10] = {0};
	const char **list = NULL;
	int			n = 0;
	char	   *paths = PG_ARGISNULL(1) ? NULL : paths_json(PG_GETARG_ARRAYTYPE_P(1), &list, &n);
	bool		wait = PG_ARGISNULL(2) ? true : PG_GETARG_BOOL(2);

	c = job_collection(fcinfo, "refresh a scipis collection", &desc, &opts);
	if (!wait)
	{
		for (int i = 0; i < 9; i++)
			nulls[i] = true;
		values[9] = Int64GetDatum(scipis_job_insert("refresh", c->name, c->id, GetUserId(), false,
													false, paths ? psprintf("{\"paths\": %s}", paths) : NULL));
		scipis_start_runner_at_commit();
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
	}
	if (paths != NULL)
	{
		/* Named paths are refreshed here: a worker would cost more than their work. */
		scipis_refresh_here(c, list, n, &stats);
		nulls[9] = true;
	}
	else
		values[9] = Int64GetDatum(refresh_waited(c, &stats, 0));
	values[0] = Int64GetDatum((int64) stats.files_added);
	values[1] = Int64GetDatum((int64) stats.files_changed);
	values[2] = Int64GetDatum((int64) stats.files_appended);
	values[3] = Int64GetDatum((int64) stats.files_deleted);
	values[4] = Int64GetDatum((int64) stats.bytes_read);
	values[5] = Float8GetDatum(stats.seconds);
	values[6] = Int64GetDatum((int64) stats.files);
	values[7] = Int64GetDatum((int64) stats.deleted_docs);
	values[8] = Int64GetDatum((int64) stats.segments);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* The collection's fresh_as_of, or DT_NOBEGIN when unknown. */
static TimestampTz
fresh_as_of(ScipisCollection *c)
{
	int64		ns;

	return scipis_fresh_as_of(scipis_collection_dir(c), &ns) ? scipis_timestamp(ns) : DT_NOBEGIN;
}

/* A refresh or build of the collection is queued or running, or its watcher runs. */
static bool
refresh_pending(ScipisCollection *c)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(c->id)};

	if (scipis_watched(c->options) && scipis_watcher_running(c->id))
		return true;
	return scipis_job_query_int8(psprintf("SELECT count(*) FROM %s WHERE collection_id = $1"
										  " AND kind IN ('index', 'refresh')"
										  " AND state IN ('queued', 'running')",
										  scipis_job_table()), 1, types, values) > 0;
}

Datum
scipis_wait_fresh(PG_FUNCTION_ARGS)
{
	ScipisCollection *c;
	TimestampTz as_of = PG_ARGISNULL(1) ? GetCurrentTransactionStartTimestamp() : PG_GETARG_TIMESTAMPTZ(1);
	TimestampTz deadline = 0;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("collection name must not be null")));
	c = scipis_collection_get(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	scipis_require_read(c);
	if (!PG_ARGISNULL(2))
	{
		Interval   *t = PG_GETARG_INTERVAL_P(2);

		if (t->month != 0 || t->day != 0 || t->time < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("timeout must be a non-negative interval of hours, minutes and seconds")));
		deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), t->time / 1000);
		if (deadline == 0)
			deadline = 1;
	}
	for (;;)
	{
		if (fresh_as_of(c) >= as_of)
			PG_RETURN_BOOL(true);
		if (deadline != 0 && GetCurrentTimestamp() >= deadline)
			PG_RETURN_BOOL(false);
		/* A refresh must start after as_of to see every change before it. */
		if (as_of > GetCurrentTimestamp() || refresh_pending(c))
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 50,
							 PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		scipis_require_read_server_files("refresh a scipis collection");
		if (refresh_waited(c, NULL, deadline) < 0)
			PG_RETURN_BOOL(false);
	}
}
