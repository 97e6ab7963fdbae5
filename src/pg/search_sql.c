/* scipis_search, scipis_lookup, the file list and collection statistics. */
#include "collection.h"
#include "request.h"

#include <sys/stat.h>

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(scipis_search_sql);
PG_FUNCTION_INFO_V1(scipis_lookup_sql);
PG_FUNCTION_INFO_V1(scipis_files_sql);
PG_FUNCTION_INFO_V1(scipis_locate_sql);
PG_FUNCTION_INFO_V1(scipis_collection_stats);

typedef struct Row
{
	const char *collection;
	text	   *path;
	double		score;
	int64		size;
	int64		mtime_ns;
	int64		tokens;
} Row;

/* Best first: score descending, path ascending (bytewise), then collection. */
static int
row_cmp(const void *a, const void *b)
{
	const Row  *x = a;
	const Row  *y = b;
	int			c;
	int			lx = VARSIZE_ANY_EXHDR(x->path);
	int			ly = VARSIZE_ANY_EXHDR(y->path);

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	c = memcmp(VARDATA_ANY(x->path), VARDATA_ANY(y->path), Min(lx, ly));
	if (c != 0)
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->collection, y->collection);
}

/* Index of arg among the two accepted words, or an error naming them. */
static int
choose(const char *what, text *arg, const char *first, const char *second)
{
	char	   *word = text_to_cstring(arg);

	if (strcmp(word, first) == 0)
		return 0;
	if (strcmp(word, second) == 0)
		return 1;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown %s \"%s\"", what, word),
			 errhint("Use \"%s\" or \"%s\".", first, second)));
	return -1;
}

List *
collections_to_search(text *name_arg)
{
	List	   *result = NIL;
	ListCell   *lc;

	if (name_arg != NULL)
	{
		ScipisCollection *c = scipis_collection_get(text_to_cstring(name_arg), false);

		scipis_require_read(c);
		return list_make1(c);
	}
	foreach(lc, scipis_collection_all())
	{
		ScipisCollection *c = lfirst(lc);

		if (scipis_may_read(c))
			result = lappend(result, c);
	}
	return result;
}

static void
append_docs(Row **rows, int *n, int *cap, const char *collection, scipis_docs *docs)
{
	for (size_t i = 0; i < docs->n; i++)
	{
		Row		   *r;

		if (*n == *cap)
		{
			*cap = *cap ? *cap * 2 : 64;
			*rows = *rows ? repalloc_huge(*rows, sizeof(Row) * *cap) : palloc(sizeof(Row) * *cap);
		}
		r = &(*rows)[(*n)++];
		r->collection = collection;
		r->path = scipis_path_text(docs->docs[i].path, docs->docs[i].path_len);
		r->score = docs->docs[i].score;
		r->size = (int64) docs->docs[i].size;
		r->mtime_ns = docs->docs[i].mtime_ns;
		r->tokens = (int64) docs->docs[i].tokens;
	}
}

/*
 * Runs req on the collection's index; false when it has no index yet and
 * missing_ok. A rebuild that commits between our manifest check and our
 * reads removes files we still expected: then the request runs once more,
 * on the new index, so a search sees the old or the new index, never an
 * error for the switch.
 */
bool
run_request(const ScipisCollection *c, bool missing_ok, const Request *req, scipis_docs *docs)
{
	for (int attempt = 0;; attempt++)
	{
		scipis_index *ix = scipis_index_cached(c, missing_ok);
		scipis_error err;
		int			rc = 0;
		bool		replaced;

		if (ix == NULL)
			return false;
		switch (req->kind)
		{
			case REQ_SEARCH:
				rc = scipis_search(ix, req->bytes, req->len, req->k, req->ranking,
								   req->match, docs, &err);
				break;
			case REQ_LOOKUP:
				rc = scipis_lookup(ix, req->bytes, req->len, docs, &err);
				break;
			case REQ_LIST:
				rc = scipis_list_files(ix, docs, &err);
				break;
			case REQ_LOCATE:
				rc = scipis_locate(ix, req->bytes, req->len, docs, &err);
				break;
			case REQ_LIST_WHERE:
				rc = scipis_list_files_where(ix, req->filter, docs, req->stats, &err);
				break;
		}
		if (rc == 0)
			return true;
		replaced = !scipis_index_is_current(ix);
		/* A broken cached index must be read afresh next time. */
		scipis_index_forget(c);
		if (attempt > 0 || !replaced || err.code == SCIPIS_E_INVALID)
			scipis_raise(&err);
	}
}

Datum
scipis_search_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *query;
	int64		k = 10;
	scipis_ranking ranking = SCIPIS_TFIDF;
	scipis_match match = SCIPIS_MATCH_ANY;
	List	   *colls;
	ListCell   *lc;
	Row		   *rows = NULL;
	int			n = 0,
				cap = 0;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("search query must not be null")));
	query = PG_GETARG_TEXT_PP(0);
	if (!PG_ARGISNULL(2))
	{
		k = PG_GETARG_INT32(2);
		if (k <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("k must be positive, or NULL for every match")));
	}
	else
		k = -1;
	if (!PG_ARGISNULL(3))
		ranking = choose("ranking", PG_GETARG_TEXT_PP(3), "tfidf", "bm25");
	if (!PG_ARGISNULL(4))
		match = choose("match mode", PG_GETARG_TEXT_PP(4), "any", "all");
	colls = collections_to_search(PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1));

	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, colls)
	{
		ScipisCollection *c = lfirst(lc);
		Request		req = {REQ_SEARCH, VARDATA_ANY(query), VARSIZE_ANY_EXHDR(query), k, ranking, match};
		scipis_docs docs;

		CHECK_FOR_INTERRUPTS();
		if (!run_request(c, PG_ARGISNULL(1), &req, &docs))
			continue;
		append_docs(&rows, &n, &cap, c->name, &docs);
		scipis_docs_free(&docs);
	}
	if (colls == NIL)
	{
		/* The query is still checked when there is nothing to search. */
		unsigned char delim[256];

		scipis_tokenizer_named("word", delim);
		if (!scipis_query_has_terms(VARDATA_ANY(query), VARSIZE_ANY_EXHDR(query), delim))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("search query has no terms (no word characters)")));
	}
	if (n > 1)
		qsort(rows, n, sizeof(Row), row_cmp);
	if (k >= 0 && n > k)
		n = (int) k;
	for (int i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5] = {0};

		values[0] = CStringGetTextDatum(rows[i].collection);
		values[1] = PointerGetDatum(rows[i].path);
		values[2] = Float8GetDatum(rows[i].score);
		values[3] = Int64GetDatum(rows[i].size);
		values[4] = TimestampTzGetDatum(scipis_timestamp(rows[i].mtime_ns));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

void
file_row_values(const char *collection, const scipis_doc *d, Datum *values)
{
	values[0] = CStringGetTextDatum(collection);
	values[1] = PointerGetDatum(scipis_path_text(d->path, d->path_len));
	values[2] = Int64GetDatum((int64) d->size);
	values[3] = TimestampTzGetDatum(scipis_timestamp(d->mtime_ns));
	values[4] = Int64GetDatum((int64) d->tokens);
	values[5] = TimestampTzGetDatum(scipis_timestamp(d->ctime_ns));
	values[6] = Int64GetDatum((int64) d->uid);
	values[7] = Int64GetDatum((int64) d->gid);
	values[8] = Int32GetDatum((int32) d->mode);
	values[9] = Int64GetDatum((int64) d->inode);
}

static void
put_file_rows(ReturnSetInfo *rsinfo, const char *collection, scipis_docs *docs)
{
	for (size_t i = 0; i < docs->n; i++)
	{
		Datum		values[FILE_ROW_COLUMNS];
		bool		nulls[FILE_ROW_COLUMNS] = {0};

		file_row_values(collection, &docs->docs[i], values);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * File rows for a request whose argument 0 is a path or pattern (text or
 * bytea: they share a varlena layout, so its bytes are taken as they are),
 * from the collections of argument 1 when the function has one and it is
 * given, else from every collection the caller may read.
 */
static Datum
file_rows_for(FunctionCallInfo fcinfo, RequestKind kind, const char *what)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		named = PG_NARGS() > 1 && !PG_ARGISNULL(1);
	bytea	   *arg;
	List	   *colls;
	ListCell   *lc;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", what)));
	arg = PG_GETARG_BYTEA_PP(0);
	colls = collections_to_search(named ? PG_GETARG_TEXT_PP(1) : NULL);
	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, colls)
	{
		ScipisCollection *c = lfirst(lc);
		Request		req = {kind, VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg)};
		scipis_docs docs;

		CHECK_FOR_INTERRUPTS();
		if (!run_request(c, !named, &req, &docs))
			continue;
		put_file_rows(rsinfo, c->name, &docs);
		scipis_docs_free(&docs);
	}
	return (Datum) 0;
}

Datum
scipis_lookup_sql(PG_FUNCTION_ARGS)
{
	return file_rows_for(fcinfo, REQ_LOOKUP, "path");
}

/*
 * scipis_locate(pattern, collection DEFAULT NULL): the rows of scipis_files
 * whose path matches the pattern, in each collection by path.
 */
Datum
scipis_locate_sql(PG_FUNCTION_ARGS)
{
	return file_rows_for(fcinfo, REQ_LOCATE, "pattern");
}

Datum
scipis_files_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, collections_to_search(NULL))
	{
		ScipisCollection *c = lfirst(lc);
		Request		req = {REQ_LIST};
		scipis_docs docs;

		CHECK_FOR_INTERRUPTS();
		if (!run_request(c, true, &req, &docs))
			continue;
		put_file_rows(rsinfo, c->name, &docs);
		scipis_docs_free(&docs);
	}
	return (Datum) 0;
}

/*
 * (files, bytes, index_bytes, last_indexed, segments, deleted_docs,
 * fresh_as_of) from the manifest and FRESH, or NULLs.
 */
Datum
scipis_collection_stats(PG_FUNCTION_ARGS)
{
	ScipisCollection *c = scipis_collection_get(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	TupleDesc	desc;
	Datum		values[7];
	bool		nulls[7] = {true, true, true, true, true, true, true};
	scipis_index *ix;
	int64		fresh;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "scipis_collection_stats must return a row");
	desc = BlessTupleDesc(desc);
	ix = scipis_index_cached(c, true);
	if (ix != NULL)
	{
		scipis_index_info info;
		scipis_error err;
		struct stat st;
		char	   *manifest = psprintf("%s/MANIFEST", scipis_collection_dir(c));

		if (scipis_index_info_get(ix, &info, &err) != 0)
			scipis_raise(&err);
		values[0] = Int64GetDatum((int64) info.files);
		values[1] = Int64GetDatum((int64) info.bytes);
		values[2] = Int64GetDatum((int64) info.index_bytes);
		values[4] = Int64GetDatum((int64) info.segments);
		values[5] = Int64GetDatum((int64) info.deleted_docs);
		nulls[0] = nulls[1] = nulls[2] = nulls[4] = nulls[5] = false;
		if (stat(manifest, &st) == 0)
		{
			values[3] = TimestampTzGetDatum(time_t_to_timestamptz(st.st_mtime));
			nulls[3] = false;
		}
		if (scipis_fresh_as_of(scipis_collection_dir(c), &fresh))
		{
			values[6] = TimestampTzGetDatum(scipis_timestamp(fresh));
			nulls[6] = false;
		}
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
