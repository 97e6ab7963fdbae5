/* Module entry: the GUCs, the data directory and the privilege rule. */
#include "scipis_pg.h"
#include "jobs.h"

#include <sys/stat.h>

#include "catalog/pg_authid.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

PG_MODULE_MAGIC;

char	   *scipis_data_directory = NULL;
static int	scipis_index_cache_size = 32 * 1024;	/* kB */

void		_PG_init(void);

static void
assign_index_cache_size(int newval, void *extra)
{
	scipis_am_cache_configure((size_t) newval * 1024);
}

void
_PG_init(void)
{
	DefineCustomStringVariable("scipis.data_directory",
							   "Directory for scipis index files (empty: $PGDATA/scipis).",
							   "A relative path is taken relative to the data directory.",
							   &scipis_data_directory,
							   "",
							   PGC_SIGHUP,
							   0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("scipis.index_cache_size",
							"Memory per backend for index pages already read and checked.",
							"Pages of scipis indexes (the access method) that queries read; "
							"0 turns the cache off.",
							&scipis_index_cache_size, 32 * 1024, 0, INT_MAX / 1024,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, assign_index_cache_size, NULL);
	scipis_jobs_init();
	MarkGUCPrefixReserved("scipis");
	scipis_files_scan_init();
	scipis_am_options_init();
}

/*
 * Cached per backend, keyed by the GUC's value: every search asks for it,
 * and creating it costs a mkdir per path component.
 */
char *
scipis_database_dir(void)
{
	static char *cached_base = NULL;
	static char *cached_dir = NULL;
	const char *base = scipis_data_directory ? scipis_data_directory : "";
	char	   *dir;

	if (cached_dir != NULL && strcmp(cached_base, base) == 0)
		return pstrdup(cached_dir);

	if (base[0] == '\0')
		dir = psprintf("%s/scipis/%u", DataDir, MyDatabaseId);
	else if (is_absolute_path(base))
		dir = psprintf("%s/%u", base, MyDatabaseId);
	else
		dir = psprintf("%s/%s/%u", DataDir, base, MyDatabaseId);
	if (pg_mkdir_p(dir, S_IRWXU) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create scipis directory \"%s\": %m", dir)));
	if (cached_dir)
	{
		pfree(cached_dir);
		pfree(cached_base);
	}
	cached_dir = MemoryContextStrdup(TopMemoryContext, dir);
	cached_base = MemoryContextStrdup(TopMemoryContext, base);
	return dir;
}

void
scipis_require_read_server_files(const char *what)
{
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s", what),
				 errdetail("Only roles with privileges of the \"pg_read_server_files\" role may read server files.")));
}

/* The directory holding one subdirectory per database: dir's parent. */
static char *
parent_dir(const char *dir)
{
	char	   *parent = pstrdup(dir);

	get_parent_directory(parent);
	return parent;
}

/* Removes the subdirectories of databases that no longer exist. */
static void
remove_dropped_databases(const char *base)
{
	DIR		   *d = AllocateDir(base);
	struct dirent *de;

	while ((de = ReadDir(d, base)) != NULL)
	{
		char	   *end;
		unsigned long oid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		errno = 0;
		oid = strtoul(de->d_name, &end, 10);
		if (*end != '\0' || errno != 0 || oid == 0 || oid > PG_UINT32_MAX ||
			(Oid) oid == MyDatabaseId)
			continue;
		if (SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum((Oid) oid)))
			continue;
		if (!rmtree(psprintf("%s/%s", base, de->d_name), true))
			ereport(WARNING,
					(errmsg("could not remove the scipis files of dropped database %lu", oid)));
	}
	FreeDir(d);
}

/*
 * Run once by the install script. DROP EXTENSION cannot reach the index
 * files (the library need not even be loaded), so they outlive it; a new
 * installation numbers its collections and block indexes from 1 again and
 * would take the old files for its own. Whatever is in this database's
 * scipis directory when the extension is created belongs to an earlier
 * installation. DROP DATABASE leaves its directory too: those of databases
 * that no longer exist go at the same time.
 */
PG_FUNCTION_INFO_V1(scipis_remove_leftovers);
Datum
scipis_remove_leftovers(PG_FUNCTION_ARGS)
{
	char	   *dir;

	if (!creating_extension)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("scipis_remove_leftovers() runs only inside CREATE EXTENSION scipis")));
	dir = scipis_database_dir();
	if (!rmtree(dir, false))
		ereport(ERROR,
				(errcode(ERRCODE_IO_ERROR),
				 errmsg("could not remove the files of an earlier scipis installation in \"%s\"", dir)));
	remove_dropped_databases(parent_dir(dir));
	PG_RETURN_VOID();
}
