/* The scipis access method's handler, cost estimate and opclass check. */
#include "am.h"

#include "access/amvalidate.h"
#include "catalog/pg_opclass.h"
#include "commands/vacuum.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "scipis_pg.h"

PG_FUNCTION_INFO_V1(scipis_am_handler);

static void
scipis_am_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
					   Cost *startup, Cost *total, Selectivity *selectivity,
					   double *correlation, double *pages)
{
	GenericCosts costs;

	MemSet(&costs, 0, sizeof(costs));
	genericcostestimate(root, path, loop_count, &costs);
	*startup = costs.indexStartupCost;
	*total = costs.indexTotalCost;
	*selectivity = costs.indexSelectivity;
	*correlation = 0;
	*pages = costs.numIndexPages;
	/*
	 * One ordering operator at a time: a second ORDER BY key needs a sort.
	 * A scan with no condition and no ordering lists every entry (count(*)
	 * through the index): correct, but never worth it against the table.
	 */
	if (list_length(path->indexorderbys) > 1 ||
		(path->indexclauses == NIL && path->indexorderbys == NIL))
	{
		*startup = disable_cost;
		*total = disable_cost;
	}
}

static bool
scipis_am_validate(Oid opclassoid)
{
	HeapTuple	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	bool		ok;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	ok = ((Form_pg_opclass) GETSTRUCT(tup))->opcintype == TEXTOID ||
		scipis_am_filter_type(((Form_pg_opclass) GETSTRUCT(tup))->opcintype);
	ReleaseSysCache(tup);
	return ok;
}

Datum
scipis_am_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	/* 1, 2: @@@ and <@> on the text; 1-5: B-tree's on filter columns. */
	am->amstrategies = 5;
	am->amsupport = 0;
	am->amoptsprocnum = 0;
	am->amcanorder = false;
	am->amcanorderbyop = true;
	am->amcanbackward = false;
	am->amcanunique = false;
	am->amcanmulticol = true;
	am->amoptionalkey = true;
	am->amsearcharray = false;
	am->amsearchnulls = false;
	am->amstorage = false;
	am->amclusterable = false;
	am->ampredlocks = false;
	am->amcanparallel = false;
	am->amcaninclude = false;
	am->amusemaintenanceworkmem = true;
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	am->ambuild = scipis_ambuild;
	am->ambuildempty = scipis_ambuildempty;
	am->aminsert = scipis_am_insert;
	am->ambulkdelete = scipis_am_bulkdelete;
	am->amvacuumcleanup = scipis_am_vacuumcleanup;
	am->amcanreturn = NULL;
	am->amcostestimate = scipis_am_costestimate;
	am->amoptions = scipis_am_options;
	am->amproperty = NULL;
	am->ambuildphasename = NULL;
	am->amvalidate = scipis_am_validate;
	am->amadjustmembers = NULL;
	am->ambeginscan = scipis_am_beginscan;
	am->amrescan = scipis_am_rescan;
	am->amgettuple = scipis_am_gettuple;
	am->amgetbitmap = scipis_am_getbitmap;
	am->amendscan = scipis_am_endscan;
	am->ammarkpos = NULL;
	am->amrestrpos = NULL;
	am->amestimateparallelscan = NULL;
	am->aminitparallelscan = NULL;
	am->amparallelrescan = NULL;

	PG_RETURN_POINTER(am);
}
