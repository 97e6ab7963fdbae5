/*
 * The watcher of a collection with "watch": true (README "Refresh"): a
 * background worker, started by the database's scheduler, that follows the
 * tree with inotify (a watch per directory, new directories watched as they
 * appear) and refreshes the paths its events name, batched over a short
 * settle window. A queue overflow, or a directory that could not be
 * watched, leads to a refresh of the whole tree (and, while watches are
 * missing, to one every scipis.watch_rescan), never to a missed change.
 * fanotify's file-system marks need CAP_SYS_ADMIN, which the server does not
 * have. A tree on a file system that sends no events of changes made on
 * other hosts (watch_poll.c) is polled instead (poll_tree).
 */
#include "jobs.h"

#include <dirent.h>
#include <errno.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

bool		scipis_watch_test_overflow = false;
int			scipis_watch_garbage_merge_ms = 120000;

static void stop_merge(int code, Datum arg);

#define SETTLE_MS 100			/* quiet this long ends a batch */
#define MAX_BATCH_MS 500		/* a batch ends this long after its first event */
#define BACKLOG_SEGMENTS 32		/* as the engine's kBesideBacklog: merges lag */
#define BACKLOG_BATCH_MS 1000	/* then fewer, larger batches (each adds segments) */
#define RESCAN_MS 10000			/* whole-tree refreshes while watches are missing */
#define CHECK_MS 1000			/* the collection's row looked at again */
#define IDLE_MARK_MS 200		/* an idle watcher says it is fresh this often */
#define RETRY_MS 5000			/* after a refresh that failed */
#define MAX_PATHS 10000			/* more paths in a batch: the whole tree instead */
#define QUIET_MS 5000			/* no event this long: the tree is quiet */
#define POLL_FULL_EVERY 6		/* a polling watcher stats every file at every 6th poll */
#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | \
					IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW | \
					IN_ONLYDIR | IN_EXCL_UNLINK)

typedef struct WatchEntry
{
	int			wd;				/* the key */
	char	   *path;
} WatchEntry;

typedef struct Watcher
{
	ScipisCollection c;
	char	   *dir;
	bool		follow;
	int			fd;
	HTAB	   *watches;
	MemoryContext cxt;			/* paths of watches */
	MemoryContext row_cxt;		/* the collection's row, read again each CHECK_MS */
	bool		missing;		/* some directory is not watched */
	bool		full;			/* the batch needs the whole tree */
	bool		poll;			/* the tree is polled (poll_tree) */
	bool		skip_dirs;		/* this poll lists changed directories only */
	const char *why;			/* why (shown in pg_stat_activity) */
	char	  **paths;			/* the batch's paths */
	int			npaths;
	int			cap;
	TimestampTz garbage_merge_at;	/* when a merge last ran under the lock */
	TimestampTz last_event;		/* when the last event of a change came */
	scipis_build *merge;		/* a merge beside the refreshes, or NULL */
	bool		merge_renumbers;	/* it is scipis_compact_garbage_start's */
	uint64		segments;		/* after the last refresh */
} Watcher;

bool
scipis_watched(Jsonb *options)
{
	return scipis_option_true(options, "watch");
}

bool
scipis_watcher_running(int64 collection_id)
{
	if (!scipis_lock_try(SCIPIS_LOCK_WATCH, MyDatabaseId, (uint32) collection_id))
		return true;
	scipis_lock_release(SCIPIS_LOCK_WATCH, MyDatabaseId, (uint32) collection_id);
	return false;
}

static bool
start_watcher(int64 id)
{
	BackgroundWorker w;
	BackgroundWorkerHandle *handle;

	scipis_worker_fill(&w, "scipis_watcher_main", "scipis watcher");
	w.bgw_main_arg = Int64GetDatum(id);
	memcpy(w.bgw_extra, &MyDatabaseId, sizeof(Oid));
	return RegisterDynamicBackgroundWorker(&w, &handle);
}

void
scipis_start_watchers(void)
{
	ListCell   *lc;

	foreach(lc, scipis_collection_all())
	{
		ScipisCollection *c = lfirst(lc);

		if (scipis_watched(c->options) && !scipis_watcher_running(c->id) && !start_watcher(c->id))
			ereport(LOG,
					(errmsg("scipis: could not start the watcher of collection \"%s\"", c->name),
					 errhint("Raise max_worker_processes.")));
	}
}

static int64 watch_at_commit = 0;

static void
start_watcher_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT && watch_at_commit != 0)
	{
		/* If this fails, the scheduler starts it on its next pass. */
		(void) start_watcher(watch_at_commit);
		watch_at_commit = 0;
	}
	else if (event == XACT_EVENT_ABORT)
		watch_at_commit = 0;
}

void
scipis_start_watcher_at_commit(int64 collection_id)
{
	static bool registered = false;

	if (!registered)
	{
		RegisterXactCallback(start_watcher_callback, NULL);
		registered = true;
	}
	watch_at_commit = collection_id;
}

static int64
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64) t.tv_sec * 1000000000 + t.tv_nsec;
}

static int
cmp_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Each path of the batch once (a file's writes send several events). */
static void
unique_paths(Watcher *w)
{
	int			n = 0;

	qsort(w->paths, w->npaths, sizeof(char *), cmp_paths);
	for (int i = 0; i < w->npaths; i++)
	{
		if (n > 0 && strcmp(w->paths[n - 1], w->paths[i]) == 0)
			pfree(w->paths[i]);
		else
			w->paths[n++] = w->paths[i];
	}
	w->npaths = n;
}

static void
add_path(Watcher *w, const char *path)
{
	if (w->full)
		return;
	if (w->npaths > 0 && strcmp(w->paths[w->npaths - 1], path) == 0)
		return;
	if (w->npaths == MAX_PATHS)
		unique_paths(w);
	if (w->npaths == MAX_PATHS)
	{
		w->full = true;
		w->why = "too many paths";
		return;
	}
	if (w->npaths == w->cap)
	{
		w->cap = w->cap ? 2 * w->cap : 64;
		w->paths = w->paths ? repalloc(w->paths, w->cap * sizeof(char *))
			: palloc(w->cap * sizeof(char *));
	}
	w->paths[w->npaths++] = pstrdup(path);
}

/* Watches dir and every directory under it (not through symlinks). */
static void
watch_tree(Watcher *w, const char *dir)
{
	int			wd = inotify_add_watch(w->fd, dir, WATCH_MASK);
	DIR		   *d;
	struct dirent *e;

	if (wd < 0)
	{
		if (errno != ENOENT && errno != ENOTDIR)
		{
			if (!w->missing)
				ereport(LOG,
						(errmsg("scipis: the watcher of \"%s\" cannot watch \"%s\": %m; the tree is rescanned every %d s instead",
								w->c.name, dir, RESCAN_MS / 1000),
						 errhint("Raise fs.inotify.max_user_watches.")));
			w->missing = true;
		}
		return;
	}
	{
		bool		found;
		WatchEntry *en = hash_search(w->watches, &wd, HASH_ENTER, &found);

		if (found)
			pfree(en->path);
		en->path = MemoryContextStrdup(w->cxt, dir);
	}
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		char	   *sub;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN && !(w->follow && e->d_type == DT_LNK))
			continue;
		sub = psprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, e->d_name);
		if ((w->follow ? stat(sub, &st) : lstat(sub, &st)) == 0 && S_ISDIR(st.st_mode))
			watch_tree(w, sub);
		pfree(sub);
	}
	closedir(d);
}

/* Stops watching the directories at or under path (it moved away). */
static void
unwatch_tree(Watcher *w, const char *path)
{
	HASH_SEQ_STATUS seq;
	WatchEntry *en;
	size_t		n = strlen(path);

	hash_seq_init(&seq, w->watches);
	while ((en = hash_seq_search(&seq)) != NULL)
	{
		if (strncmp(en->path, path, n) == 0 && (en->path[n] == '\0' || en->path[n] == '/'))
		{
			(void) inotify_rm_watch(w->fd, en->wd);
			pfree(en->path);
			(void) hash_search(w->watches, &en->wd, HASH_REMOVE, NULL);
		}
	}
}

/* Reads every queued event; false once the queue is empty. */
static bool
read_events(Watcher *w)
{
	char		buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t		len = read(w->fd, buf, sizeof(buf));

	if (len <= 0)
	{
		if (len < 0 && errno != EAGAIN && errno != EINTR)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("scipis: could not read the watcher's inotify events: %m")));
		return false;
	}
	for (char *p = buf; p < buf + len;)
	{
		const struct inotify_event *e = (const struct inotify_event *) p;
		WatchEntry *en;
		char	   *path;

		p += sizeof(struct inotify_event) + e->len;
		if ((e->mask & IN_Q_OVERFLOW) || scipis_watch_test_overflow)
		{
			/* Events were lost: only a walk of the whole tree is sure. */
			w->full = true;
			w->why = "events lost";
			continue;
		}
		en = hash_search(w->watches, &e->wd, HASH_FIND, NULL);
		if (en == NULL)
			continue;
		if (e->mask & IN_IGNORED)
		{
			pfree(en->path);
			(void) hash_search(w->watches, &e->wd, HASH_REMOVE, NULL);
			continue;
		}
		path = e->len > 0 && e->name[0] ? psprintf("%s/%s", strcmp(en->path, "/") == 0 ? "" : en->path, e->name)
			: pstrdup(en->path);
		if (e->mask & IN_ISDIR)
		{
			if (e->mask & IN_MOVED_FROM)
				unwatch_tree(w, path);
			if (e->mask & (IN_CREATE | IN_MOVED_TO))
				watch_tree(w, path);
		}
		add_path(w, path);
		pfree(path);
	}
	return true;
}

/*
 * The collection's row, or false once it is dropped or no longer watched.
 * Once dropped, what a refresh of the watcher may have written into its
 * directory after the drop removed it goes too.
 */
static bool
reload(Watcher *w, int64 id)
{
	ListCell   *lc;
	bool		found = false;
	bool		exists = false;
	MemoryContext old;
	char	   *prev_dir = w->dir ? MemoryContextStrdup(TopMemoryContext, w->dir) : NULL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (w->row_cxt == NULL)
		w->row_cxt = AllocSetContextCreate(TopMemoryContext, "scipis watcher row", ALLOCSET_SMALL_SIZES);
	MemoryContextReset(w->row_cxt);
	foreach(lc, scipis_collection_all())
	{
		ScipisCollection *c = lfirst(lc);

		exists |= c->id == id;
		if (c->id != id || !scipis_watched(c->options))
			continue;
		if (!has_privs_of_role(c->owner, ROLE_PG_READ_SERVER_FILES))
		{
			ereport(LOG,
					(errmsg("scipis: the watcher of \"%s\" stops: its owner may not read server files",
							c->name)));
			break;
		}
		old = MemoryContextSwitchTo(w->row_cxt);
		w->c.id = c->id;
		w->c.name = pstrdup(c->name);
		w->c.root = pstrdup(c->root);
		w->c.options = DatumGetJsonbPCopy(JsonbPGetDatum(c->options));
		w->c.owner = c->owner;
		w->dir = scipis_collection_dir(&w->c);
		MemoryContextSwitchTo(old);
		found = true;
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (!exists && prev_dir != NULL)
	{
		scipis_error err;

		stop_merge(0, PointerGetDatum(w));

		if (scipis_remove_dir(prev_dir, &err) != 0)
			ereport(LOG, (errmsg("scipis: the watcher could not remove \"%s\": %s", prev_dir, err.message)));
	}
	if (prev_dir != NULL)
		pfree(prev_dir);
	return found;
}

/* The collection's options (their strings live in TopMemoryContext). */
static void
load_options(Watcher *w, scipis_options *opts)
{
	MemoryContext old;

	StartTransactionCommand();
	old = MemoryContextSwitchTo(TopMemoryContext);
	scipis_options_from_jsonb(w->c.options, opts);
	MemoryContextSwitchTo(old);
	CommitTransactionCommand();
}

/* A merge still running when the watcher exits is stopped, not committed. */
static void
stop_merge(int code, Datum arg)
{
	Watcher    *w = (Watcher *) DatumGetPointer(arg);

	if (w->merge != NULL)
		scipis_build_abort(w->merge);
	w->merge = NULL;
}

/* Commits the merge beside the refreshes once done; the caller holds the lock. */
static void
merge_commit(Watcher *w)
{
	scipis_build *b = w->merge;
	scipis_build_stats stats;
	scipis_error err;

	if (b == NULL || !scipis_build_wait(b, 0))
		return;
	w->merge = NULL;
	if (scipis_build_finish(b, &stats, &err) != 0)
		ereport(LOG,
				(errmsg("scipis: the watcher of \"%s\" could not merge its segments: %s (tried again after the next refresh)",
						w->c.name, err.message)));
	else if (w->merge_renumbers && stats.segments_merged > 0)
		ereport(LOG,
				(errmsg("scipis: the watcher of \"%s\" renumbered %llu segments beside its refreshes in %.3f s, dropping %llu tombstoned documents",
						w->c.name, (unsigned long long) stats.segments_merged, stats.seconds,
						(unsigned long long) stats.docs_dropped)));
	else
		ereport(DEBUG1,
				(errmsg_internal("scipis: the watcher of \"%s\" merged %llu segments beside its refreshes in %.3f s",
								 w->c.name, (unsigned long long) stats.segments_merged, stats.seconds)));
}

/*
 * After a refresh, holding the collection's lock. Tail tiers are merged
 * beside the refreshes that follow (a merge of 8 MiB takes seconds, and
 * under the lock the next refresh would wait for it; they fold chains and
 * drop tombstoned documents' postings, keeping every number); the records
 * of tombstoned documents, which only a merge that renumbers drops, are
 * merged under the lock once the tree has been quiet for QUIET_MS, and
 * under unbroken churn beside the refreshes at most every
 * scipis.watch_garbage_merge_interval (scipis_compact_garbage_start: its commit refreshes
 * on top of it what changed while it ran).
 */
static void
merge(Watcher *w, const scipis_options *opts)
{
	scipis_error err;

	merge_commit(w);
	if (w->merge != NULL)
		return;
	if (scipis_compact_needed(w->dir, SCIPIS_COMPACT_BESIDE))
	{
		w->merge = scipis_compact_start(w->dir, opts, SCIPIS_COMPACT_BESIDE, &err);
		w->merge_renumbers = false;
		if (w->merge == NULL)
			ereport(LOG,
					(errmsg("scipis: the watcher of \"%s\" could not merge its segments: %s (tried again after the next refresh)",
							w->c.name, err.message)));
	}
	else
	{
		TimestampTz now = GetCurrentTimestamp();

		if (TimestampDifferenceExceeds(w->last_event, now, QUIET_MS))
		{
			scipis_compact_tiers(w->dir, opts, w->c.name);
			w->garbage_merge_at = now;
		}
		else if (TimestampDifferenceExceeds(w->garbage_merge_at, now, scipis_watch_garbage_merge_ms) &&
				 scipis_compact_needed(w->dir, 0))
		{
			w->garbage_merge_at = now;
			w->merge = scipis_compact_garbage_start(w->dir, w->c.root, opts, &err);
			w->merge_renumbers = true;
			if (w->merge == NULL)
				ereport(LOG,
						(errmsg("scipis: the watcher of \"%s\" could not merge its segments: %s (tried again after the next refresh)",
								w->c.name, err.message)));
		}
	}
}

/*
 * Refreshes the batch (or the whole tree), holding the collection's build
 * lock; then every change before as_of is searchable. 1 when done, 0 when
 * a job of the collection holds the lock, -1 when the refresh failed (it
 * is logged): the batch waits, and is tried again.
 */
static int
refresh(Watcher *w, int64 as_of)
{
	scipis_options opts;
	scipis_error err;
	scipis_build *b;
	scipis_build_stats stats;
	bool		ok;

	if (!scipis_lock_try(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) w->c.id))
		return 0;
	load_options(w, &opts);
	/* A poll that lists changed directories only may miss bytes changed in place. */
	b = scipis_refresh_start(w->dir, w->c.root, &opts, w->full ? NULL : (const char *const *) w->paths,
							 w->full ? 0 : w->npaths,
							 w->skip_dirs ? SCIPIS_REFRESH_SKIP_DIRS | SCIPIS_REFRESH_KEEP_FRESH : 0, &err);
	if (b != NULL)
	{
		while (!scipis_build_wait(b, 100))
		{
			if (ProcDiePending)
			{
				scipis_build_abort(b);
				scipis_lock_release(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) w->c.id);
				CHECK_FOR_INTERRUPTS();
			}
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1,
							 PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
	}
	ok = b != NULL && scipis_build_finish(b, &stats, &err) == 0 &&
		(w->skip_dirs || scipis_mark_fresh(w->dir, as_of, &err) == 0);
	if (ok)
	{
		ereport(DEBUG1,
				(errmsg_internal("scipis: the watcher of \"%s\" refreshed %s in %.3f s: %llu added, %llu changed, %llu appended, %llu deleted, %llu bytes read; segments %llu -> %llu",
								 w->c.name, w->full ? "the whole tree" : psprintf("%d paths", w->npaths),
								 stats.seconds, (unsigned long long) stats.files_added,
								 (unsigned long long) stats.files_changed,
								 (unsigned long long) stats.files_appended,
								 (unsigned long long) stats.files_deleted,
								 (unsigned long long) stats.bytes_read,
								 (unsigned long long) w->segments, (unsigned long long) stats.segments)));
		w->segments = stats.segments;
		if (w->poll && stats.files_added + stats.files_changed + stats.files_appended + stats.files_deleted > 0)
			w->last_event = GetCurrentTimestamp();
		merge(w, &opts);
	}
	scipis_lock_release(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) w->c.id);
	if (!ok)
		ereport(LOG,
				(errmsg("scipis: the watcher of \"%s\" could not refresh it: %s (tried again later)",
						w->c.name, err.message)));
	else
		pgstat_report_activity(STATE_IDLE,
							   psprintf("scipis watcher %s: last refresh: %s, %llu files read", w->c.name,
										w->full ? psprintf("the whole tree (%s)", w->why)
										: psprintf("%d paths", w->npaths),
										(unsigned long long) (stats.files_added + stats.files_changed)));
	return ok ? 1 : -1;
}

/*
 * The watcher of a tree whose file system sends no events (or with
 * scipis.watch_method = poll): a whole-tree refresh every
 * scipis.watch_poll_interval that lists only the directories changed since
 * the last walk and stats only the files in those (as plocate and GUFI
 * rescan), and at every POLL_FULL_EVERY-th poll one that stats every file
 * (bytes changed in place change no directory). fresh_as_of moves with
 * those only. Merges as after any refresh.
 */
static void
poll_tree(Watcher *w, int64 id, const char *why)
{
	TimestampTz last_poll = 0,
				last_check = 0;
	uint64		polls = 0;
	bool		initial = true;

	ereport(LOG,
			(errmsg("scipis: the watcher of \"%s\" polls its tree every %d ms: %s",
					w->c.name, scipis_watch_poll_ms, why)));
	w->poll = true;
	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		long		timeout;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (TimestampDifferenceExceeds(last_check, now, CHECK_MS))
		{
			if (!reload(w, id))
				proc_exit(0);
			last_check = now;
		}
		if (initial || TimestampDifferenceExceeds(last_poll, now, scipis_watch_poll_ms))
		{
			int			done;

			w->full = true;
			w->skip_dirs = !initial && !w->follow && polls % POLL_FULL_EVERY != 0;
			w->why = initial ? "start" : w->skip_dirs ? "poll of changed directories" : "poll of every file";
			done = refresh(w, now_ns());
			w->skip_dirs = false;
			if (done <= 0)
			{
				/* A job holds the collection, or the refresh failed: later. */
				(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
								 done == 0 ? SETTLE_MS : RETRY_MS, PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
				continue;
			}
			w->full = false;
			initial = false;
			polls++;
			last_poll = now;
		}
		else if (w->merge != NULL && scipis_lock_try(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) w->c.id))
		{
			merge_commit(w);
			scipis_lock_release(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) w->c.id);
		}
		/* Awake often enough to commit a merge that ended between polls. */
		timeout = Min(Max(1, scipis_watch_poll_ms - (long) ((GetCurrentTimestamp() - last_poll) / 1000)),
					  IDLE_MARK_MS);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

void
scipis_watcher_main(Datum arg)
{
	int64		id = DatumGetInt64(arg);
	Oid			database;
	Watcher		w = {0};
	HASHCTL		ctl = {0};
	TimestampTz first = 0,
				last_event = 0,
				last_check = 0,
				last_rescan = 0,
				last_mark = 0;
	bool		initial = true;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	memcpy(&database, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
	pgstat_report_appname("scipis watcher");
	if (!scipis_lock_try(SCIPIS_LOCK_WATCH, MyDatabaseId, (uint32) id))
		proc_exit(0);			/* another one runs */
	if (!reload(&w, id))
		proc_exit(0);
	{
		scipis_options opts;

		StartTransactionCommand();
		scipis_options_from_jsonb(w.c.options, &opts);
		CommitTransactionCommand();
		w.follow = opts.follow_symlinks != 0;
	}
	w.cxt = AllocSetContextCreate(TopMemoryContext, "scipis watcher", ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(int);
	ctl.entrysize = sizeof(WatchEntry);
	ctl.hcxt = w.cxt;
	w.watches = hash_create("scipis watches", 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	before_shmem_exit(stop_merge, PointerGetDatum(&w));
	w.garbage_merge_at = GetCurrentTimestamp();	/* the first renumbering merge an interval later */
	{
		const char *why = scipis_watch_poll_reason(w.c.root);

		if (why != NULL)
		{
			pgstat_report_activity(STATE_RUNNING, psprintf("scipis watcher %s: polling", w.c.name));
			poll_tree(&w, id, why);
		}
	}
	w.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w.fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("scipis: the watcher of \"%s\" could not start inotify: %m", w.c.name)));
	pgstat_report_activity(STATE_RUNNING, psprintf("scipis watcher %s: watching", w.c.name));
	/* Watches first, then a whole-tree refresh: nothing between is lost. */
	watch_tree(&w, w.c.root);
	w.full = true;
	w.why = "start";
	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		int			rc;
		long		timeout = CHECK_MS;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (TimestampDifferenceExceeds(last_check, now, CHECK_MS))
		{
			if (!reload(&w, id))
				proc_exit(0);
			last_check = now;
		}
		if (w.missing && TimestampDifferenceExceeds(last_rescan, now, RESCAN_MS))
		{
			w.full = true;
			w.why = "unwatched directories";
			last_rescan = now;
		}
		/*
		 * The batch ends when quiet for SETTLE_MS or MAX_BATCH_MS after its
		 * start (BACKLOG_BATCH_MS while segments wait for merges: staleness
		 * has room to spare, the merges do not).
		 */
		if (w.full || w.npaths > 0)
		{
			if (first == 0)
				first = now;
			if (initial || TimestampDifferenceExceeds(last_event, now, SETTLE_MS) ||
				TimestampDifferenceExceeds(first, now,
										   w.segments > BACKLOG_SEGMENTS ? BACKLOG_BATCH_MS : MAX_BATCH_MS))
			{
				/* Events of every change before as_of are read by the drain. */
				int64		as_of = now_ns();
				bool		was_missing = w.missing;
				int			done;

				while (read_events(&w))
					;
				if (w.full)
					w.missing = false;	/* the walk below is sure again */
				if (w.full && was_missing)
					watch_tree(&w, w.c.root);
				if (!w.full)
					unique_paths(&w);
				done = refresh(&w, as_of);
				if (done > 0)
				{
					for (int i = 0; i < w.npaths; i++)
						pfree(w.paths[i]);
					w.npaths = 0;
					w.full = false;
					first = 0;
					initial = false;
				}
				else
				{
					/* A job holds the collection, or the refresh failed: later. */
					w.missing |= was_missing;
					(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
									 done == 0 ? SETTLE_MS : RETRY_MS, PG_WAIT_EXTENSION);
					ResetLatch(MyLatch);
				}
				continue;
			}
			timeout = SETTLE_MS;
		}
		else if (!w.missing && TimestampDifferenceExceeds(last_mark, now, IDLE_MARK_MS))
		{
			/* Nothing read and not refreshed: every change before as_of is searchable. */
			int64		as_of = now_ns();

			while (read_events(&w))
				;
			if (w.npaths == 0 && !w.full &&
				scipis_lock_try(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) w.c.id))
			{
				scipis_error err;

				if (scipis_mark_fresh(w.dir, as_of, &err) != 0)
					ereport(LOG, (errmsg("scipis: the watcher of \"%s\": %s", w.c.name, err.message)));
				merge_commit(&w);
				/* Quiet since the last change, and not merged since: what is left. */
				if (w.merge == NULL && TimestampDifferenceExceeds(w.last_event, now, QUIET_MS) &&
					w.garbage_merge_at < w.last_event && scipis_compact_needed(w.dir, 0))
				{
					scipis_options opts;

					load_options(&w, &opts);
					merge(&w, &opts);
				}
				scipis_lock_release(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) w.c.id);
			}
			last_mark = now;
			continue;
		}
		if (!w.full && w.npaths == 0)
			timeout = IDLE_MARK_MS;
		rc = WaitLatchOrSocket(MyLatch, WL_LATCH_SET | WL_SOCKET_READABLE | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							   w.fd, timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (rc & WL_SOCKET_READABLE)
		{
			int			before = w.npaths;
			bool		was_full = w.full;

			while (read_events(&w))
				;
			if (w.npaths != before || w.full != was_full)
				last_event = w.last_event = GetCurrentTimestamp();
		}
	}
}
