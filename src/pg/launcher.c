/*
 * The GUCs of jobs, and with shared_preload_libraries the launcher: it
 * keeps a scheduler running in every database that accepts connections.
 * A scheduler leaves at once where scipis is not installed (the launcher
 * tries that database again a minute later); elsewhere it queues the jobs
 * of collections with a refresh_interval, queues again the jobs a restart
 * or crash interrupted, and starts queue runners for queued jobs.
 */
#include "jobs.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

int			scipis_max_workers = 2;
int			scipis_max_threads = 0;
int			scipis_scheduler_naptime = 1000;
bool		scipis_preloaded = false;

#define LAUNCHER_NAPTIME_MS 10000
#define ABSENT_RETRY_MS 60000
#define MAX_DATABASES 256

static const struct config_enum_entry watch_methods[] = {
	{"auto", SCIPIS_WATCH_AUTO, false},
	{"inotify", SCIPIS_WATCH_INOTIFY, false},
	{"poll", SCIPIS_WATCH_POLL, false},
	{NULL, 0, false}
};

void
scipis_jobs_init(void)
{
	BackgroundWorker w = {0};

	DefineCustomIntVariable("scipis.max_workers",
							"Most scipis jobs that run at once, over all databases.",
							NULL, &scipis_max_workers, 2, 1, 64, PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("scipis.max_threads",
							"Most indexer threads over all running scipis jobs (0: the machine's cores).",
							NULL, &scipis_max_threads, 0, 0, 1024, PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("scipis.scheduler_naptime",
							"How often each database's scipis scheduler looks for due and interrupted jobs.",
							NULL, &scipis_scheduler_naptime, 1000, 100, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("scipis.watch_garbage_merge_interval",
							"Under unbroken churn, a watcher merges away tombstoned documents beside its refreshes at most this often.",
							NULL, &scipis_watch_garbage_merge_ms, 120000, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomEnumVariable("scipis.watch_method",
							 "How a watcher follows its tree: auto (polls on network and parallel file systems, inotify elsewhere), inotify or poll; read when the watcher starts.",
							 NULL, &scipis_watch_method, SCIPIS_WATCH_AUTO, watch_methods,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("scipis.watch_poll_interval",
							"How often a watcher that polls refreshes its tree.",
							NULL, &scipis_watch_poll_ms, 10000, 100, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomBoolVariable("scipis.watch_test_overflow",
							 "Tests: watchers treat every batch of events as a queue overflow.",
							 NULL, &scipis_watch_test_overflow, false, PGC_SIGHUP,
							 GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	scipis_preloaded = true;
	scipis_worker_fill(&w, "scipis_launcher_main", "scipis launcher");
	w.bgw_restart_time = 10;
	RegisterBackgroundWorker(&w);
}

typedef struct SchedulerEntry
{
	Oid			database;
	BackgroundWorkerHandle *handle;
	TimestampTz started;
} SchedulerEntry;

static int
list_databases(Oid *out, int max)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	int			n = 0;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL && n < max)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (db->datallowconn && !db->datistemplate)
			out[n++] = db->oid;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return n;
}

static BackgroundWorkerHandle *
start_scheduler(Oid database)
{
	BackgroundWorker w = {0};
	BackgroundWorkerHandle *h;
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	bool		ok;

	scipis_worker_fill(&w, "scipis_scheduler_main", "scipis scheduler");
	snprintf(w.bgw_name, BGW_MAXLEN, "scipis scheduler %u", database);
	w.bgw_main_arg = ObjectIdGetDatum(database);
	ok = RegisterDynamicBackgroundWorker(&w, &h);
	MemoryContextSwitchTo(old);
	return ok ? h : NULL;
}

void
scipis_launcher_main(Datum arg)
{
	SchedulerEntry entries[MAX_DATABASES];
	int			n_entries = 0;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	for (;;)
	{
		Oid			dbs[MAX_DATABASES];
		int			n = list_databases(dbs, MAX_DATABASES);
		TimestampTz now = GetCurrentTimestamp();

		for (int i = 0; i < n; i++)
		{
			SchedulerEntry *e = NULL;
			pid_t		pid;

			for (int j = 0; j < n_entries; j++)
				if (entries[j].database == dbs[i])
					e = &entries[j];
			if (e == NULL)
			{
				if (n_entries == MAX_DATABASES)
					continue;
				e = &entries[n_entries++];
				e->database = dbs[i];
				e->handle = NULL;
				e->started = 0;
			}
			if (e->handle != NULL && GetBackgroundWorkerPid(e->handle, &pid) != BGWH_STOPPED)
				continue;
			if (e->handle != NULL && !TimestampDifferenceExceeds(e->started, now, ABSENT_RETRY_MS))
				continue;
			if (e->handle != NULL)
				pfree(e->handle);
			e->handle = start_scheduler(dbs[i]);
			e->started = now;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 LAUNCHER_NAPTIME_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}

/* Queues a job for each collection whose refresh_interval has passed. */
static void
queue_due(void)
{
	const char *schema = quote_identifier(get_namespace_name(scipis_extension_schema()));

	scipis_job_exec(psprintf("INSERT INTO %s (target, collection_id, kind, submitted_by, scheduled)"
							 " SELECT c.name, c.id, 'refresh', c.owner::oid, true"
							 " FROM %s.scipis_collection c"
							 " WHERE c.options ? 'refresh_interval'"
							 " AND coalesce((SELECT max(j.submitted) FROM %s j"
							 "   WHERE j.collection_id = c.id AND j.scheduled), c.created)"
							 "   + (c.options->>'refresh_interval')::interval <= now()"
							 " AND NOT EXISTS (SELECT 1 FROM %s j WHERE j.collection_id = c.id"
							 "   AND j.state IN ('queued', 'running'))",
							 scipis_job_table(), schema, scipis_job_table(), scipis_job_table()),
					0, NULL, NULL);
}

static int64
running_runners(void)
{
	return scipis_job_query_int8("SELECT count(*) FROM pg_catalog.pg_stat_activity"
								 " WHERE backend_type = 'scipis job runner'"
								 " AND datid = (SELECT oid FROM pg_catalog.pg_database"
								 "   WHERE datname = current_database())",
								 0, NULL, NULL);
}

void
scipis_scheduler_main(Datum arg)
{
	Oid			database = DatumGetObjectId(arg);

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
	pgstat_report_appname("scipis scheduler");
	/* One scheduler per database, even if the launcher restarted. */
	if (!scipis_lock_try(SCIPIS_LOCK_SCHEDULER, InvalidOid, database))
		proc_exit(0);
	for (;;)
	{
		int64		queued,
					runners;
		bool		installed;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		installed = OidIsValid(get_extension_oid("scipis", true));
		if (installed)
		{
			queue_due();
			scipis_start_watchers();
			scipis_jobs_recover();
			queued = scipis_jobs_queued();
			runners = running_runners();
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
		if (!installed)
			proc_exit(0);
		for (int64 i = runners; i < Min(queued, (int64) scipis_max_workers); i++)
			if (!scipis_start_runner(MyDatabaseId))
				break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 scipis_scheduler_naptime, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
}
