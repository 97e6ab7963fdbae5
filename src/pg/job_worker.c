/*
 * The job worker. Started with a DSM handle it runs the one job its caller
 * waits on; started without, it is a queue runner: it takes a
 * scipis.max_workers slot and runs the queued jobs of its database one
 * after another. Either way a job's build runs on engine threads while
 * this process updates the job's row twice a second and watches for a
 * cancel, SIGTERM and the postmaster's death.
 */
#include "job_worker.h"

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
#include "common/hashfn.h"

#define PROGRESS_MS 500
/* A shutdown waits this long for the build to flush what it holds. */
#define PAUSE_MS 2000

static volatile sig_atomic_t got_sigterm = false;
static ScipisWaitedJob *waited = NULL;
MemoryContext job_cxt = NULL;
static scipis_build *current_build = NULL;
static bool slot_held = false;
static uint32 slot_key = 0;
static int	threads_held = 0;
static uint32 thread_keys[1024];

static void
handle_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

const char *
job_kind_name(const JobRun *r)
{
	return r->kind == JOB_BLOCK ? "block index" : r->refresh ? "refresh" : r->merge ? "merge" : "index";
}

void
job_begin_tx(void)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
}

void
job_commit_tx(void)
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

	job_begin_tx();
	row = scipis_job_read_latest(job_id);
	r = row == NULL || row->cancel_requested || strcmp(row->state, "canceled") == 0;
	job_commit_tx();
	return r;
}

int
job_machine_cores(void)
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
	int			limit = scipis_max_threads > 0 ? scipis_max_threads : job_machine_cores();

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

		job_begin_tx();
		ok = try(arg);
		job_commit_tx();
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

/* The lock that keeps two builds of one target apart. */
static void
target_lock(const JobRun *r, uint32 *space, uint32 *key)
{
	if (r->kind == JOB_BLOCK)
	{
		*space = SCIPIS_LOCK_BLOCK;
		*key = hash_bytes((const unsigned char *) r->c.name, (int) strlen(r->c.name));
	}
	else
	{
		*space = SCIPIS_LOCK_COLLECTION;
		*key = (uint32) r->c.id;
	}
}

static bool
try_target_lock(void *arg)
{
	uint32		space,
				key;

	target_lock((JobRun *) arg, &space, &key);
	return scipis_lock_try(space, MyDatabaseId, key);
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
bool
job_report_progress(JobRun *r, const scipis_build_progress *p, const char *phase)
{
	int64		job_id = r->job_id;
	Oid			types[12] = {INT8OID, TEXTOID, INT8OID, INT8OID, INT8OID, INT8OID, BOOLOID,
	FLOAT8OID, INT8OID, INT8OID, INT8OID, FLOAT8OID};
	Datum		values[12];
	bool		cancel;

	values[0] = Int64GetDatum(job_id);
	values[1] = CStringGetTextDatum(phase);
	values[2] = Int64GetDatum((int64) p->files_done);
	values[3] = Int64GetDatum((int64) p->bytes_done);
	values[4] = Int64GetDatum((int64) p->files_found);
	values[5] = Int64GetDatum((int64) p->bytes_found);
	values[6] = BoolGetDatum(p->crawl_done != 0);
	values[7] = Float8GetDatum(p->seconds);
	values[8] = Int64GetDatum((int64) p->resumed_files);
	values[9] = Int64GetDatum((int64) p->resumed_bytes);
	values[10] = Int64GetDatum(r->base_read + (int64) (p->bytes_done - p->resumed_bytes));
	values[11] = Float8GetDatum(r->base_seconds + p->seconds);
	job_begin_tx();
	cancel = scipis_job_query_int8(psprintf("UPDATE %s SET phase = $2, files_done = $3,"
											" bytes_done = $4, files_found = $5, bytes_found = $6,"
											" crawl_done = $7, run_seconds = $8, resumed_files = $9,"
											" resumed_bytes = $10, read_bytes = $11, busy_seconds = $12"
											" WHERE id = $1"
											" RETURNING (cancel_requested OR state = 'canceled')::int::int8",
											scipis_job_table()),
								   12, types, values) != 0;
	job_commit_tx();
	return cancel;
}

/* Raises unless the job's role still exists and may read server files. */
void
job_check_role(JobRun *r, const char *what)
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
		scipis_require_read_server_files(what);
		if (r->kind == JOB_COLLECTION)
			scipis_require_read(&r->c);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
}

/* files and bytes: the previous index's, for the estimate (-1: none). */
void
job_mark_running(JobRun *r, int64 files, int64 bytes)
{
	Oid			types[3] = {INT8OID, INT8OID, INT8OID};
	Datum		values[3];

	values[0] = Int64GetDatum(r->job_id);
	values[1] = Int64GetDatum(files);
	values[2] = Int64GetDatum(bytes);
	/* read_bytes and busy_seconds add up over the attempts. */
	r->base_read = scipis_job_query_int8(psprintf("UPDATE %s SET state = 'running', phase = 'crawling',"
												  " started = now(), finished = NULL, worker_pid = pg_backend_pid(),"
												  " attempts = attempts + 1, files_done = 0, bytes_done = 0,"
												  " files_found = 0, bytes_found = 0, crawl_done = false,"
												  " resumed_files = 0, resumed_bytes = 0,"
												  " run_seconds = 0, expected_files = nullif($2, -1),"
												  " expected_bytes = nullif($3, -1) WHERE id = $1"
												  " RETURNING read_bytes", scipis_job_table()),
										 3, types, values);
	r->base_seconds = (double) scipis_job_query_int8(psprintf("SELECT (busy_seconds * 1e6)::int8 FROM %s"
															  " WHERE id = $1", scipis_job_table()),
													 1, types, values) / 1e6;
}

/*
 * Between two waits on the engine: false to go on; true when the job must
 * stop (r->end says how) or the engine is done. Every PROGRESS_MS, and
 * once more when done (so that a cancel that came while the engine
 * finished still wins over the commit), it writes p (if any) to the job's
 * row and reads a cancel from it.
 */
bool
job_poll(JobRun *r, TimestampTz *last, const scipis_build_progress *p, const char *phase,
		 bool done)
{
	bool		cancel = false;

	if (!PostmasterIsAlive())
	{
		r->end = RUN_DEAD;
		return true;
	}
	if (got_sigterm || caller_gone())
	{
		r->end = got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
		return true;
	}
	if (done || TimestampDifferenceExceeds(*last, GetCurrentTimestamp(), PROGRESS_MS))
	{
		scipis_build_progress none = {0};

		cancel = job_report_progress(r, p ? p : &none, phase);
		*last = GetCurrentTimestamp();
	}
	if (cancel)
		r->end = RUN_CANCELED;
	return cancel || done;
}

/* The previous index's files and bytes, for the estimate of time left. */
static void
previous_size(JobRun *r, int64 *files, int64 *bytes)
{
	scipis_error err;
	scipis_index *ix = scipis_index_open(r->dir, &err);

	*files = *bytes = -1;
	if (ix != NULL)
	{
		scipis_index_info info;

		if (scipis_index_info_get(ix, &info, &err) == 0)
		{
			*files = (int64) info.files;
			*bytes = (int64) info.bytes;
		}
		scipis_index_close(ix);
	}
}

/* A refresh's paths: the strings of a jsonb array's text (NULL: none). */
static const char **
refresh_paths(const char *json, int *n)
{
	Jsonb	   *jb;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	const char **out;
	int			cap = 8;

	MemoryContext old;

	*n = 0;
	if (json == NULL)
		return NULL;
	old = MemoryContextSwitchTo(job_cxt);
	jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
	out = palloc(cap * sizeof(char *));
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM || v.type != jbvString)
			continue;
		if (*n == cap)
		{
			cap *= 2;
			out = repalloc(out, cap * sizeof(char *));
		}
		out[(*n)++] = pnstrdup(v.val.string.val, v.val.string.len);
	}
	MemoryContextSwitchTo(old);
	return out;
}

/*
 * A collection job's start: its role checked, its row marked running (a
 * build's with the previous index's size, for the estimate), its options
 * read, one indexer thread (or merging indexer) per thread it holds.
 */
static void
job_start_collection(JobRun *r, int threads, bool estimate, scipis_options *opts)
{
	int64		files = -1,
				bytes = -1;

	job_begin_tx();
	job_check_role(r, "index a scipis collection");
	if (estimate)
		previous_size(r, &files, &bytes);
	job_mark_running(r, files, bytes);
	{
		MemoryContext old = MemoryContextSwitchTo(job_cxt);

		scipis_options_from_jsonb(r->c.options, opts);
		MemoryContextSwitchTo(old);
	}
	job_commit_tx();
	if (opts->indexer_threads == 0 || opts->indexer_threads > threads)
		opts->indexer_threads = threads;
}

/*
 * Builds (or refreshes) the collection; the caller holds the target's lock
 * and the threads. Raises the build's error. A refresh a shutdown stops is
 * dropped whole and runs again after the restart.
 */
static RunEnd
build_collection(JobRun *r, int threads)
{
	scipis_options opts;
	scipis_error err;
	scipis_build_progress p;
	TimestampTz last = 0;
	RunEnd		end;

	job_start_collection(r, threads, true, &opts);
	/* 0 without direct_io: the indexers read (no threads of their own). */
	if (opts.reader_threads > threads || (opts.reader_threads == 0 && opts.direct_io))
		opts.reader_threads = Min(threads, 4);

	if (r->refresh)
	{
		int			n = 0;
		const char **paths = refresh_paths(r->paths, &n);

		int			flags = SCIPIS_BUILD_COUNT_BYTES;

		if (scipis_option_true(r->c.options, "skip_unchanged_dirs"))
			flags |= SCIPIS_REFRESH_SKIP_DIRS;
		current_build = scipis_refresh_start(r->dir, r->c.root, &opts, paths, n, flags, &err);
	}
	else
		current_build = scipis_build_start_ex(r->dir, r->c.root, &opts,
											  SCIPIS_BUILD_COUNT_BYTES | SCIPIS_BUILD_RESUME, &err);
	if (current_build == NULL)
		scipis_raise(&err);
	r->end = RUN_SUCCEEDED;
	for (;;)
	{
		bool		done = scipis_build_wait(current_build, 100);

		/* A stop or cancel that came while the build finished still wins. */
		scipis_build_get_progress(current_build, &p);
		if (job_poll(r, &last, &p, phase_name(p.phase), done))
			break;
	}
	if (r->end == RUN_INTERRUPTED && !r->refresh)
	{
		/*
		 * A shutdown: the build stops at file boundaries and flushes what
		 * its indexers hold, so that the job resumes after the restart
		 * without reading it again; past the deadline it is dropped.
		 */
		TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PAUSE_MS);

		scipis_build_pause(current_build);
		while (!scipis_build_wait(current_build, 50) && GetCurrentTimestamp() < deadline)
			;
		scipis_build_get_progress(current_build, &p);
	}
	if (r->end != RUN_SUCCEEDED)
	{
		scipis_build_abort(current_build);
		current_build = NULL;
		if (r->end == RUN_DEAD)
			proc_exit(1);
		/* What this attempt read counts, for the next one. */
		(void) job_report_progress(r, &p, phase_name(p.phase));
		return r->end;
	}
	scipis_build_get_progress(current_build, &p);
	(void) job_report_progress(r, &p, "committing");
	end = scipis_build_finish(current_build, &r->stats, &err) == 0 ? RUN_SUCCEEDED : RUN_FAILED;
	current_build = NULL;
	if (end == RUN_FAILED)
		scipis_raise(&err);
	/* Segments a run of refreshes piled up are merged while the lock is held. */
	if (r->refresh)
		scipis_compact_tiers(r->dir, &opts, r->c.name);

	/*
	 * A build's table flushes leave an indexer several segments, and each
	 * costs every query a lookup: a merge job folds them into one beside
	 * whatever runs next.
	 */
	else if (scipis_option_not_false(r->c.options, "merge_after_build") &&
			 scipis_compact_needed(r->dir, SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE))
	{
		job_begin_tx();
		(void) scipis_job_insert("merge", r->c.name, r->c.id, r->role, false, false, NULL);
		job_commit_tx();
	}
	return end;
}

/*
 * Merges the segments a build left (SCIPIS_COMPACT_SETTLE), beside
 * refreshes: the caller's lock on the collection is held while the merge
 * starts and while it commits, and released in between, so that refreshes
 * of the collection run meanwhile. A cancel or a shutdown drops it (the
 * collection stays as it was); after a restart it runs again.
 */
static RunEnd
merge_collection(JobRun *r, int threads)
{
	scipis_options opts;
	scipis_error err;
	TimestampTz last = 0;
	uint32		space,
				key;
	int			rc;

	job_start_collection(r, threads, false, &opts);
	target_lock(r, &space, &key);

	/*
	 * A watcher's merge beside its refreshes may be running: it commits
	 * under the lock, so the lock goes until it has.
	 */
	while (scipis_compact_busy(r->dir))
	{
		scipis_lock_release(space, MyDatabaseId, key);
		r->target_locked = false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (!wait_for(try_target_lock, r, r->job_id))
			return got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
		r->target_locked = true;
	}
	current_build = scipis_compact_start(r->dir, &opts, SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE, &err);
	if (current_build == NULL)
		scipis_raise(&err);
	scipis_lock_release(space, MyDatabaseId, key);
	r->target_locked = false;
	r->end = RUN_SUCCEEDED;
	for (;;)
	{
		bool		done = scipis_build_wait(current_build, 100);

		if (job_poll(r, &last, NULL, "merging", done))
			break;
	}
	if (r->end == RUN_SUCCEEDED)
	{
		if (wait_for(try_target_lock, r, r->job_id))
			r->target_locked = true;
		else
			r->end = got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
	}
	if (r->end != RUN_SUCCEEDED)
	{
		scipis_build_abort(current_build);
		current_build = NULL;
		if (r->end == RUN_DEAD)
			proc_exit(1);
		return r->end;
	}
	rc = scipis_build_finish(current_build, &r->stats, &err);
	current_build = NULL;
	if (rc != 0)
		scipis_raise(&err);
	return RUN_SUCCEEDED;
}

static RunEnd
build(JobRun *r, int threads)
{
	return r->kind == JOB_BLOCK ? job_build_block(r, threads)
		: r->merge ? merge_collection(r, threads) : build_collection(r, threads);
}

static char *
result_json(const scipis_build_stats *s)
{
	double		mib = s->seconds > 0 ? (double) s->bytes / (1024.0 * 1024.0) / s->seconds : 0;

	return psprintf("{\"files\": " UINT64_FORMAT ", \"bytes\": " UINT64_FORMAT
					", \"tokens\": " UINT64_FORMAT ", \"terms\": " UINT64_FORMAT
					", \"segments\": " UINT64_FORMAT ", \"seconds\": %.6f"
					", \"mib_per_s\": %.3f, \"skipped\": " UINT64_FORMAT
					", \"resumed_files\": " UINT64_FORMAT ", \"resumed_bytes\": " UINT64_FORMAT
					", \"files_added\": " UINT64_FORMAT ", \"files_changed\": " UINT64_FORMAT
					", \"files_appended\": " UINT64_FORMAT
					", \"files_deleted\": " UINT64_FORMAT ", \"bytes_read\": " UINT64_FORMAT
					", \"deleted_docs\": " UINT64_FORMAT "}",
					(uint64) s->files, (uint64) s->bytes, (uint64) s->tokens,
					(uint64) s->terms, (uint64) s->segments, s->seconds, mib,
					(uint64) s->skipped, (uint64) s->resumed_files, (uint64) s->resumed_bytes,
					(uint64) s->files_added, (uint64) s->files_changed,
					(uint64) s->files_appended, (uint64) s->files_deleted,
					(uint64) s->bytes_read, (uint64) s->deleted_docs);
}

static char *
merge_result_json(const scipis_build_stats *s)
{
	return psprintf("{\"segments_merged\": " UINT64_FORMAT ", \"segments\": " UINT64_FORMAT
					", \"index_bytes\": " UINT64_FORMAT ", \"seconds\": %.6f}",
					(uint64) s->segments_merged, (uint64) s->segments,
					(uint64) s->index_bytes, s->seconds);
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
	job_begin_tx();
	values[0] = Int64GetDatum(r->job_id);
	values[1] = CStringGetTextDatum(state);
	values[2] = CStringGetTextDatum(end != RUN_SUCCEEDED ? "null"
									: r->kind == JOB_BLOCK ? job_block_result_json(&r->block_info)
									: r->merge ? merge_result_json(&r->stats) : result_json(&r->stats));
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
	job_commit_tx();
}

/*
 * A queued job's collection dropped while it ran: the drop removed the
 * directory while the build still wrote into it, so what is left goes now.
 * (A waited job's collection may exist only in its caller's transaction.)
 */
static void
remove_if_dropped(JobRun *r)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(r->c.id)};
	bool		exists;
	scipis_error err;

	job_begin_tx();
	exists = scipis_job_query_int8(psprintf("SELECT count(*) FROM %s.scipis_collection WHERE id = $1",
											quote_identifier(get_namespace_name(scipis_extension_schema()))),
								   1, types, values) > 0;
	job_commit_tx();
	if (!exists && scipis_remove_dir(r->dir, &err) != 0)
		ereport(WARNING,
				(errmsg("scipis: could not remove the files of dropped collection \"%s\": %s",
						r->c.name, err.message)));
}

/* The run of one job whose row exists and whose job lock this process holds. */
static RunEnd
run_job(JobRun *r)
{
	RunEnd		end = RUN_FAILED;
	int			want;
	volatile bool locked = r->target_locked;
	bool		own_slot = !slot_held;
	uint32		lock_space,
				lock_key;

	PG_TRY();
	{
		if (!locked && !wait_for(try_target_lock, r, r->job_id))
			end = got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
		else
		{
			locked = true;
			r->target_locked = true;
			if (own_slot && !wait_for(try_slot, NULL, r->job_id))
				end = got_sigterm && !caller_gone() ? RUN_INTERRUPTED : RUN_CANCELED;
			else
			{
				want = job_machine_cores();
				if (r->kind == JOB_COLLECTION)
				{
					scipis_options opts;

					job_begin_tx();
					scipis_options_from_jsonb(r->c.options, &opts);
					job_commit_tx();
					if (opts.indexer_threads > 0)
						want = opts.indexer_threads;
				}
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
		job_block_abort();
		end = RUN_FAILED;
	}
	PG_END_TRY();

	/* A drop of the collection while it ran shows as its files vanishing. */
	if (end == RUN_FAILED && cancel_requested(r->job_id))
		end = RUN_CANCELED;
	/* Before the end shows, so that a canceled job has nothing left behind. */
	if (waited == NULL && r->kind == JOB_COLLECTION && end != RUN_SUCCEEDED && end != RUN_INTERRUPTED)
		remove_if_dropped(r);
	record_end(r, end);
	release_threads();
	if (own_slot)
		release_slot();
	target_lock(r, &lock_space, &lock_key);
	/* A merge gives the lock up while it runs. */
	if (locked && r->target_locked)
		scipis_lock_release(lock_space, MyDatabaseId, lock_key);
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
	r.kind = waited->kind;
	r.c.id = waited->collection_id;
	r.c.name = pstrdup(s);
	s += strlen(s) + 1;
	r.role = waited->role;
	if (r.kind == JOB_BLOCK)
	{
		/* name, variables, options, path */
		r.variables = pstrdup(s);
		s += strlen(s) + 1;
		r.block_options = pstrdup(s);
		s += strlen(s) + 1;
		r.path = pstrdup(s);
	}
	PG_TRY();
	{
		job_begin_tx();
		if (r.kind == JOB_COLLECTION)
		{
			/* name, root, options, dir */
			r.c.root = MemoryContextStrdup(job_cxt, s);
			s += strlen(s) + 1;
			r.c.options = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(s)));
			{
				MemoryContext old = MemoryContextSwitchTo(job_cxt);

				r.c.options = DatumGetJsonbPCopy(JsonbPGetDatum(r.c.options));
				MemoryContextSwitchTo(old);
			}
			s += strlen(s) + 1;
			r.dir = MemoryContextStrdup(job_cxt, s);
			s += strlen(s) + 1;
			r.refresh = waited->refresh;
			r.paths = *s ? MemoryContextStrdup(job_cxt, s) : NULL;
		}
		r.job_id = scipis_job_insert(job_kind_name(&r), r.c.name,
									 r.c.id, r.role, true, false, NULL);
		if (!scipis_lock_try(SCIPIS_LOCK_JOB, MyDatabaseId, (uint32) r.job_id))
			elog(ERROR, "scipis: job lock of a new job is taken");
		job_commit_tx();
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
	pgstat_report_activity(STATE_RUNNING, psprintf("scipis job " INT64_FORMAT ": %s %s", r.job_id,
												   job_kind_name(&r), r.c.name));

	end = run_job(&r);
	waited->stats = r.stats;
	waited->block_info = r.block_info;
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

	job_begin_tx();
	sql = psprintf("SELECT j.id, j.submitted_by, j.kind, j.target, j.args::text, c.id, c.root,"
				   " c.options, c.owner::oid, j.args->'paths' FROM %s j"
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
		bool		block = strcmp(SPI_getvalue(t, d, 3), "block index") == 0;
		MemoryContext old;
		uint32		space,
					key;

		(void) SPI_getbinval(t, d, 6, &isnull);
		if (!block && isnull)
		{
			/* Its collection was dropped: nothing to run. */
			gone = id;
			continue;
		}
		old = MemoryContextSwitchTo(job_cxt);
		memset(r, 0, sizeof(*r));
		r->job_id = id;
		r->kind = block ? JOB_BLOCK : JOB_COLLECTION;
		r->role = DatumGetObjectId(SPI_getbinval(t, d, 2, &isnull));
		r->c.name = SPI_getvalue(t, d, 4);
		if (block)
			job_block_args(r, SPI_getvalue(t, d, 5));
		else
		{
			r->c.id = DatumGetInt64(SPI_getbinval(t, d, 6, &isnull));
			r->c.root = SPI_getvalue(t, d, 7);
			r->c.options = DatumGetJsonbPCopy(SPI_getbinval(t, d, 8, &isnull));
			r->c.owner = DatumGetObjectId(SPI_getbinval(t, d, 9, &isnull));
			r->dir = scipis_collection_dir(&r->c);
			r->refresh = strcmp(SPI_getvalue(t, d, 3), "refresh") == 0;
			r->merge = strcmp(SPI_getvalue(t, d, 3), "merge") == 0;
			r->paths = r->refresh ? SPI_getvalue(t, d, 10) : NULL;
		}
		MemoryContextSwitchTo(old);
		target_lock(r, &space, &key);
		if (!scipis_lock_try(space, MyDatabaseId, key))
			continue;
		if (!scipis_lock_try(SCIPIS_LOCK_JOB, MyDatabaseId, (uint32) id))
		{
			scipis_lock_release(space, MyDatabaseId, key);
			continue;
		}
		r->target_locked = true;
		got = id;
	}
	SPI_finish();
	if (got != 0)
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(got)};

		scipis_job_exec(psprintf("UPDATE %s SET state = 'running', worker_pid = pg_backend_pid()"
								 " WHERE id = $1", scipis_job_table()), 1, types, values);
	}
	else if (gone != 0)
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(gone)};

		scipis_job_exec(psprintf("UPDATE %s SET state = 'canceled', finished = now()"
								 " WHERE id = $1", scipis_job_table()), 1, types, values);
	}
	job_commit_tx();
	return got != 0 ? got : gone != 0 ? -1 : 0;
}

static bool
queue_empty(void)
{
	bool		empty;

	job_begin_tx();
	empty = scipis_jobs_queued() == 0;
	job_commit_tx();
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
		job_begin_tx();
		scipis_jobs_recover();
		job_commit_tx();
		job_begin_tx();
		if (!take_slot())
		{
			job_commit_tx();
			return;
		}
		job_commit_tx();
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
			pgstat_report_activity(STATE_RUNNING, psprintf("scipis job " INT64_FORMAT ": %s %s",
														   r.job_id, job_kind_name(&r), r.c.name));
			(void) run_job(&r);
			pgstat_report_activity(STATE_IDLE, NULL);
			MemoryContextReset(job_cxt);
		}
		release_slot();
		if (got_sigterm || queue_empty())
			return;
		/* Jobs whose targets others hold (a merge, a watcher) wait a tick. */
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 200,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
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

void
scipis_worker_fill(BackgroundWorker *w, const char *function, const char *type)
{
	memset(w, 0, sizeof(*w));
	w->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	w->bgw_start_time = BgWorkerStart_RecoveryFinished;
	w->bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(w->bgw_library_name, "scipis", BGW_MAXLEN);
	strlcpy(w->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(w->bgw_name, type, BGW_MAXLEN);
	strlcpy(w->bgw_type, type, BGW_MAXLEN);
}

/* Starts a queue runner for the database; false when no worker slot is free. */
bool
scipis_start_runner(Oid database)
{
	BackgroundWorker w = {0};
	BackgroundWorkerHandle *h;

	scipis_worker_fill(&w, "scipis_job_worker_main", "scipis job runner");
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
