/*
 * A waited refresh of named paths runs in the caller's backend: the few
 * files a change log or a script names take a few milliseconds to index,
 * and a job worker of their own (a fork, a backend start, three committed
 * transactions of its job row) cost 15 ms more. Like a job it waits for
 * the collection's build lock, and merges the tail tiers after; unlike a
 * job it leaves no row in scipis_jobs (its job is NULL), and it follows
 * the caller's synchronous_commit: off, its journal record may be left
 * unsynced (SCIPIS_REFRESH_DEFER_SYNC).
 */
#include "jobs.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"

#include "scipis_pg.h"

bool
scipis_build_run(scipis_build *b, scipis_build_stats *stats, scipis_error *err)
{
	while (!scipis_build_wait(b, 50))
	{
		if (ProcDiePending || QueryCancelPending)
		{
			scipis_build_abort(b);
			CHECK_FOR_INTERRUPTS();
			/* Interrupts held off: the caller raises the cancel itself. */
			snprintf(err->message, sizeof(err->message), "canceling statement due to user request");
			err->code = SCIPIS_E_CANCELED;
			return false;
		}
	}
	return scipis_build_finish(b, stats, err) == 0;
}

void
scipis_collection_locked(ScipisCollection *c, bool (*fn) (void *arg, scipis_error *err), void *arg)
{
	scipis_error err;
	volatile bool ok = false;

	while (!scipis_lock_try(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) c->id))
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	PG_TRY();
	{
		ok = fn(arg, &err);
	}
	PG_FINALLY();
	{
		scipis_lock_release(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) c->id);
	}
	PG_END_TRY();
	if (!ok)
		scipis_raise(&err);
	scipis_index_forget(c);
}

typedef struct RefreshHere
{
	ScipisCollection *c;
	const char *const *paths;
	int			n;
	scipis_build_stats *stats;
} RefreshHere;

static bool
refresh_locked(void *arg, scipis_error *err)
{
	RefreshHere *r = (RefreshHere *) arg;
	const char *dir = scipis_collection_dir(r->c);
	scipis_options opts;
	int			flags = 0;
	scipis_build *b;

	scipis_options_from_jsonb(r->c->options, &opts);
	if (scipis_option_true(r->c->options, "skip_unchanged_dirs"))
		flags |= SCIPIS_REFRESH_SKIP_DIRS;
	/* The caller's durability, as for its transactions' commits. */
	if (synchronous_commit == SYNCHRONOUS_COMMIT_OFF)
		flags |= SCIPIS_REFRESH_DEFER_SYNC;
	b = scipis_refresh_start(dir, r->c->root, &opts, r->paths, r->n, flags, err);
	if (b == NULL || !scipis_build_run(b, r->stats, err))
		return false;
	scipis_compact_tiers(dir, &opts, r->c->name);
	return true;
}

void
scipis_refresh_here(ScipisCollection *c, const char *const *paths, int n,
					scipis_build_stats *stats)
{
	RefreshHere r = {c, paths, n, stats};

	scipis_collection_locked(c, refresh_locked, &r);
}
