/* Reading through block indexes: stats, ranges, query and count. */
#include "block_pg.h"

#include <time.h>

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(scipis_block_stats);
PG_FUNCTION_INFO_V1(scipis_block_ranges);
PG_FUNCTION_INFO_V1(scipis_block_query);
PG_FUNCTION_INFO_V1(scipis_block_count);

/* The index behind a name, checked and opened; the caller closes it. */
static scipis_block_index *
open_named(FunctionCallInfo fcinfo, int argno, BlockEntry *e)
{
	scipis_error err;
	scipis_block_index *ix;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("block index name must not be null")));
	block_lookup(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(argno)), e);
	block_check_read(e);
	ix = scipis_block_open(block_full_path(e->index_file), &err);
	if (!ix)
		block_raise(e->name, &err);
	return ix;
}

static char *
predicate_arg(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("predicate must not be null")));
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/* max_gap and max_read arguments; NULL keeps the default. */
static void
read_opts(FunctionCallInfo fcinfo, int gap_arg, scipis_block_read_opts *o)
{
	scipis_block_read_opts_init(o);
	if (PG_NARGS() > gap_arg && !PG_ARGISNULL(gap_arg))
	{
		o->max_gap = PG_GETARG_INT64(gap_arg);
		if (o->max_gap < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_gap must not be negative")));
	}
	if (PG_NARGS() > gap_arg + 1 && !PG_ARGISNULL(gap_arg + 1))
	{
		o->max_read = PG_GETARG_INT64(gap_arg + 1);
		if (o->max_read <= 0 || o->max_read > ((int64) 1 << 30))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_read must be between 1 and 1073741824")));
	}
}

static Datum
int8_array_datum(const int64 *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
		d[i] = Int64GetDatum(v[i]);
	return PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static Datum
float8_array_datum(const double *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
		d[i] = Float8GetDatum(v[i]);
	return PointerGetDatum(construct_array(d, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

Datum
scipis_block_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BlockEntry	e;
	scipis_block_index *ix;
	scipis_block_info info;
	Datum		values[14];
	bool		nulls[14] = {0};
	Datum	   *names;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	ix = open_named(fcinfo, 0, &e);
	scipis_block_info_get(ix, &info);
	names = palloc(sizeof(Datum) * info.n_vars);
	for (i = 0; i < info.n_vars; i++)
		names[i] = CStringGetTextDatum(scipis_block_var_name(ix, i));
	scipis_block_close(ix);

	values[0] = CStringGetTextDatum(e.name);
	values[1] = PointerGetDatum(construct_array(names, info.n_vars, TEXTOID, -1, false, TYPALIGN_INT));
	values[2] = int8_array_datum(info.shape, info.ndims);
	values[3] = int8_array_datum(info.block_shape, info.ndims);
	values[4] = Int64GetDatum((int64) info.elements);
	values[5] = Int64GetDatum((int64) info.blocks);
	values[6] = Int64GetDatum((int64) info.partitions);
	values[7] = Int64GetDatum((int64) info.partition_elements);
	values[8] = Int64GetDatum((int64) info.bytes_indexed);
	values[9] = Int64GetDatum((int64) info.index_bytes);
	values[10] = Float8GetDatum(info.build_seconds);
	values[11] = e.built_at;
	values[12] = CStringGetTextDatum(e.owner);
	values[13] = CStringGetTextDatum(e.index_file);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

Datum
scipis_block_ranges(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BlockEntry	e;
	scipis_block_index *volatile ix;
	scipis_block_read_opts o;
	scipis_block_range_list r = {0};
	scipis_error err;
	char	   *pred;

	InitMaterializedSRF(fcinfo, 0);
	pred = predicate_arg(fcinfo, 1);
	read_opts(fcinfo, 2, &o);
	ix = open_named(fcinfo, 0, &e);
	PG_TRY();
	{
		size_t		i;
		Datum	   *names;
		scipis_block_info info;

		if (scipis_block_plan(ix, pred, &o, &r, &err) != 0)
			block_raise(e.name, &err);
		scipis_block_info_get(ix, &info);
		names = palloc(sizeof(Datum) * info.n_vars);
		for (i = 0; i < (size_t) info.n_vars; i++)
			names[i] = CStringGetTextDatum(scipis_block_var_name(ix, (int) i));
		for (i = 0; i < r.n; i++)
		{
			const scipis_block_range *x = &r.ranges[i];
			Datum		values[8];
			bool		nulls[8] = {0};

			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			values[0] = names[x->var];
			values[1] = Int64GetDatum(x->block);
			values[2] = Int64GetDatum(x->first_partition);
			values[3] = Int64GetDatum(x->partitions);
			values[4] = Int64GetDatum(x->offset);
			values[5] = Int64GetDatum(x->length);
			values[6] = Float8GetDatum(x->min);
			values[7] = Float8GetDatum(x->max);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	PG_FINALLY();
	{
		scipis_block_ranges_free(&r);
		scipis_block_close(ix);
	}
	PG_END_TRY();
	return (Datum) 0;
}

Datum
scipis_block_query(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BlockEntry	e;
	scipis_block_index *volatile ix;
	scipis_block_scan *volatile scan = NULL;
	scipis_block_read_opts o;
	scipis_error err;
	char	   *pred;
	MemoryContext rowcxt;

	InitMaterializedSRF(fcinfo, 0);
	pred = predicate_arg(fcinfo, 1);
	read_opts(fcinfo, 2, &o);
	ix = open_named(fcinfo, 0, &e);
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "scipis block rows",
								   ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		scipis_block_info info;
		scipis_block_hits h;
		int			rc;
		int64		coords[SCIPIS_BLOCK_MAX_DIMS];

		scipis_block_info_get(ix, &info);
		scan = scipis_block_scan_start(ix, pred, &o, &err);
		if (!scan)
			block_raise(e.name, &err);
		while ((rc = scipis_block_scan_next(scan, &h, &err)) == 1)
		{
			size_t		i;

			CHECK_FOR_INTERRUPTS();
			for (i = 0; i < h.n; i++)
			{
				Datum		values[3];
				bool		nulls[3] = {0};
				MemoryContext old = MemoryContextSwitchTo(rowcxt);

				scipis_block_coords(ix, h.elements[i], coords);
				values[0] = Int64GetDatum(h.elements[i]);
				values[1] = int8_array_datum(coords, info.ndims);
				values[2] = float8_array_datum(h.values + i * info.n_vars, info.n_vars);
				MemoryContextSwitchTo(old);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
				MemoryContextReset(rowcxt);
			}
		}
		if (rc < 0)
			block_raise(e.name, &err);
	}
	PG_FINALLY();
	{
		if (scan)
			scipis_block_scan_end(scan);
		scipis_block_close(ix);
	}
	PG_END_TRY();
	return (Datum) 0;
}

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

Datum
scipis_block_count(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BlockEntry	e;
	scipis_block_index *volatile ix;
	scipis_block_scan *volatile scan = NULL;
	scipis_block_read_opts o;
	scipis_block_scan_info si;
	scipis_error err;
	char	   *pred;
	char	   *mode;
	double		t0;
	Datum		values[6];
	bool		nulls[6] = {0};

	InitMaterializedSRF(fcinfo, 0);
	pred = predicate_arg(fcinfo, 1);
	read_opts(fcinfo, 3, &o);
	o.count_only = 1;
	mode = PG_ARGISNULL(2) ? "partition" : text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (strcmp(mode, "partition") == 0)
		o.prune = SCIPIS_PRUNE_PARTITION;
	else if (strcmp(mode, "block") == 0)
		o.prune = SCIPIS_PRUNE_BLOCK;
	else if (strcmp(mode, "none") == 0)
		o.prune = SCIPIS_PRUNE_NONE;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pruning must be \"partition\", \"block\" or \"none\", not \"%s\"", mode)));
	t0 = now_seconds();
	ix = open_named(fcinfo, 0, &e);
	PG_TRY();
	{
		scipis_block_hits h;
		int			rc;

		scan = scipis_block_scan_start(ix, pred, &o, &err);
		if (!scan)
			block_raise(e.name, &err);
		while ((rc = scipis_block_scan_next(scan, &h, &err)) == 1)
			CHECK_FOR_INTERRUPTS();
		if (rc < 0)
			block_raise(e.name, &err);
		scipis_block_scan_info_get(scan, &si);
	}
	PG_FINALLY();
	{
		if (scan)
			scipis_block_scan_end(scan);
		scipis_block_close(ix);
	}
	PG_END_TRY();
	values[0] = Int64GetDatum((int64) si.hits);
	values[1] = Int64GetDatum((int64) si.candidate_partitions);
	values[2] = Int64GetDatum((int64) si.bytes_read);
	values[3] = Int64GetDatum((int64) si.read_requests);
	values[4] = Int64GetDatum((int64) si.elements_checked);
	values[5] = Float8GetDatum(now_seconds() - t0);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
