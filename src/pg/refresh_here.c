/*
 * A waited refresh of named paths runs in the caller's backend: the few
 * files a change log or a script names take a few milliseconds to index,
 * and a job worker of their own (a fork, a backend start, three committed
 * transactions of its job row) cost 15 ms more. Like a job it waits for
 * the collection's build lock, and merges the tail tiers after; unlike a
 * job it leaves no row in scipis_jobs (its job is NULL).
 */
#include "jobs.h"

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
scipis_collection_lock_wait(ScipisCollection *c)
{
	while (!scipis_lock_try(SCIPIS_LOCK_COLLECTION, MyDatabaseId, (uint32) c->id))
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

void
scipis_refresh_here(ScipisCollection *c, const char *const *paths, int n,
					scipis_build_stats *stats)
{
	const char *dir = scipis_collection_dir(c);
	scipis_options opts;
	scipis_error err;
	volatile bool ok = false;
	int			flags = 0;

	scipis_options_from_jsonb(c->options, &opts);
	if (scipis_option_true(c->options, "skip_unchanged_dirs"))
		flags |= SCIPIS_REFRESH_SKIP_DIRS;
	/* A build, refresh or watcher of the collection goes first. */
	scipis_collection_lock_wait(c);
	PG_TRY();
	{
		scipis_build *b = scipis_refresh_start(dir, c->root, &opts, paths, n, flags, &err);

		ok = b != NULL && scipis_build_run(b, stats, &err);
		if (ok)
			scipis_compact_tiers(dir, &opts, c->name);
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
