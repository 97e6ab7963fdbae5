/* Creating, rebuilding and dropping block indexes. */
#include "block_pg.h"
#include "jobs.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(scipis_create_block_index);
PG_FUNCTION_INFO_V1(scipis_rebuild_block_index);
PG_FUNCTION_INFO_V1(scipis_drop_block_index);

static void
check_name(const char *name)
{
	size_t		n = strlen(name);

	if (n == 0 || n > 200)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block index name must have 1 to 200 bytes")));
}

char *
block_next_file(FunctionCallInfo fcinfo)
{
	char	   *sql = psprintf("SELECT nextval('%s')", block_file_sequence(fcinfo));
	MemoryContext outer = CurrentMemoryContext;
	char	   *r;
	bool		isnull;
	int64		id;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "scipis: SPI_connect failed");
	if (SPI_execute(sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "scipis: nextval failed");
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	r = MemoryContextAlloc(outer, 64);
	snprintf(r, 64, "block/" INT64_FORMAT ".sbi", id);
	return r;
}

static Datum
int8_array(const int64 *v, int n)
{
	StringInfoData s;
	int			i;

	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	for (i = 0; i < n; i++)
		appendStringInfo(&s, "%s" INT64_FORMAT, i ? "," : "", v[i]);
	appendStringInfoChar(&s, '}');
	return CStringGetTextDatum(s.data);
}

/* Writes the registry row: a new one, or the rebuilt one's new file and numbers. */
bool
block_index_exists(FunctionCallInfo fcinfo, const char *name)
{
	char	   *sql = psprintf("SELECT 1 FROM %s WHERE name = $1", block_registry_table(fcinfo));
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(name)};
	bool		exists;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "scipis: SPI_connect failed");
	if (SPI_execute_with_args(sql, 1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "scipis: registry lookup failed");
	exists = SPI_processed > 0;
	SPI_finish();
	return exists;
}

static void
store_row(FunctionCallInfo fcinfo, bool insert, const char *name, Datum variables,
		  Datum options, const char *index_file, const scipis_block_info *info,
		  const char *const *var_names, int n_vars)
{
	StringInfoData names;
	char	   *sql;
	Oid			types[9] = {TEXTOID, JSONBOID, JSONBOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID,
	INT8OID, INT8OID};
	Datum		args[9];
	int			i,
				rc;

	initStringInfo(&names);
	appendStringInfoChar(&names, '{');
	for (i = 0; i < n_vars; i++)
	{
		const char *c;

		appendStringInfoString(&names, i ? ",\"" : "\"");
		for (c = var_names[i]; *c; c++)
		{
			if (*c == '"' || *c == '\\')
				appendStringInfoChar(&names, '\\');
			appendStringInfoChar(&names, *c);
		}
		appendStringInfoChar(&names, '"');
	}
	appendStringInfoChar(&names, '}');

	args[0] = CStringGetTextDatum(name);
	args[1] = variables;
	args[2] = options;
	args[3] = CStringGetTextDatum(names.data);
	args[4] = CStringGetTextDatum(index_file);
	args[5] = int8_array(info->shape, info->ndims);
	args[6] = int8_array(info->block_shape, info->ndims);
	args[7] = Int64GetDatum((int64) info->partitions);
	args[8] = Int64GetDatum((int64) info->index_bytes);
	if (insert)
		sql = psprintf("INSERT INTO %s (name, variables, options, variable_names, index_file,"
					   " shape, block_shape, partitions, index_bytes, bytes_indexed, build_seconds)"
					   " VALUES ($1, $2, $3, $4::text[], $5, $6::bigint[], $7::bigint[], $8, $9,"
					   " %llu, %.6f)",
					   block_registry_table(fcinfo),
					   (unsigned long long) info->bytes_indexed, info->build_seconds);
	else
		sql = psprintf("UPDATE %s SET variables = $2, options = $3, variable_names = $4::text[],"
					   " index_file = $5, shape = $6::bigint[], block_shape = $7::bigint[],"
					   " partitions = $8, index_bytes = $9, bytes_indexed = %llu,"
					   " build_seconds = %.6f, built_at = now() WHERE name = $1",
					   block_registry_table(fcinfo),
					   (unsigned long long) info->bytes_indexed, info->build_seconds);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "scipis: SPI_connect failed");
	rc = SPI_execute_with_args(sql, 9, types, args, NULL, false, 0);
	if (rc == SPI_ERROR_ARGUMENT || rc < 0)
		elog(ERROR, "scipis: registry update failed: %s", SPI_result_code_string(rc));
	SPI_finish();
}

/* Records a built file; reads the variable order back from it. */
void
block_store(FunctionCallInfo fcinfo, bool insert, const char *name, Jsonb *variables,
			Jsonb *options, const char *file, const scipis_block_info *info)
{
	scipis_block_index *ix;
	scipis_error err;
	const char **names;
	int			i;

	ix = scipis_block_open(block_full_path(file), &err);
	if (!ix)
		block_raise(name, &err);
	names = palloc(sizeof(char *) * info->n_vars);
	for (i = 0; i < info->n_vars; i++)
		names[i] = pstrdup(scipis_block_var_name(ix, i));
	scipis_block_close(ix);
	store_row(fcinfo, insert, name, JsonbPGetDatum(variables), JsonbPGetDatum(options), file,
			  info, names, info->n_vars);
}

/*
 * Waited on: built by a job worker, recorded here in the caller's
 * transaction. Queued: the worker builds and records it in its own.
 */
static int64
build_and_store(FunctionCallInfo fcinfo, bool insert, const char *name, Jsonb *variables,
				Jsonb *options, bool wait)
{
	BlockSpecPg spec;
	scipis_block_info info;
	char	   *file;
	int64		job;

	block_parse_spec(variables, options, &spec);
	if (!wait)
		return scipis_block_job_queue(name, variables, options, !insert);
	file = block_next_file(fcinfo);
	block_file_created(block_full_path(file));
	job = scipis_block_job_waited(name, variables, options, block_full_path(file), &info);
	block_store(fcinfo, insert, name, variables, options, file, &info);
	return job;
}

Datum
scipis_create_block_index(PG_FUNCTION_ARGS)
{
	char	   *name;
	Jsonb	   *variables;
	Jsonb	   *options;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("block index name and variables must not be null")));
	scipis_require_read_server_files("create a block index");
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	check_name(name);
	variables = PG_GETARG_JSONB_P(1);
	options = PG_ARGISNULL(2) ? DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")))
		: PG_GETARG_JSONB_P(2);

	if (block_index_exists(fcinfo, name))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("block index \"%s\" already exists", name)));
	PG_RETURN_INT64(build_and_store(fcinfo, true, name, variables, options,
									PG_ARGISNULL(3) || PG_GETARG_BOOL(3)));
}

Datum
scipis_rebuild_block_index(PG_FUNCTION_ARGS)
{
	BlockEntry	e;
	Jsonb	   *variables;
	Jsonb	   *options;
	int64		job;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("block index name must not be null")));
	block_lookup(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)), &e);
	block_check_owner(&e);
	scipis_require_read_server_files("rebuild a block index");
	variables = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(e.variables)));
	options = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(e.options)));
	if (!PG_ARGISNULL(1) && !PG_GETARG_BOOL(1))
		PG_RETURN_INT64(build_and_store(fcinfo, false, e.name, variables, options, false));
	job = build_and_store(fcinfo, false, e.name, variables, options, true);
	block_file_dropped(block_full_path(e.index_file));
	PG_RETURN_INT64(job);
}

Datum
scipis_drop_block_index(PG_FUNCTION_ARGS)
{
	BlockEntry	e;
	char	   *sql;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	char	   *name;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("block index name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!PG_ARGISNULL(1) && PG_GETARG_BOOL(1))
	{
		if (!block_index_exists(fcinfo, name))
		{
			ereport(NOTICE,
					(errmsg("block index \"%s\" does not exist, skipping", name)));
			PG_RETURN_VOID();
		}
	}
	block_lookup(fcinfo, name, &e);
	block_check_owner(&e);
	sql = psprintf("DELETE FROM %s WHERE name = $1", block_registry_table(fcinfo));
	args[0] = CStringGetTextDatum(e.name);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "scipis: SPI_connect failed");
	if (SPI_execute_with_args(sql, 1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "scipis: registry delete failed");
	SPI_finish();
	block_file_dropped(block_full_path(e.index_file));
	PG_RETURN_VOID();
}
