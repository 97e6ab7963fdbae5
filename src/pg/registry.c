/*
 * The registry table scipis_collection, read through SPI. Writes run as the
 * bootstrap superuser after the caller's privileges were checked, so the
 * table itself grants nothing but SELECT.
 */
#include "collection.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/relation.h"
#include "catalog/pg_collation.h"
#include "utils/snapmgr.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* PostgreSQL 15 does not export get_extension_schema(). */
Oid
scipis_extension_schema(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			result = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("scipis"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		result = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(result))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"scipis\" is not installed in this database")));
	return result;
}

static const char *
registry_table(void)
{
	char	   *schema = get_namespace_name(scipis_extension_schema());

	return psprintf("%s.scipis_collection", quote_identifier(schema));
}

static ScipisCollection *
row_to_collection(HeapTuple tup, TupleDesc desc)
{
	ScipisCollection *c = palloc0(sizeof(ScipisCollection));
	bool		isnull;

	c->id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
	c->name = SPI_getvalue(tup, desc, 2);
	c->root = SPI_getvalue(tup, desc, 3);
	c->options = DatumGetJsonbPCopy(SPI_getbinval(tup, desc, 4, &isnull));
	c->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 5, &isnull));
	return c;
}

static List *
fetch(const char *where, Datum arg)
{
	MemoryContext outer = CurrentMemoryContext;
	List	   *result = NIL;
	char	   *sql;
	Oid			argtypes[1] = {TEXTOID};
	int			ret;

	sql = psprintf("SELECT id, name, root, options, owner::oid FROM %s %s ORDER BY name",
				   registry_table(), where);
	SPI_connect();
	ret = SPI_execute_with_args(sql, where[0] ? 1 : 0, argtypes, &arg, NULL, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "scipis: registry query failed: %s", SPI_result_code_string(ret));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext spi = MemoryContextSwitchTo(outer);

		result = lappend(result, row_to_collection(SPI_tuptable->vals[i], SPI_tuptable->tupdesc));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	return result;
}

/*
 * One collection by name, through the registry's unique index on name:
 * searches look their collection up on every call, and an index probe costs
 * a fraction of an SPI query.
 */
ScipisCollection *
scipis_collection_get(const char *name, bool missing_ok)
{
	Oid			schema = scipis_extension_schema();
	Oid			relid = get_relname_relid("scipis_collection", schema);
	Oid			indid = get_relname_relid("scipis_collection_name_key", schema);
	Relation	rel;
	Relation	ind;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	ScipisCollection *c = NULL;

	if (!OidIsValid(relid) || !OidIsValid(indid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the scipis registry table or its index is missing")));
	rel = table_open(relid, AccessShareLock);
	ind = index_open(indid, AccessShareLock);
	ScanKeyInit(&key, 2, BTEqualStrategyNumber, F_TEXTEQ, CStringGetTextDatum(name));
	key.sk_collation = ind->rd_indcollation[0];
	scan = systable_beginscan(rel, indid, true,
							  ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot(),
							  1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		Datum		values[6];
		bool		nulls[6];

		heap_deform_tuple(tup, desc, values, nulls);
		c = palloc0(sizeof(ScipisCollection));
		c->id = DatumGetInt64(values[0]);
		c->name = TextDatumGetCString(values[1]);
		c->root = TextDatumGetCString(values[2]);
		c->options = DatumGetJsonbPCopy(values[3]);
		c->owner = DatumGetObjectId(values[4]);
	}
	systable_endscan(scan);
	index_close(ind, AccessShareLock);
	table_close(rel, AccessShareLock);
	if (c == NULL && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("scipis collection \"%s\" does not exist", name)));
	return c;
}

List *
scipis_collection_all(void)
{
	return fetch("", (Datum) 0);
}

/* Runs one statement with the registry writable, as the bootstrap superuser. */
static void
write_registry(const char *sql, int nargs, Oid *types, Datum *values, int expect)
{
	Oid			save_user;
	int			save_sec;
	int			ret;

	GetUserIdAndSecContext(&save_user, &save_sec);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		SPI_connect();
		ret = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);
		if (ret != expect)
			elog(ERROR, "scipis: registry update failed: %s", SPI_result_code_string(ret));
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_user, save_sec);
	}
	PG_END_TRY();
}

void
scipis_collection_insert(const char *name, const char *root, Jsonb *options)
{
	Oid			types[4] = {TEXTOID, TEXTOID, JSONBOID, OIDOID};
	Datum		values[4];

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(root);
	values[2] = JsonbPGetDatum(options);
	values[3] = ObjectIdGetDatum(GetUserId());
	write_registry(psprintf("INSERT INTO %s (name, root, options, owner) "
							"VALUES ($1, $2, $3, $4::oid::regrole)", registry_table()),
				   4, types, values, SPI_OK_INSERT);
}

void
scipis_collection_delete(int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	write_registry(psprintf("DELETE FROM %s WHERE id = $1", registry_table()),
				   1, types, values, SPI_OK_DELETE);
}

bool
scipis_may_read(const ScipisCollection *c)
{
	Oid			user = GetUserId();

	return has_privs_of_role(user, c->owner) ||
		has_privs_of_role(user, ROLE_PG_READ_SERVER_FILES);
}

void
scipis_require_read(const ScipisCollection *c)
{
	if (!scipis_may_read(c))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for scipis collection \"%s\"", c->name),
				 errdetail("Only its owner and roles with privileges of \"pg_read_server_files\" may search it.")));
}

void
scipis_require_owner(const ScipisCollection *c)
{
	if (!has_privs_of_role(GetUserId(), c->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of scipis collection \"%s\"", c->name)));
}

char *
scipis_collection_dir(const ScipisCollection *c)
{
	return psprintf("%s/c" INT64_FORMAT, scipis_database_dir(), c->id);
}
