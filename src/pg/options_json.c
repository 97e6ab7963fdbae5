/* Collection options: a jsonb object turned into scipis_options. */
#include "scipis_pg.h"

#include <ctype.h>

#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "collection.h"

static const char *const option_names[] = {
	"include", "exclude", "follow_symlinks", "tokenizer", "delimiters",
	"reader_threads", "indexer_threads", "writer_threads", "block_size",
	"path_index_size", "tfidf_index_size", "index_depth", "split_factor",
	"direct_io", "direct_writes", "refresh_interval", "watch", "skip_unchanged_dirs", "merge_after_build", NULL
};

static void
bad_value(const char *key, const char *expected)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("option \"%s\" must be %s", key, expected)));
}

static int64
int_value(const char *key, JsonbValue *v, bool allow_units)
{
	if (v->type == jbvNumeric)
	{
		Numeric		n = v->val.numeric;
		char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(n)));
		char	   *end;
		long long	r;

		errno = 0;
		r = strtoll(s, &end, 10);
		if (*end != '\0' || errno != 0)
			bad_value(key, "an integer");
		return r;
	}
	if (allow_units && v->type == jbvString)
	{
		char	   *s = pnstrdup(v->val.string.val, v->val.string.len);
		char	   *end;
		long long	r;
		int64		mult = 1;

		errno = 0;
		r = strtoll(s, &end, 10);
		if (end == s || errno != 0)
			bad_value(key, "an integer number of bytes or a size such as \"64MB\"");
		while (isspace((unsigned char) *end))
			end++;
		if (pg_strcasecmp(end, "kb") == 0)
			mult = 1024;
		else if (pg_strcasecmp(end, "mb") == 0)
			mult = 1024 * 1024;
		else if (pg_strcasecmp(end, "gb") == 0)
			mult = INT64CONST(1024) * 1024 * 1024;
		else if (*end != '\0' && pg_strcasecmp(end, "b") != 0)
			bad_value(key, "an integer number of bytes or a size such as \"64MB\"");
		if (r < 0 || r > PG_INT64_MAX / mult)
			bad_value(key, "a positive size");
		return r * mult;
	}
	bad_value(key, allow_units ? "an integer number of bytes or a size such as \"64MB\"" : "an integer");
	return 0;
}

static int
small_int(const char *key, JsonbValue *v)
{
	int64		r = int_value(key, v, false);

	if (r < PG_INT32_MIN || r > PG_INT32_MAX)
		bad_value(key, "an integer in range");
	return (int) r;
}

static uint64
size_value(const char *key, JsonbValue *v)
{
	int64		r = int_value(key, v, true);

	if (r < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" must not be negative", key)));
	return (uint64) r;
}

static bool
bool_value(const char *key, JsonbValue *v)
{
	if (v->type != jbvBool)
		bad_value(key, "true or false");
	return v->val.boolean;
}

static char *
string_value(const char *key, JsonbValue *v)
{
	if (v->type != jbvString)
		bad_value(key, "a string");
	if (memchr(v->val.string.val, '\0', v->val.string.len) != NULL)
		bad_value(key, "a string without NUL characters");
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* A glob list: one string or an array of strings. */
static void
glob_list(const char *key, Jsonb *jb, JsonbValue *v, const char *const **out, int *n)
{
	const char **list;
	int			count = 0;

	if (v->type == jbvString)
	{
		list = palloc(sizeof(char *));
		list[count++] = string_value(key, v);
	}
	else if (v->type == jbvBinary)
	{
		JsonbIterator *it = JsonbIteratorInit(v->val.binary.data);
		JsonbValue	elem;
		JsonbIteratorToken tok;
		int			depth = 0;

		list = palloc(sizeof(char *) * (JsonContainerSize(v->val.binary.data) + 1));
		while ((tok = JsonbIteratorNext(&it, &elem, true)) != WJB_DONE)
		{
			if (tok == WJB_BEGIN_ARRAY)
			{
				if (depth++ > 0 || !JsonContainerIsArray(v->val.binary.data))
					bad_value(key, "a string or an array of strings");
				continue;
			}
			if (tok == WJB_BEGIN_OBJECT)
				bad_value(key, "a string or an array of strings");
			if (tok == WJB_END_ARRAY)
				continue;
			if (tok != WJB_ELEM)
				bad_value(key, "a string or an array of strings");
			list[count++] = string_value(key, &elem);
		}
	}
	else
	{
		bad_value(key, "a string or an array of strings");
		return;
	}
	for (int i = 0; i < count; i++)
		if (list[i][0] == '\0')
			bad_value(key, "a list of non-empty globs");
	*out = list;
	*n = count;
}

/*
 * The launcher queues an index job at this interval (launcher.c); not an
 * option of the engine. At least a second, so that a typo cannot make the
 * scheduler queue a job on every pass.
 */
static void
refresh_interval(const char *key, JsonbValue *v)
{
	char	   *s = string_value(key, v);
	Interval   *iv;
	double		secs;

	iv = DatumGetIntervalP(DirectFunctionCall3(interval_in, CStringGetDatum(s),
											   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
	secs = iv->time / 1e6 + iv->day * 86400.0 + iv->month * 30.0 * 86400.0;
	if (secs < 1)
		bad_value(key, "an interval of at least 1 second, such as \"1 hour\"");
}

void
scipis_options_from_jsonb(Jsonb *jb, scipis_options *opts)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;
	bool		have_delims = false;
	bool		have_tokenizer = false;
	scipis_error err;

	scipis_options_init(opts);
	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("collection options must be a JSON object")));

	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			bool		known = false;

			key = pnstrdup(v.val.string.val, v.val.string.len);
			for (int i = 0; option_names[i]; i++)
				known |= strcmp(key, option_names[i]) == 0;
			if (!known)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown collection option \"%s\"", key),
						 errhint("Valid options are include, exclude, follow_symlinks, tokenizer, delimiters, reader_threads, indexer_threads, writer_threads, block_size, path_index_size, tfidf_index_size, index_depth, split_factor, direct_io, direct_writes, refresh_interval, watch, skip_unchanged_dirs and merge_after_build.")));
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		if (v.type == jbvNull)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" must not be null", key)));
		if (strcmp(key, "include") == 0)
			glob_list(key, jb, &v, &opts->include, &opts->n_include);
		else if (strcmp(key, "exclude") == 0)
			glob_list(key, jb, &v, &opts->exclude, &opts->n_exclude);
		else if (strcmp(key, "follow_symlinks") == 0)
			opts->follow_symlinks = bool_value(key, &v);
		else if (strcmp(key, "direct_io") == 0)
			opts->direct_io = bool_value(key, &v);
		else if (strcmp(key, "direct_writes") == 0)
			opts->direct_writes = bool_value(key, &v);
		else if (strcmp(key, "refresh_interval") == 0)
			refresh_interval(key, &v);
		else if (strcmp(key, "watch") == 0 || strcmp(key, "skip_unchanged_dirs") == 0 ||
				 strcmp(key, "merge_after_build") == 0)
			(void) bool_value(key, &v); /* the watcher's, the jobs' */
		else if (strcmp(key, "tokenizer") == 0)
		{
			char	   *name = string_value(key, &v);

			if (scipis_tokenizer_named(name, opts->delimiter) != 0)
				bad_value(key, "\"word\" or \"whitespace\"");
			have_tokenizer = true;
		}
		else if (strcmp(key, "delimiters") == 0)
		{
			char	   *d = string_value(key, &v);

			if (d[0] == '\0')
				bad_value(key, "a non-empty string of delimiter characters");
			memset(opts->delimiter, 0, 256);
			for (const unsigned char *p = (const unsigned char *) d; *p; p++)
				opts->delimiter[*p] = 1;
			have_delims = true;
		}
		else if (strcmp(key, "reader_threads") == 0)
			opts->reader_threads = small_int(key, &v);
		else if (strcmp(key, "indexer_threads") == 0)
			opts->indexer_threads = small_int(key, &v);
		else if (strcmp(key, "writer_threads") == 0)
			opts->writer_threads = small_int(key, &v);
		else if (strcmp(key, "index_depth") == 0)
			opts->index_depth = small_int(key, &v);
		else if (strcmp(key, "split_factor") == 0)
			opts->split_factor = small_int(key, &v);
		else if (strcmp(key, "block_size") == 0)
			opts->block_size = size_value(key, &v);
		else if (strcmp(key, "path_index_size") == 0)
			opts->path_index_size = size_value(key, &v);
		else if (strcmp(key, "tfidf_index_size") == 0)
			opts->tfidf_index_size = size_value(key, &v);
	}
	if (have_tokenizer && have_delims)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options \"tokenizer\" and \"delimiters\" cannot be combined")));
	if (scipis_options_check(opts, &err) != 0)
		scipis_raise(&err);
}

/* A boolean option of options (checked already), or dflt when unset. */
static bool
option_bool(Jsonb *options, const char *key, bool dflt)
{
	JsonbValue	k;
	JsonbValue *v;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	v = findJsonbValueFromContainer(&options->root, JB_FOBJECT, &k);
	return v != NULL && v->type == jbvBool ? v->val.boolean : dflt;
}

/* Whether options (checked already) set key to true. */
bool
scipis_option_true(Jsonb *options, const char *key)
{
	return option_bool(options, key, false);
}

/* Whether a boolean option is not set to false (its default: true). */
bool
scipis_option_not_false(Jsonb *options, const char *key)
{
	return option_bool(options, key, true);
}
