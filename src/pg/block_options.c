/* Parses the variables and options jsonb of a block index; every bad shape is a clear error. */
#include "block_pg.h"

#include <limits.h>

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

static char *
key_text(const JsonbValue *k)
{
	return pnstrdup(k->val.string.val, k->val.string.len);
}

static bool
key_is(const JsonbValue *k, const char *s)
{
	return k->val.string.len == (int) strlen(s) &&
		memcmp(k->val.string.val, s, k->val.string.len) == 0;
}

static const char *
json_kind(const JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "a string";
		case jbvNumeric:
			return "a number";
		case jbvBool:
			return "a boolean";
		case jbvBinary:
			return JsonContainerIsArray(v->val.binary.data) ? "an array" : "an object";
		default:
			return "a JSON value";
	}
}

/* A JSON integer: no fraction, fits int64. */
static int64
json_int(const JsonbValue *v, const char *what)
{
	char	   *s;
	char	   *end;
	long long	r;

	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be an integer, not %s", what, json_kind(v))));
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	errno = 0;
	r = strtoll(s, &end, 10);
	if (*end != '\0' || errno == ERANGE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be an integer, not %s", what, s)));
	return (int64) r;
}

static char *
json_string(const JsonbValue *v, const char *what)
{
	if (v->type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a string, not %s", what, json_kind(v))));
	if (memchr(v->val.string.val, '\0', v->val.string.len))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not contain NUL characters", what)));
	return pnstrdup(v->val.string.val, v->val.string.len);
}

static int
json_dims(const JsonbValue *v, const char *what, int64 *out)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken t;
	int			n = 0;

	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" must be an array of positive integers, not %s",
						what, json_kind(v))));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((t = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		char		label[64];

		if (t != WJB_ELEM)
			continue;
		if (n >= SCIPIS_BLOCK_MAX_DIMS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" has more than %d dimensions",
							what, SCIPIS_BLOCK_MAX_DIMS)));
		snprintf(label, sizeof label, "%s[%d]", what, n);
		out[n] = json_int(&e, label);
		if (out[n] <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must be positive, not " INT64_FORMAT, label, out[n])));
		n++;
	}
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" must have at least one dimension", what)));
	return n;
}

static void
parse_variable(const char *name, const JsonbValue *v, scipis_block_var *out)
{
	JsonbIterator *it;
	JsonbValue	k,
				e;
	JsonbIteratorToken t;
	char		what[320];

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("variable \"%s\" must be an object like {\"path\": \"/data/x.f64\", \"dtype\": \"float64\"}, not %s",
						name, json_kind(v))));
	out->name = name;
	out->path = NULL;
	out->dtype = NULL;
	out->header_bytes = 0;
	it = JsonbIteratorInit(v->val.binary.data);
	while ((t = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		if (t != WJB_KEY)
			continue;
		t = JsonbIteratorNext(&it, &e, true);
		if (key_is(&k, "path"))
		{
			snprintf(what, sizeof what, "variable \"%s\": \"path\"", name);
			out->path = json_string(&e, what);
		}
		else if (key_is(&k, "dtype"))
		{
			snprintf(what, sizeof what, "variable \"%s\": \"dtype\"", name);
			out->dtype = json_string(&e, what);
		}
		else if (key_is(&k, "header_bytes"))
		{
			snprintf(what, sizeof what, "variable \"%s\": \"header_bytes\"", name);
			out->header_bytes = json_int(&e, what);
			if (out->header_bytes < 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s must not be negative", what)));
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("variable \"%s\": unknown key \"%s\"", name, key_text(&k)),
					 errhint("A variable has \"path\", \"dtype\" and optionally \"header_bytes\".")));
	}
	if (!out->path)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("variable \"%s\" has no \"path\"", name)));
	if (!out->dtype)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("variable \"%s\" has no \"dtype\"", name)));
}

void
block_parse_spec(Jsonb *variables, Jsonb *options, BlockSpecPg *out)
{
	JsonbIterator *it;
	JsonbValue	k,
				v;
	JsonbIteratorToken t;
	int			cap = 8;

	memset(out, 0, sizeof *out);
	if (!variables || !JB_ROOT_IS_OBJECT(variables) || JB_ROOT_IS_SCALAR(variables))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("variables must be a JSON object mapping names to {\"path\", \"dtype\"}")));
	out->vars = palloc0(sizeof(scipis_block_var) * cap);
	it = JsonbIteratorInit(&variables->root);
	while ((t = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *name;

		if (t != WJB_KEY)
			continue;
		name = key_text(&k);
		t = JsonbIteratorNext(&it, &v, true);
		if (out->spec.n_vars == cap)
		{
			cap *= 2;
			out->vars = repalloc(out->vars, sizeof(scipis_block_var) * cap);
		}
		if (name[0] == '\0' || strlen(name) != (size_t) k.val.string.len)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("variable names must be non-empty and contain no NUL character")));
		parse_variable(name, &v, &out->vars[out->spec.n_vars++]);
	}
	if (out->spec.n_vars == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("variables must name at least one variable")));
	out->spec.vars = out->vars;

	if (!options)
		return;
	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be a JSON object")));
	it = JsonbIteratorInit(&options->root);
	while ((t = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		if (t != WJB_KEY)
			continue;
		t = JsonbIteratorNext(&it, &v, true);
		if (key_is(&k, "shape"))
		{
			out->spec.n_shape = json_dims(&v, "shape", out->shape);
			out->spec.shape = out->shape;
		}
		else if (key_is(&k, "block_shape"))
		{
			out->spec.n_block_shape = json_dims(&v, "block_shape", out->block_shape);
			out->spec.block_shape = out->block_shape;
		}
		else if (key_is(&k, "partition_bytes"))
		{
			out->spec.partition_bytes = json_int(&v, "option \"partition_bytes\"");
			if (out->spec.partition_bytes <= 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("option \"partition_bytes\" must be positive, not " INT64_FORMAT,
								(int64) out->spec.partition_bytes)));
		}
		else if (key_is(&k, "threads"))
		{
			int64		n = json_int(&v, "option \"threads\"");

			if (n < 1 || n > 256)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("option \"threads\" must be between 1 and 256, not " INT64_FORMAT, n)));
			out->spec.threads = (int) n;
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown block index option \"%s\"", key_text(&k)),
					 errhint("Options are shape, block_shape, partition_bytes and threads.")));
	}
}
