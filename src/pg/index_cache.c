/* Opened collection indexes, kept per backend while their manifest holds. */
#include "collection.h"

#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

typedef struct CachedIndex
{
	int64		id;
	Oid			database;
	char	   *dir;
	scipis_index *ix;
	struct CachedIndex *next;
} CachedIndex;

static CachedIndex *cache = NULL;

PG_FUNCTION_INFO_V1(scipis_backend_memory);

static void
drop_entry(CachedIndex **link)
{
	CachedIndex *e = *link;

	*link = e->next;
	scipis_index_close(e->ix);
	pfree(e->dir);
	pfree(e);
}

void
scipis_index_forget(const ScipisCollection *c)
{
	for (CachedIndex **link = &cache; *link;)
	{
		if ((*link)->id == c->id && (*link)->database == MyDatabaseId)
			drop_entry(link);
		else
			link = &(*link)->next;
	}
}

scipis_index *
scipis_index_cached(const ScipisCollection *c, bool missing_ok)
{
	char	   *dir = scipis_collection_dir(c);
	scipis_error err;
	scipis_index *ix;
	CachedIndex *e;

	for (CachedIndex **link = &cache; *link; link = &(*link)->next)
	{
		e = *link;
		if (e->id != c->id || e->database != MyDatabaseId || strcmp(e->dir, dir) != 0)
			continue;
		if (scipis_index_is_current(e->ix))
			return e->ix;
		/* A refresh since: what it left unchanged stays read. */
		if (scipis_index_update(e->ix, &err) == 0)
			return e->ix;
		drop_entry(link);
		break;
	}
	ix = scipis_index_open(dir, &err);
	if (ix == NULL)
	{
		if (missing_ok && err.code == SCIPIS_E_NOT_INDEXED)
			return NULL;
		if (err.code == SCIPIS_E_NOT_INDEXED)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("scipis collection \"%s\" has not been indexed yet", c->name),
					 errhint("Run SELECT * FROM scipis_index('%s').", c->name)));
		scipis_raise(&err);
	}
	e = MemoryContextAlloc(TopMemoryContext, sizeof(CachedIndex));
	e->id = c->id;
	e->database = MyDatabaseId;
	e->dir = MemoryContextStrdup(TopMemoryContext, dir);
	e->ix = ix;
	e->next = cache;
	cache = e;
	return ix;
}

/*
 * What this backend holds for each collection it has opened: the engine's
 * accounted heap, and the segment files mapped (pages of the page cache,
 * shared with every other backend).
 */
Datum
scipis_backend_memory(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *all = scipis_collection_all();

	InitMaterializedSRF(fcinfo, 0);
	for (CachedIndex *e = cache; e; e = e->next)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};
		scipis_index_info info;
		scipis_error err;
		ListCell   *lc;

		if (e->database != MyDatabaseId)
			continue;
		nulls[0] = true;
		foreach(lc, all)
		{
			ScipisCollection *c = lfirst(lc);

			if (c->id == e->id)
			{
				values[0] = CStringGetTextDatum(c->name);
				nulls[0] = false;
			}
		}
		if (scipis_index_info_get(e->ix, &info, &err) != 0)
			scipis_raise(&err);
		values[1] = Int64GetDatum((int64) info.heap_bytes);
		values[2] = Int64GetDatum((int64) info.mapped_bytes);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

text *
scipis_path_text(const char *path, uint32 len)
{
	StringInfoData buf;

	if (pg_verifymbstr(path, len, true))
		return cstring_to_text_with_len(path, len);
	initStringInfo(&buf);
	for (uint32 i = 0; i < len; i++)
	{
		unsigned char ch = (unsigned char) path[i];

		if (ch >= 0x80 || ch == '\\')
			appendStringInfo(&buf, "\\x%02x", ch);
		else
			appendStringInfoChar(&buf, (char) ch);
	}
	return cstring_to_text_with_len(buf.data, buf.len);
}

TimestampTz
scipis_timestamp(int64 mtime_ns)
{
	/* Floor, as a timespec splits seconds: mtime >= T then means mtime_ns
	 * >= 1000 T, before 1970 too. */
	int64		us = mtime_ns / 1000 - (mtime_ns % 1000 < 0 ? 1 : 0);

	return (TimestampTz) (us - (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC);
}
