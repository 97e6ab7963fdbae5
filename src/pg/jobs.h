/*
 * Jobs: scipis_index runs in background workers. The table scipis_job
 * holds every job (job_table.c); a worker runs either one job a caller
 * waits on (its parameters and result in a DSM segment) or, as a queue
 * runner, the queued jobs of its database one after another
 * (job_worker.c); with shared_preload_libraries a launcher starts a
 * scheduler per database that queues scheduled jobs and resumes those a
 * restart interrupted (launcher.c).
 */
#ifndef SCIPIS_JOBS_H
#define SCIPIS_JOBS_H

#include "collection.h"

#include "port/atomics.h"
#include "storage/dsm.h"

/* GUCs (launcher.c). */
extern int	scipis_max_workers;
extern int	scipis_max_threads;
extern int	scipis_scheduler_naptime;
extern bool scipis_preloaded;

/* Advisory lock spaces (field3 of the locktag). */
#define SCIPIS_LOCK_COLLECTION	1935894889u /* one build of a collection at a time */
#define SCIPIS_LOCK_JOB			1935894890u /* held by the worker running a job */
#define SCIPIS_LOCK_SLOT		1935894891u /* scipis.max_workers, cluster-wide */
#define SCIPIS_LOCK_THREAD		1935894892u /* scipis.max_threads, cluster-wide */
#define SCIPIS_LOCK_SCHEDULER	1935894893u /* one scheduler per database */
#define SCIPIS_LOCK_BLOCK		1935894894u /* one build of a block index (name hash) */
#define SCIPIS_LOCK_WATCH		1935894895u /* held by a collection's watcher */

/* What a job builds. */
#define JOB_COLLECTION	0
#define JOB_BLOCK		1

/* A job one caller waits on: written by both sides, read under barriers. */
typedef struct ScipisWaitedJob
{
	Oid			database;
	Oid			role;
	int			kind;			/* JOB_* */
	bool		refresh;		/* a collection's refresh */
	int64		collection_id;
	pg_atomic_uint32 caller_gone;	/* the caller canceled or left */
	pg_atomic_uint32 state;		/* WAITED_* */
	int64		job_id;
	scipis_build_stats stats;
	scipis_block_info block_info;
	int			sqlerrcode;
	char		message[1024];
	char		detail[1024];
	char		hint[512];
	/*
	 * NUL-terminated, in this order. Collections: name, root, options (jsonb
	 * text), dir, a refresh's paths (jsonb text, empty: the whole tree).
	 * Block indexes: name, variables, options, the file's path, empty.
	 */
	char		strings[FLEXIBLE_ARRAY_MEMBER];
} ScipisWaitedJob;

#define WAITED_STARTING 0
#define WAITED_QUEUED	1			/* job_id is set */
#define WAITED_DONE		2			/* stats or the error are set */

/* job_table.c: rows of scipis_job, written as the bootstrap superuser. */
typedef struct ScipisJobRow
{
	int64		id;
	char	   *target;
	int64		collection_id;
	char	   *state;
	Oid			submitted_by;
	bool		cancel_requested;
	int			attempts;
} ScipisJobRow;

const char *scipis_job_table(void);
int64		scipis_job_insert(const char *kind, const char *target, int64 collection_id,
							  Oid role, bool waited, bool scheduled, const char *args);
ScipisJobRow *scipis_job_read_latest(int64 id);
void		scipis_job_exec(const char *sql, int nargs, Oid *types, Datum *values);
/* The first column of the first row (0 without one). */
int64		scipis_job_query_int8(const char *sql, int nargs, Oid *types, Datum *values);
/* Jobs whose worker is gone (its job lock is free) are queued again. */
int64		scipis_jobs_recover(void);
int64		scipis_jobs_queued(void);

/* Session-level advisory locks outside any transaction's life. */
bool		scipis_lock_try(uint32 space, Oid database, uint32 key);
void		scipis_lock_release(uint32 space, Oid database, uint32 key);

/* compact_sql.c */
bool		scipis_compact_run(const char *dir, const scipis_options *opts, int flags,
							   scipis_build_stats *stats, scipis_error *err);
void		scipis_compact_tiers(const char *dir, const scipis_options *opts, const char *name);

/* refresh_here.c */
/*
 * Waits for the build (a cancel or a shutdown aborts it, then is raised)
 * and finishes it; false with err set when it failed.
 */
bool		scipis_build_run(scipis_build *b, scipis_build_stats *stats, scipis_error *err);
/*
 * Runs fn holding the collection's build lock, waited for (a build, refresh
 * or watcher of it goes first) and released however fn ends; raises the
 * error fn returns false with, else drops this backend's open index.
 */
void		scipis_collection_locked(ScipisCollection *c,
									 bool (*fn) (void *arg, scipis_error *err), void *arg);
/* A waited refresh of named paths, run in this backend; raises its errors. */
void		scipis_refresh_here(ScipisCollection *c, const char *const *paths, int n,
								scipis_build_stats *stats);

/* job_sql.c */
void		scipis_jobs_cancel_collection(int64 collection_id);
/* Block index jobs for block_build.c: the id of the job. */
int64		scipis_block_job_queue(const char *name, Jsonb *variables, Jsonb *options,
								   bool rebuild);
int64		scipis_block_job_waited(const char *name, Jsonb *variables, Jsonb *options,
									const char *path, scipis_block_info *info);

/* job_worker.c */
struct BackgroundWorker;
/* A worker of this library that connects to a database and is not restarted. */
void		scipis_worker_fill(struct BackgroundWorker *w, const char *function, const char *type);
void		scipis_start_runner_at_commit(void);
bool		scipis_start_runner(Oid database);
PGDLLEXPORT void scipis_job_worker_main(Datum arg);

/* watcher.c */
extern bool scipis_watch_test_overflow;
extern int	scipis_watch_garbage_merge_ms;
/* watch_poll.c: scipis.watch_method, scipis.watch_poll_interval. */
typedef enum ScipisWatchMethod
{
	SCIPIS_WATCH_AUTO,			/* poll on the file systems below, inotify elsewhere */
	SCIPIS_WATCH_INOTIFY,
	SCIPIS_WATCH_POLL
} ScipisWatchMethod;
extern int	scipis_watch_method;
extern int	scipis_watch_poll_ms;
/*
 * NULL when a watcher of root follows inotify; else why it polls (the file
 * system sends no events of changes made elsewhere, or the setting says so).
 */
const char *scipis_watch_poll_reason(const char *root);
/* The collection's options say "watch": true. */
bool		scipis_watched(Jsonb *options);
/* A watcher of the collection runs (its lock is held). */
bool		scipis_watcher_running(int64 collection_id);
/* Starts a watcher for each watched collection of this database that has none. */
void		scipis_start_watchers(void);
/* The new collection's watcher starts when the transaction commits. */
void		scipis_start_watcher_at_commit(int64 collection_id);
PGDLLEXPORT void scipis_watcher_main(Datum arg);

/* launcher.c */
void		scipis_jobs_init(void);
PGDLLEXPORT void scipis_launcher_main(Datum arg);
PGDLLEXPORT void scipis_scheduler_main(Datum arg);

#endif
