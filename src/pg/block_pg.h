/* Shared by the block_*.c files: the SQL side of block min/max indexes. */
#ifndef SCIPIS_BLOCK_PG_H
#define SCIPIS_BLOCK_PG_H

#include "scipis_pg.h"

#include "fmgr.h"
#include "utils/jsonb.h"

/* The spec parsed from the variables and options jsonb, palloc'd. */
typedef struct BlockSpecPg
{
	scipis_block_spec spec;
	scipis_block_var *vars;
	int64		shape[SCIPIS_BLOCK_MAX_DIMS];
	int64		block_shape[SCIPIS_BLOCK_MAX_DIMS];
} BlockSpecPg;

void		block_parse_spec(Jsonb *variables, Jsonb *options, BlockSpecPg *out);

/* A registry row. */
typedef struct BlockEntry
{
	char	   *name;
	char	   *index_file;		/* relative to scipis_database_dir() */
	char	   *owner;
	char	   *variables;		/* jsonb text */
	char	   *options;
	Datum		built_at;
} BlockEntry;

/* The schema-qualified registry table, from the calling function's schema. */
char	   *block_registry_table(FunctionCallInfo fcinfo);
char	   *block_file_sequence(FunctionCallInfo fcinfo);
/* Fetches the row of name or raises undefined_object. */
void		block_lookup(FunctionCallInfo fcinfo, const char *name, BlockEntry *e);
/* Raises unless the current user may read through the index. */
void		block_check_read(const BlockEntry *e);
/* Raises unless the current user owns the index (or is a superuser). */
void		block_check_owner(const BlockEntry *e);
char	   *block_full_path(const char *index_file);

/* Files made in this transaction are removed if it aborts; files dropped are removed when it commits. */
void		block_file_created(const char *path);
void		block_file_dropped(const char *path);

/* Raises err, naming the index. */
pg_attribute_noreturn() void block_raise(const char *name, const scipis_error *err);

/* block_build.c: a new file name (relative), a name's row, and recording a built file. */
char	   *block_next_file(FunctionCallInfo fcinfo);
bool		block_index_exists(FunctionCallInfo fcinfo, const char *name);
void		block_store(FunctionCallInfo fcinfo, bool insert, const char *name, Jsonb *variables,
						Jsonb *options, const char *file, const scipis_block_info *info);

#endif
