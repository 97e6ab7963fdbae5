/*
 * The registry table of block indexes and the life of their files: a file
 * built in a transaction that aborts is removed, a dropped one only when the
 * dropping transaction commits.
 */
#include "block_pg.h"
#include "collection.h"

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

/* In the calling function's schema; without one (a job worker), the extension's. */
static char *
qualified(FunctionCallInfo fcinfo, const char *rel)
{
	Oid			ns = fcinfo ? get_func_namespace(fcinfo->flinfo->fn_oid) : scipis_extension_schema();
	char	   *nsname = get_namespace_name(ns);

	if (!nsname)
		elog(ERROR, "scipis: schema of the scipis registry not found");
	return psprintf("%s.%s", quote_identifier(nsname), rel);
}

char *
block_registry_table(FunctionCallInfo fcinfo)
{
	return qualified(fcinfo, "scipis_block_index");
}

char *
block_file_sequence(FunctionCallInfo fcinfo)
{
	return qualified(fcinfo, "scipis_block_file_seq");
}

static char *
text_col(HeapTuple tup, TupleDesc td, int col, MemoryContext cxt)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, td, col, &isnull);
	char	   *s;

	if (isnull)
		return NULL;
	s = TextDatumGetCString(d);
	return MemoryContextStrdup(cxt, s);
}

void
block_lookup(FunctionCallInfo fcinfo, const char *name, BlockEntry *e)
{
	MemoryContext outer = CurrentMemoryContext;
	char	   *sql;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	int			rc;

	if (!name)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("block index name must not be null")));
	sql = psprintf("SELECT name, index_file, owner::text, variables::text, options::text, built_at"
				   " FROM %s WHERE name = $1", block_registry_table(fcinfo));
	args[0] = CStringGetTextDatum(name);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "scipis: SPI_connect failed");
	rc = SPI_execute_with_args(sql, 1, argtypes, args, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "scipis: registry lookup failed: %s", SPI_result_code_string(rc));
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("block index \"%s\" does not exist", name)));
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		isnull;

		e->name = text_col(tup, td, 1, outer);
		e->index_file = text_col(tup, td, 2, outer);
		e->owner = text_col(tup, td, 3, outer);
		e->variables = text_col(tup, td, 4, outer);
		e->options = text_col(tup, td, 5, outer);
		e->built_at = SPI_getbinval(tup, td, 6, &isnull);
	}
	SPI_finish();
	if (!e->index_file || strstr(e->index_file, "..") || e->index_file[0] == '/')
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("block index \"%s\" has a bad index_file in its registry row", name)));
}

static bool
owns(const BlockEntry *e)
{
	Oid			role = get_role_oid(e->owner, true);

	if (superuser())
		return true;
	return OidIsValid(role) && has_privs_of_role(GetUserId(), role);
}

void
block_check_read(const BlockEntry *e)
{
	if (!owns(e))
		scipis_require_read_server_files("read through a block index owned by another role");
}

void
block_check_owner(const BlockEntry *e)
{
	if (!owns(e))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of block index \"%s\"", e->name)));
}

char *
block_full_path(const char *index_file)
{
	return psprintf("%s/%s", scipis_database_dir(), index_file);
}

pg_attribute_noreturn() void
block_raise(const char *name, const scipis_error *err)
{
	scipis_error e = *err;

	if (name)
		snprintf(e.message, sizeof e.message, "block index \"%s\": %s", name, err->message);
	scipis_raise(&e);
}

/* ---- file life cycle ---- */

typedef struct PendingFile
{
	char	   *path;
	bool		remove_on_commit;	/* dropped; else created */
	struct PendingFile *next;
} PendingFile;

static PendingFile *pending = NULL;
static bool callback_registered = false;

static void
block_xact_callback(XactEvent event, void *arg)
{
	PendingFile *p;
	bool		commit;

	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
		commit = true;
	else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		commit = false;
	else
		return;
	for (p = pending; p; p = p->next)
	{
		if (p->remove_on_commit == commit)
		{
			scipis_error err;

			/* Past commit or abort: a failure to remove leaves garbage, no error. */
			if (scipis_block_remove(p->path, &err) != 0)
				elog(WARNING, "scipis: %s", err.message);
		}
	}
	while (pending)
	{
		p = pending->next;
		pfree(pending->path);
		pfree(pending);
		pending = p;
	}
}

static void
add_pending(const char *path, bool on_commit)
{
	PendingFile *p;

	if (!callback_registered)
	{
		RegisterXactCallback(block_xact_callback, NULL);
		callback_registered = true;
	}
	p = MemoryContextAlloc(TopMemoryContext, sizeof(PendingFile));
	p->path = MemoryContextStrdup(TopMemoryContext, path);
	p->remove_on_commit = on_commit;
	p->next = pending;
	pending = p;
}

void
block_file_created(const char *path)
{
	add_pending(path, false);
}

void
block_file_dropped(const char *path)
{
	add_pending(path, true);
}
