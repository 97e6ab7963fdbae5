/* The collection registry and its helpers, on the PostgreSQL side. */
#ifndef SCIPIS_COLLECTION_H
#define SCIPIS_COLLECTION_H

#include "scipis_pg.h"

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"

typedef struct ScipisCollection
{
	int64		id;
	char	   *name;
	char	   *root;
	Jsonb	   *options;
	Oid			owner;
} ScipisCollection;

void		scipis_options_from_jsonb(Jsonb *jb, scipis_options *opts);
bool		scipis_option_true(Jsonb *options, const char *key);
bool		scipis_option_not_false(Jsonb *options, const char *key);

/* Registry access (registry.c). */
Oid			scipis_extension_schema(void);
ScipisCollection *scipis_collection_get(const char *name, bool missing_ok);
List	   *scipis_collection_all(void);
void		scipis_collection_insert(const char *name, const char *root, Jsonb *options);
void		scipis_collection_delete(int64 id);

/* Privileges: raise or answer whether the current user may read it. */
bool		scipis_may_read(const ScipisCollection *c);
void		scipis_require_read(const ScipisCollection *c);
void		scipis_require_owner(const ScipisCollection *c);

/* The collection's index directory. */
char	   *scipis_collection_dir(const ScipisCollection *c);

/* Opened indexes, cached per backend until their manifest changes. */
scipis_index *scipis_index_cached(const ScipisCollection *c, bool missing_ok);
void		scipis_index_forget(const ScipisCollection *c);

/* Text for a path; bytes invalid in the database encoding become \xNN. */
text	   *scipis_path_text(const char *path, uint32 len);
TimestampTz scipis_timestamp(int64 mtime_ns);

#endif
