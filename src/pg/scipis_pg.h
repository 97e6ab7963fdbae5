/* Declarations shared by the PostgreSQL side of scipis. */
#ifndef SCIPIS_PG_H
#define SCIPIS_PG_H

#include "postgres.h"
#include "scipis_engine.h"

/* GUC scipis.data_directory; empty means $PGDATA/scipis. */
extern char *scipis_data_directory;

/* Raises the engine's error as an ereport(ERROR) with a matching SQLSTATE. */
pg_attribute_noreturn() void scipis_raise(const scipis_error *err);

/* The directory that holds scipis files of this database, created if missing. */
char	   *scipis_database_dir(void);

/* Raises insufficient_privilege unless the user may read server files. */
void		scipis_require_read_server_files(const char *what);

/* The custom scan of scipis_files (files_scan.c), installed at load. */
void		scipis_files_scan_init(void);
void		scipis_am_options_init(void);

#endif
