/*
 * The job worker. Started with a DSM handle it runs the one job its caller
 * waits on; started without, it is a queue runner: it takes a
 * scipis.max_workers slot and runs the queued jobs of its database one
 * after another. Either way a job's build runs on engine threads while
 * this process updates the job's row twice a second and watches for a
 * cancel, SIGTERM and the postmaster's death.
 */
#include "jobs.h"

#include <unistd.h>

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "utils/lsyscache.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#define PROGRESS_MS 500

static volatile sig_atomic_t got_sigterm = false;
static ScipisWaitedJob *waited = NULL;
static MemoryContext job_cxt = NULL;
static scipis_build *current_build = NULL;
static bool slot_held = false;
static uint32 slot_key = 0;
static int	threads_held = 0;
static uint32 thread_keys[1024];

/* How a run ended. */
typedef enum
{
	RUN_SUCCEEDED,
	RUN_FAILED,
	RUN_CANCELED,
	RUN_INTERRUPTED				/* SIGTERM: queued again, resumed after restart */
} RunEnd;

typedef struct JobRun
{
	int64		job_id;
	ScipisCollection c;
	char	   *dir;
	Oid			role;
	bool		collection_locked;	/* claimed with its collection's lock */
	scipis_build_stats stats;
	ErrorData  *error;
} JobRun;

static void
handle_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

static void
begin_tx(void)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
}

static void
commit_tx(void)
{
	PopActiveSnapshot();
	CommitTransactionCommand();
}

static bool
caller_gone(void)
{
	return waited != NULL && pg_atomic_read_u32(&waited->caller_gone) != 0;
}

/* 1 when the job's row asks for a cancel (checked outside any transaction). */
static bool
cancel_requested(int64 job_id)
{
	ScipisJobRow *row;
	bool		r;

	begin_tx();
	row = scipis_job_read_latest(job_id);
	r = row == NULL || row->cancel_requested || strcmp(row->state, "canceled") == 0;
	commit_tx();
	return r;
}

static int
machine_cores(void)
{
	long		n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (int) n;
}

static bool
take_slot(void)
{
	for (int i = 0; i < scipis_max_workers; i++)
		if (scipis_lock_try(SCIPIS_LOCK_SLOT, InvalidOid, (uint32) i))
		{
			slot_held = true;
			slot_key = (uint32) i;
			return true;
		}
	return false;
}

static void
release_slot(void)
{
	if (slot_held)
		scipis_lock_release(SCIPIS_LOCK_SLOT, InvalidOid, slot_key);
	slot_held = false;
}

/* Takes up to want of the scipis.max_threads tokens; returns how many. */
static int
take_threads(int want)
{
	int			limit = scipis_max_threads > 0 ? scipis_max_threads : machine_cores();

	limit = Min(limit, (int) lengthof(thread_keys));
	for (int i = 0; i < limit && threads_held < want; i++)
		if (scipis_lock_try(SCIPIS_LOCK_THREAD, InvalidOid, (uint32) i))
			thread_keys[threads_held++] = (uint32) i;
	return threads_held;
}

static void
release_threads(void)
{
	for (int i = 0; i < threads_held; i++)
		scipis_lock_release(SCIPIS_LOCK_THREAD, InvalidOid, thread_keys[i]);
	threads_held = 0;
}

/*
 * Waits, a tick at a time, until try() succeeds; false when the job was
 * canceled or the server is stopping meanwhile.
 */
static bool
wait_for(bool (*try) (void *), void *arg, int64 job_id)
{
	TimestampTz last_check = GetCurrentTimestamp();

	for (;;)
	{
		bool		ok;

		begin_tx();
		ok = try(arg);
		commit_tx();
		if (ok)
			return true;
		if (got_sigterm || caller_gone())
			return false;
		if (TimestampDifferenceExceeds(last_check, GetCurrentTimestamp(), PROGRESS_MS))
		{
			if (cancel_requested(job_id))
				return false;
			last_check = GetCurrentTimestamp();
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

static bool
try_collection_lock(void *arg)
{
	return scipis_lock_try(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) ((JobRun *) arg)->c.id);
}

static bool
try_slot(void *arg)
{
	return take_slot();
}

static bool
try_threads(void *arg)
{
	return take_threads(*(int *) arg) > 0;
}

static const char *
phase_name(int phase)
{
	switch (phase)
	{
		case SCIPIS_PHASE_CRAWLING:
			return "crawling";
		case SCIPIS_PHASE_INDEXING:
			return "indexing";
		default:
			return "flushing";
	}
}

/* Writes the progress; returns whether the row asks for a cancel. */
static bool
report_progress(int64 job_id, const scipis_build_progress *p, const char *phase)
{
	Oid			types[8] = {INT8OID, TEXTOID, INT8OID, INT8OID, INT8OID, INT8OID, BOOLOID,
	FLOAT8OID};
	Datum		values[8];
	bool		cancel;

	values[0] = Int64GetDatum(job_id);
	values[1] = CStringGetTextDatum(phase);
	values[2] = Int64GetDatum((int64) p->files_done);
	values[3] = Int64GetDatum((int64) p->bytes_done);
	values[4] = Int64GetDatum((int64) p->files_found);
	values[5] = Int64GetDatum((int64) p->bytes_found);
	values[6] = BoolGetDatum(p->crawl_done != 0);
	values[7] = Float8GetDatum(p->seconds);
	begin_tx();
	cancel = scipis_job_query_int8(psprintf("UPDATE %s SET phase = $2, files_done = $3,"
											" bytes_done = $4, files_found = $5, bytes_found = $6,"
											" crawl_done = $7, run_seconds = $8 WHERE id = $1"
											" RETURNING (cancel_requested OR state = 'canceled')::int::int8",
											scipis_job_table()),
								   8, types, values) != 0;
	commit_tx();
	return cancel;
}

/* Raises unless the job's role may still index the collection. */
static void
check_privileges(JobRun *r)
{
	Oid			save_user;
	int			save_sec;

	if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(r->role)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the role that submitted scipis job " INT64_FORMAT " no longer exists",
						r->job_id)));
	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(r->role, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		scipis_require_read_server_files("index a scipis collection");
		scipis_require_read(&r->c);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
}

static void
mark_running(JobRun *r)
{
	Oid			types[3] = {INT8OID, INT8OID, INT8OID};
	Datum		values[3];
	int64		files = -1,
				bytes = -1;
	scipis_error err;
	scipis_index *ix = scipis_index_open(r->dir, &err);

	if (ix != NULL)
	{
		scipis_index_info info;

		if (scipis_index_info_get(ix, &info, &err) == 0)
		{
			files = (int64) info.files;
			bytes = (int64) info.bytes;
		}
		scipis_index_close(ix);
	}
	values[0] = Int64GetDatum(r->job_id);
	values[1] = Int64GetDatum(files);
	values[2] = Int64GetDatum(bytes);
	scipis_job_exec(psprintf("UPDATE %s SET state = 'running', phase = 'crawling',"
							 " started = now(), finished = NULL, worker_pid = pg_backend_pid(),"
							 " attempts = attempts + 1, files_done = 0, bytes_done = 0,"
							 " files_found = 0, bytes_found = 0, crawl_done = false,"
							 " run_seconds = 0, expected_files = nullif($2, -1),"
							 " expected_bytes = nullif($3, -1) WHERE id = $1",
							 scipis_job_table()),
					3, types, values);
}

/*
 * Builds the collection; the caller holds the collection lock and the
 * threads. Returns the end; errors are left in r->error.
 */
static RunEnd
build(JobRun *r, int threads)
{
	scipis_options opts;
	scipis_error err;
	scipis_build_progress p;
	TimestampTz last = 0;
	bool		cancel = false;
	RunEnd		end;

	begin_tx();
	check_privileges(r);
	mark_running(r);
	{
		MemoryContext old = MemoryContextSwitchTo(job_cxt);

		scipis_options_from_jsonb(r->c.options, &opts);
		MemoryContextSwitchTo(old);
	}
	commit_tx();
	if (opts.indexer_threads == 0 || opts.indexer_threads > threads)
		opts.indexer_threads = threads;
	if (opts.reader_threads == 0 || opts.reader_threads > threads)
		opts.reader_threads = Min(threads, 4);

	current_build = scipis_build_start_ex(r->dir, r->c.root, &opts, SCIPIS_BUILD_COUNT_BYTES, &err);
	if (current_build == NULL)
		scipis_raise(&err);
	while (!scipis_build_wait(current_build, 100))
	{
		if (!PostmasterIsAlive())
		{
			scipis_build_abort(current_build);
			proc_exit(1);
		}
		if (got_sigterm || caller_gone())
			break;
		if (TimestampDifferenceExceeds(last, GetCurrentTimestamp(), PROGRESS_MS))
		{
			scipis_build_get_progress(current_build, &p);
			cancel = report_progress(r->job_id, &p, phase_name(p.phase));
			last = GetCurrentTimestamp();
			if (cancel)
				break;
		}
	}
	if (got_sigterm || caller_gone() || cancel)
	{
		scipis_build_abort(current_build);
		current_build = NULL;
		return got_sigterm && !cancel && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
	}
	scipis_build_get_progress(current_build, &p);
	(void) report_progress(r->job_id, &p, "committing");
	end = scipis_build_finish(current_build, &r->stats, &err) == 0 ? RUN_SUCCEEDED : RUN_FAILED;
	current_build = NULL;
	if (end == RUN_FAILED)
		scipis_raise(&err);
	return end;
}

static char *
result_json(const scipis_build_stats *s)
{
	double		mib = s->seconds > 0 ? (double) s->bytes / (1024.0 * 1024.0) / s->seconds : 0;

	return psprintf("{\"files\": " UINT64_FORMAT ", \"bytes\": " UINT64_FORMAT
					", \"tokens\": " UINT64_FORMAT ", \"terms\": " UINT64_FORMAT
					", \"segments\": " UINT64_FORMAT ", \"seconds\": %.6f"
					", \"mib_per_s\": %.3f, \"skipped\": " UINT64_FORMAT "}",
					(uint64) s->files, (uint64) s->bytes, (uint64) s->tokens,
					(uint64) s->terms, (uint64) s->segments, s->seconds, mib,
					(uint64) s->skipped);
}

static void
record_end(JobRun *r, RunEnd end)
{
	Oid			types[5] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	Datum		values[5];
	const char *state;
	char	   *sql;

	state = end == RUN_SUCCEEDED ? "succeeded" : end == RUN_FAILED ? "failed"
		: end == RUN_CANCELED ? "canceled" : "queued";
	begin_tx();
	values[0] = Int64GetDatum(r->job_id);
	values[1] = CStringGetTextDatum(state);
	values[2] = CStringGetTextDatum(end == RUN_SUCCEEDED ? result_json(&r->stats) : "null");
	values[3] = CStringGetTextDatum(end == RUN_FAILED && r->error ? r->error->message : "");
	values[4] = CStringGetTextDatum(end == RUN_FAILED && r->error
									? unpack_sql_state(r->error->sqlerrcode) : "");
	if (end == RUN_INTERRUPTED)
		sql = psprintf("UPDATE %s SET state = 'queued', phase = NULL, worker_pid = NULL,"
					   " waited = false WHERE id = $1", scipis_job_table());
	else
		sql = psprintf("UPDATE %s SET state = $2, finished = now(), worker_pid = NULL,"
					   " phase = CASE WHEN $2 <> 'succeeded' THEN phase END,"
					   " result = $3::jsonb, error_message = CASE WHEN $2 = 'canceled'"
					   " THEN error_message ELSE nullif($4, '') END,"
					   " error_sqlstate = nullif($5, '') WHERE id = $1", scipis_job_table());
	scipis_job_exec(sql, end == RUN_INTERRUPTED ? 1 : 5, types, values);
	commit_tx();
}

/* The run of one job whose row exists and whose job lock this process holds. */
static RunEnd
run_job(JobRun *r)
{
	RunEnd		end = RUN_FAILED;
	int			want;
	bool		locked = r->collection_locked;
	bool		own_slot = !slot_held;

	PG_TRY();
	{
		if (!locked && !wait_for(try_collection_lock, r, r->job_id))
			end = got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
		else
		{
			locked = true;
			if (own_slot && !wait_for(try_slot, NULL, r->job_id))
				end = got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
			else
			{
				scipis_options opts;

				begin_tx();
				scipis_options_from_jsonb(r->c.options, &opts);
				commit_tx();
				want = opts.indexer_threads > 0 ? opts.indexer_threads : machine_cores();
				if (!wait_for(try_threads, &want, r->job_id))
					end = got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
				else
					end = build(r, threads_held);
			}
		}
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(job_cxt);
		r->error = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		if (current_build != NULL)
		{
			scipis_build_abort(current_build);
			current_build = NULL;
		}
		end = RUN_FAILED;
	}
	PG_END_TRY();

	/* A drop of the collection while it ran shows as its files vanishing. */
	if (end == RUN_FAILED && cancel_requested(r->job_id))
		end = RUN_CANCELED;
	record_end(r, end);
	release_threads();
	if (own_slot)
		release_slot();
	if (locked)
		scipis_lock_release(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) r->c.id);
	scipis_lock_release(SCIPIS_LOCK_JOB, MyDatabaseId, (uint32) r->job_id);
	return end;
}

static void
copy_out(char *dst, size_t size, const char *src)
{
	strlcpy(dst, src ? src : "", size);
}

/* The worker of one waited job: its parameters come from the DSM segment. */
static void
run_waited(void)
{
	JobRun		r = {0};
	const char *volatile s = waited->strings;
	RunEnd		end;

	MemoryContextSwitchTo(job_cxt);
	r.c.id = waited->collection_id;
	r.c.name = pstrdup(s);
	s += strlen(s) + 1;
	r.c.root = pstrdup(s);
	s += strlen(s) + 1;
	r.role = waited->role;
	PG_TRY();
	{
		begin_tx();
		r.c.options = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(s)));
		{
			MemoryContext old = MemoryContextSwitchTo(job_cxt);

			r.c.options = DatumGetJsonbPCopy(JsonbPGetDatum(r.c.options));
			MemoryContextSwitchTo(old);
		}
		s += strlen(s) + 1;
		r.dir = MemoryContextStrdup(job_cxt, s);
		r.c.owner = InvalidOid;
		r.job_id = scipis_job_insert(&r.c, r.role, true, false, -1, -1);
		if (!scipis_lock_try(SCIPIS_LOCK_JOB, MyDatabaseId, (uint32) r.job_id))
			elog(ERROR, "scipis: job lock of a new job is taken");
		commit_tx();
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(job_cxt);
		e = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		waited->sqlerrcode = e->sqlerrcode;
		copy_out(waited->message, sizeof(waited->message), e->message);
		pg_write_barrier();
		pg_atomic_write_u32(&waited->state, WAITED_DONE);
		return;
	}
	PG_END_TRY();
	waited->job_id = r.job_id;
	pg_write_barrier();
	pg_atomic_write_u32(&waited->state, WAITED_QUEUED);
	pgstat_report_activity(STATE_RUNNING, psprintf("scipis job " INT64_FORMAT ": index %s",
												   r.job_id, r.c.name));

	end = run_job(&r);
	waited->stats = r.stats;
	if (end == RUN_FAILED && r.error)
	{
		waited->sqlerrcode = r.error->sqlerrcode;
		copy_out(waited->message, sizeof(waited->message), r.error->message);
		copy_out(waited->detail, sizeof(waited->detail), r.error->detail);
		copy_out(waited->hint, sizeof(waited->hint), r.error->hint);
	}
	else if (end != RUN_SUCCEEDED)
	{
		waited->sqlerrcode = end == RUN_INTERRUPTED ? ERRCODE_ADMIN_SHUTDOWN : ERRCODE_QUERY_CANCELED;
		snprintf(waited->message, sizeof(waited->message),
				 end == RUN_INTERRUPTED
				 ? "scipis job " INT64_FORMAT " was interrupted by a server shutdown; it runs again after the restart"
				 : "scipis job " INT64_FORMAT " was canceled", r.job_id);
	}
	pg_write_barrier();
	pg_atomic_write_u32(&waited->state, WAITED_DONE);
}

/* Claims the oldest queued job whose collection is free; 0 when none. */
static int64
claim(JobRun *r)
{
	char	   *sql;
	int64		got = 0;
	int64		gone = 0;

	begin_tx();
	sql = psprintf("SELECT j.id, j.submitted_by, c.id, c.name, c.root, c.options,"
							   " c.owner::oid, j.collection_id FROM %s j"
							   " LEFT JOIN %s.scipis_collection c ON c.id = j.collection_id"
							   " WHERE j.state = 'queued' AND NOT j.waited"
							   " ORDER BY j.id FOR UPDATE OF j SKIP LOCKED",
							   scipis_job_table(),
							   quote_identifier(get_namespace_name(scipis_extension_schema())));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "scipis: SPI_connect failed");
	if (SPI_execute(sql, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "scipis: job queue query failed");
	for (uint64 i = 0; i < SPI_processed && got == 0; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		int64		cid;

		(void) SPI_getbinval(t, d, 3, &isnull);
		if (isnull)
		{
			/* Its collection was dropped: nothing to run. */
			gone = id;
			continue;
		}
		cid = DatumGetInt64(SPI_getbinval(t, d, 3, &isnull));
		if (!scipis_lock_try(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) cid))
			continue;
		if (!scipis_lock_try(SCIPIS_LOCK_JOB, MyDatabaseId, (uint32) id))
		{
			scipis_lock_release(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) cid);
			continue;
		}
		r->collection_locked = true;
		{
			MemoryContext old = MemoryContextSwitchTo(job_cxt);

			r->job_id = id;
			r->role = DatumGetObjectId(SPI_getbinval(t, d, 2, &isnull));
			r->c.id = cid;
			r->c.name = SPI_getvalue(t, d, 4);
			r->c.root = SPI_getvalue(t, d, 5);
			r->c.options = DatumGetJsonbPCopy(SPI_getbinval(t, d, 6, &isnull));
			r->c.owner = DatumGetObjectId(SPI_getbinval(t, d, 7, &isnull));
			MemoryContextSwitchTo(old);
		}
		got = id;
	}
	SPI_finish();
	if (got != 0)
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(got)};

		scipis_job_exec(psprintf("UPDATE %s SET state = 'running', worker_pid = pg_backend_pid()"
								 " WHERE id = $1", scipis_job_table()), 1, types, values);
		r->dir = MemoryContextStrdup(job_cxt, scipis_collection_dir(&r->c));
	}
	else if (gone != 0)
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(gone)};

		scipis_job_exec(psprintf("UPDATE %s SET state = 'canceled', finished = now()"
								 " WHERE id = $1", scipis_job_table()), 1, types, values);
	}
	commit_tx();
	return got != 0 ? got : gone != 0 ? -1 : 0;
}

static bool
queue_empty(void)
{
	bool		empty;

	begin_tx();
	empty = scipis_jobs_queued() == 0;
	commit_tx();
	return empty;
}

/*
 * Runs queued jobs while there are any. A runner that finds no free slot
 * leaves: the runners holding the slots take the queue's next jobs, and
 * one that gives its slot up looks at the queue once more afterwards.
 */
static void
run_queue(void)
{
	for (;;)
	{
		begin_tx();
		scipis_jobs_recover();
		commit_tx();
		begin_tx();
		if (!take_slot())
		{
			commit_tx();
			return;
		}
		commit_tx();
		for (;;)
		{
			JobRun		r = {0};
			int64		id;

			if (got_sigterm)
				break;
			id = claim(&r);
			if (id == 0)
				break;
			if (id < 0)
				continue;
			pgstat_report_activity(STATE_RUNNING, psprintf("scipis job " INT64_FORMAT ": index %s",
														   r.job_id, r.c.name));
			(void) run_job(&r);
			pgstat_report_activity(STATE_IDLE, NULL);
			MemoryContextReset(job_cxt);
		}
		release_slot();
		if (got_sigterm || queue_empty())
			return;
	}
}

void
scipis_job_worker_main(Datum arg)
{
	dsm_handle handle = DatumGetUInt32(arg);
	Oid			database;
	dsm_segment *seg = NULL;

	pqsignal(SIGTERM, handle_sigterm);
	BackgroundWorkerUnblockSignals();
	job_cxt = AllocSetContextCreate(TopMemoryContext, "scipis job", ALLOCSET_DEFAULT_SIZES);
	memcpy(&database, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	if (handle != DSM_HANDLE_INVALID)
	{
		CurrentResourceOwner = ResourceOwnerCreate(NULL, "scipis job");
		seg = dsm_attach(handle);
		if (seg == NULL)
			proc_exit(0);		/* the caller gave up before we started */
		dsm_pin_mapping(seg);
		waited = dsm_segment_address(seg);
		database = waited->database;
	}
	BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
	if (waited != NULL)
		run_waited();
	else
		run_queue();
	/* Jobs queued meanwhile for the collection this one held. */
	if (waited != NULL && !got_sigterm && !queue_empty())
		(void) scipis_start_runner(MyDatabaseId);
	proc_exit(0);
}

/* Starts a queue runner for the database; false when no worker slot is free. */
bool
scipis_start_runner(Oid database)
{
	BackgroundWorker w = {0};
	BackgroundWorkerHandle *h;

	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(w.bgw_library_name, "scipis", BGW_MAXLEN);
	strlcpy(w.bgw_function_name, "scipis_job_worker_main", BGW_MAXLEN);
	snprintf(w.bgw_name, BGW_MAXLEN, "scipis job runner");
	snprintf(w.bgw_type, BGW_MAXLEN, "scipis job runner");
	w.bgw_main_arg = UInt32GetDatum(DSM_HANDLE_INVALID);
	memcpy(w.bgw_extra, &database, sizeof(Oid));
	return RegisterDynamicBackgroundWorker(&w, &h);
}

static bool start_at_commit = false;
static bool xact_callback_registered = false;

static void
start_runner_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT && start_at_commit)
	{
		start_at_commit = false;
		if (!scipis_start_runner(MyDatabaseId))
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not start a scipis job worker: queued jobs wait for a free worker"),
					 errhint("Raise max_worker_processes, or run SELECT scipis_run_jobs() later.")));
	}
	else if (event == XACT_EVENT_ABORT)
		start_at_commit = false;
}

void
scipis_start_runner_at_commit(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(start_runner_callback, NULL);
		xact_callback_registered = true;
	}
	start_at_commit = true;
}
