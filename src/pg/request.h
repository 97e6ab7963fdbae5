/* Requests to a collection's index, shared by the SQL functions and the
 * custom scan of scipis_files (search_sql.c). */
#ifndef SCIPIS_REQUEST_H
#define SCIPIS_REQUEST_H

#include "collection.h"

typedef enum RequestKind
{
	REQ_SEARCH,
	REQ_LOOKUP,
	REQ_LIST,
	REQ_LOCATE,
	REQ_LIST_WHERE
} RequestKind;

typedef struct Request
{
	RequestKind kind;
	const char *bytes;			/* the query, the path or the pattern */
	size_t		len;
	int64		k;
	scipis_ranking ranking;
	scipis_match match;
	const scipis_file_filter *filter;	/* REQ_LIST_WHERE */
	scipis_scan_stats *stats;
} Request;

/* The named collection (the caller must may read it), or all it may. */
List	   *collections_to_search(text *name_arg);

/*
 * Runs req on the collection's index; false when it has no index yet and
 * missing_ok. A rebuild committed meanwhile is retried once on the new one.
 */
bool		run_request(const ScipisCollection *c, bool missing_ok, const Request *req,
						scipis_docs *docs);

/*
 * A scipis_files row: (collection, path, size, mtime, tokens, ctime, uid,
 * gid, mode, inode). An inode past 2^63 - 1 shows as bigint's two's
 * complement (as int64_t holds it): PostgreSQL has no unsigned 64-bit
 * type, and this keeps equal inodes equal.
 */
#define FILE_ROW_COLUMNS 10
void		file_row_values(const char *collection, const scipis_doc *d, Datum *values);

#endif
