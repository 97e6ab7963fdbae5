/* scipis_create_collection and scipis_drop_collection (scipis_index: job_sql.c). */
#include "jobs.h"

#include <sys/stat.h>

#include "access/xact.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(scipis_create_collection);
PG_FUNCTION_INFO_V1(scipis_drop_collection);

/* Index directories of dropped collections, removed at commit. */
static List *pending_removals = NIL;
static bool callback_registered = false;

static void
removal_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (event == XACT_EVENT_COMMIT)
	{
		foreach(lc, pending_removals)
		{
			scipis_error err;

			if (scipis_remove_dir((char *) lfirst(lc), &err) != 0)
				ereport(WARNING,
						(errmsg("scipis: could not remove dropped collection files: %s",
								err.message)));
		}
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT)
	{
		list_free_deep(pending_removals);
		pending_removals = NIL;
	}
}

static void
check_name(const char *name)
{
	if (name[0] == '\0' || strlen(name) > 200)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("scipis collection name must have 1 to 200 bytes")));
}

Datum
scipis_create_collection(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *root;
	Jsonb	   *options;
	scipis_options opts;
	struct stat st;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("collection name and root must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	root = text_to_cstring(PG_GETARG_TEXT_PP(1));
	options = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);

	scipis_require_read_server_files("create a scipis collection");
	check_name(name);
	if (options == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("collection options must not be null (use '{}')")));
	scipis_options_from_jsonb(options, &opts);

	if (!is_absolute_path(root))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("collection root \"%s\" is not an absolute path", root)));
	if (stat(root, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not access collection root \"%s\": %m", root)));
	if (!S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("collection root \"%s\" is not a directory", root)));
	if (scipis_collection_get(name, true) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("scipis collection \"%s\" already exists", name)));
	scipis_collection_insert(name, root, options);
	if (!scipis_preloaded && DatumGetBool(DirectFunctionCall2(jsonb_exists, JsonbPGetDatum(options),
														CStringGetTextDatum("refresh_interval"))))
		ereport(NOTICE,
				(errmsg("refresh_interval is kept, but scheduled jobs run only when scipis is preloaded"),
				 errhint("Add scipis to shared_preload_libraries and restart the server.")));
	if (scipis_preloaded && scipis_watched(options))
	{
		ListCell   *lc;

		/* The row just inserted: SPI's new snapshot sees it. */
		foreach(lc, scipis_collection_all())
			if (strcmp(((ScipisCollection *) lfirst(lc))->name, name) == 0)
				scipis_start_watcher_at_commit(((ScipisCollection *) lfirst(lc))->id);
	}
	if (!scipis_preloaded && scipis_watched(options))
		ereport(NOTICE,
				(errmsg("watch is kept, but the watcher runs only when scipis is preloaded"),
				 errhint("Add scipis to shared_preload_libraries and restart the server; until then scipis_refresh brings the collection up to date.")));
	PG_RETURN_VOID();
}

Datum
scipis_drop_collection(PG_FUNCTION_ARGS)
{
	ScipisCollection *c;
	MemoryContext old;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("collection name must not be null")));
	c = scipis_collection_get(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	scipis_require_owner(c);
	scipis_collection_delete(c->id);
	scipis_jobs_cancel_collection(c->id);
	scipis_index_forget(c);
	if (!callback_registered)
	{
		RegisterXactCallback(removal_callback, NULL);
		callback_registered = true;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	pending_removals = lappend(pending_removals, pstrdup(scipis_collection_dir(c)));
	MemoryContextSwitchTo(old);
	PG_RETURN_VOID();
}
