/* Conditions on scipis_files that the engine can narrow its reading by
 * (files_quals.c), for the custom scan (files_scan.c). */
#ifndef SCIPIS_FILES_QUALS_H
#define SCIPIS_FILES_QUALS_H

#include "scipis_pg.h"

#include "nodes/primnodes.h"

/* scipis_files' columns that conditions are pushed down on. */
typedef enum FilesColumn
{
	FC_COLLECTION = 1,
	FC_PATH = 2,
	FC_SIZE = 3,
	FC_MTIME = 4,
	FC_CTIME = 6,
	FC_UID = 7,
	FC_GID = 8
} FilesColumn;

/* How: the btree strategies (1 <, 2 <=, 3 =, 4 >=, 5 >), then these. */
#define FH_PREFIX 6				/* starts_with(col, v), col ^@ v */
#define FH_LIKE 7				/* col LIKE v: v's literal prefix */
#define FH_FLOAT 8				/* added: col was cast to v's type (numeric,
								 * float8) */

typedef struct PushedCond
{
	int			column;
	int			how;
} PushedCond;

/* Whether clause is "column how value" with value computable at run time. */
bool		files_qual_classify(Expr *clause, Index rti, PushedCond *pc, Expr **value);

typedef struct FilesFilterBuild
{
	scipis_file_filter filter;
	const char *collection;		/* only this one, when set */
	bool		empty;			/* no row can match */
} FilesFilterBuild;

void		files_filter_start(FilesFilterBuild *fb);
/* Narrows fb by one condition, its value of type valtype evaluated. */
void		files_filter_add(FilesFilterBuild *fb, const PushedCond *pc, Oid valtype, Datum v,
							 bool isnull);

const char *files_column_name(int column);
const char *files_how_name(int how);

#endif
