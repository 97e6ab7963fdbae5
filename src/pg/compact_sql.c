/*
 * Compaction: scipis_compact(name), run in the calling backend under the
 * collection's build lock, and the tiered merges the job workers and the
 * watchers run after their refreshes (scipis_compact_tiers).
 */
#include "jobs.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(scipis_compact_collection);

/*
 * Runs a compaction of the index in dir to its end. False with err set
 * when it failed; a cancel or a shutdown stops it first (the previous
 * generation stays live) and is raised.
 */
bool
scipis_compact_run(const char *dir, const scipis_options *opts, int flags,
				   scipis_build_stats *stats, scipis_error *err)
{
	scipis_build *b = scipis_compact_start(dir, opts, flags, err);

	return b != NULL && scipis_build_run(b, stats, err);
}

/*
 * After a refresh, by its caller holding the collection's lock: merges
 * the tail tiers if segments piled up. Failures are logged, never raised:
 * the refresh has committed, and the next one tries again.
 */
void
scipis_compact_tiers(const char *dir, const scipis_options *opts, const char *name)
{
	scipis_build_stats stats;
	scipis_error err;

	if (!scipis_compact_needed(dir, 0))
		return;
	if (!scipis_compact_run(dir, opts, 0, &stats, &err))
		ereport(LOG,
				(errmsg("scipis: compacting \"%s\" failed: %s (tried again after the next refresh)",
						name, err.message)));
	else
		ereport(DEBUG1,
				(errmsg_internal("scipis: compacted \"%s\": %llu segments merged, %llu documents dropped, %llu chains folded in %.3f s",
								 name, (unsigned long long) stats.segments_merged,
								 (unsigned long long) stats.docs_dropped,
								 (unsigned long long) stats.chains_folded, stats.seconds)));
}

typedef struct CompactAll
{
	const char *dir;
	const scipis_options *opts;
	scipis_build_stats *stats;
} CompactAll;

static bool
compact_locked(void *arg, scipis_error *err)
{
	CompactAll *j = (CompactAll *) arg;

	return scipis_compact_run(j->dir, j->opts, SCIPIS_COMPACT_ALL, j->stats, err);
}

Datum
scipis_compact_collection(PG_FUNCTION_ARGS)
{
	ScipisCollection *c;
	scipis_options opts;
	scipis_build_stats stats;
	CompactAll	job;
	TupleDesc	desc;
	Datum		values[7];
	bool		nulls[7] = {0};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("collection name must not be null")));
	c = scipis_collection_get(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	scipis_require_read_server_files("compact a scipis collection");
	scipis_require_read(c);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "scipis_compact returns a row");
	desc = BlessTupleDesc(desc);
	scipis_options_from_jsonb(c->options, &opts);
	job.dir = scipis_collection_dir(c);
	job.opts = &opts;
	job.stats = &stats;
	scipis_collection_locked(c, compact_locked, &job);
	values[0] = Int64GetDatum((int64) stats.segments_merged);
	values[1] = Int64GetDatum((int64) stats.docs_dropped);
	values[2] = Int64GetDatum((int64) stats.chains_folded);
	values[3] = Int64GetDatum((int64) stats.segments);
	values[4] = Int64GetDatum((int64) stats.deleted_docs);
	values[5] = Int64GetDatum((int64) stats.index_bytes);
	values[6] = Float8GetDatum(stats.seconds);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
