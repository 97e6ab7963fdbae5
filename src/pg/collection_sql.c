/* scipis_create_collection, scipis_drop_collection and scipis_index. */
#include "collection.h"

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
PG_FUNCTION_INFO_V1(scipis_index_collection);

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

/* Serialises builds of one collection across backends. */
static void
lock_collection(const ScipisCollection *c)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(c->id)};

	SPI_connect();
	if (SPI_execute_with_args("SELECT pg_catalog.pg_advisory_xact_lock(1935894889, $1::int4)",
							  1, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "scipis: could not lock collection");
	SPI_finish();
}

/*
 * Runs the build on engine threads; this thread only waits and polls for
 * interrupts. On an interrupt the build is stopped and discarded before the
 * error propagates, so no engine thread outlives the statement.
 */
static void
run_build(scipis_build *b, scipis_build_stats *stats)
{
	scipis_error err;

	PG_TRY();
	{
		while (!scipis_build_wait(b, 100))
			CHECK_FOR_INTERRUPTS();
		/* A cancel that arrived while the build finished still wins. */
		CHECK_FOR_INTERRUPTS();
	}
	PG_CATCH();
	{
		scipis_build_abort(b);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (scipis_build_finish(b, stats, &err) != 0)
		scipis_raise(&err);
}

Datum
scipis_index_collection(PG_FUNCTION_ARGS)
{
	ScipisCollection *c;
	scipis_options opts;
	scipis_build *b;
	scipis_build_stats stats;
	scipis_error err;
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {0};
	double		mib;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("collection name must not be null")));
	c = scipis_collection_get(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	scipis_require_read_server_files("index a scipis collection");
	scipis_require_read(c);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "scipis_index must return a row");
	desc = BlessTupleDesc(desc);
	scipis_options_from_jsonb(c->options, &opts);
	lock_collection(c);

	b = scipis_build_start(scipis_collection_dir(c), c->root, &opts, &err);
	if (b == NULL)
		scipis_raise(&err);
	run_build(b, &stats);
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
