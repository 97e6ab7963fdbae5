/* WITH (...) options of a scipis index. */
#include "am.h"

#include "miscadmin.h"

#include "scipis_pg.h"

static relopt_kind scipis_relopt_kind;
static relopt_parse_elt scipis_relopt_tab[5];

static void
validate_tokenizer(const char *value)
{
	unsigned char d[256];

	if (value && scipis_tokenizer_named(value, d) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for scipis option \"tokenizer\": \"%s\"", value),
				 errdetail("Valid values are \"word\" and \"whitespace\".")));
}

static void
validate_delimiters(const char *value)
{
	if (value && value[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for scipis option \"delimiters\": an empty string"),
				 errdetail("Give a non-empty string of delimiter characters.")));
}

void
scipis_am_options_init(void)
{
	scipis_relopt_kind = add_reloption_kind();
	add_string_reloption(scipis_relopt_kind, "tokenizer",
						 "Tokenizer: word or whitespace", NULL, validate_tokenizer,
						 AccessExclusiveLock);
	add_string_reloption(scipis_relopt_kind, "delimiters",
						 "Delimiter characters, instead of a tokenizer", NULL,
						 validate_delimiters, AccessExclusiveLock);
	add_int_reloption(scipis_relopt_kind, "indexer_threads",
					  "Indexer threads of CREATE INDEX (0: one per core)", 0, 0, 256,
					  ShareUpdateExclusiveLock);
	add_int_reloption(scipis_relopt_kind, "tfidf_index_size",
					  "Memory of CREATE INDEX's term tables over all threads, in MB (0: maintenance_work_mem)",
					  0, 0, 1024 * 1024, ShareUpdateExclusiveLock);
	add_int_reloption(scipis_relopt_kind, "pending_limit",
					  "Pending-list size, in kB, past which inserts merge it into a segment",
					  1024, 64, 1024 * 1024, ShareUpdateExclusiveLock);
	scipis_relopt_tab[0] = (relopt_parse_elt) {"tokenizer", RELOPT_TYPE_STRING, offsetof(ScipisAmOptions, tokenizer)};
	scipis_relopt_tab[1] = (relopt_parse_elt) {"delimiters", RELOPT_TYPE_STRING, offsetof(ScipisAmOptions, delimiters)};
	scipis_relopt_tab[2] = (relopt_parse_elt) {"indexer_threads", RELOPT_TYPE_INT, offsetof(ScipisAmOptions, indexer_threads)};
	scipis_relopt_tab[3] = (relopt_parse_elt) {"tfidf_index_size", RELOPT_TYPE_INT, offsetof(ScipisAmOptions, tfidf_index_size)};
	scipis_relopt_tab[4] = (relopt_parse_elt) {"pending_limit", RELOPT_TYPE_INT, offsetof(ScipisAmOptions, pending_limit)};
}

bytea *
scipis_am_options(Datum reloptions, bool validate)
{
	ScipisAmOptions *opts = (ScipisAmOptions *)
		build_reloptions(reloptions, validate, scipis_relopt_kind, sizeof(ScipisAmOptions),
						 scipis_relopt_tab, lengthof(scipis_relopt_tab));

	if (validate && opts && opts->tokenizer && opts->delimiters)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("scipis options \"tokenizer\" and \"delimiters\" cannot be combined")));
	return (bytea *) opts;
}

static ScipisAmOptions *
options_of(Relation index)
{
	return (ScipisAmOptions *) index->rd_options;
}

/* The delimiter table the options name (for a new build). */
void
scipis_am_delimiters(Relation index, unsigned char delimiter[256])
{
	ScipisAmOptions *o = options_of(index);

	scipis_tokenizer_named("word", delimiter);
	if (o && o->tokenizer)
		scipis_tokenizer_named((char *) o + o->tokenizer, delimiter);
	else if (o && o->delimiters)
	{
		const unsigned char *p = (const unsigned char *) o + o->delimiters;

		memset(delimiter, 0, 256);
		for (; *p; p++)
			delimiter[*p] = 1;
	}
}

int
scipis_am_threads(Relation index)
{
	ScipisAmOptions *o = options_of(index);

	return o && o->indexer_threads > 0 ? o->indexer_threads : 0;
}

uint64
scipis_am_memory(Relation index)
{
	ScipisAmOptions *o = options_of(index);

	if (o && o->tfidf_index_size > 0)
		return (uint64) o->tfidf_index_size << 20;
	return (uint64) maintenance_work_mem << 10;
}

uint64
scipis_am_pending_limit(Relation index)
{
	ScipisAmOptions *o = options_of(index);

	return (uint64) (o ? o->pending_limit : 1024) << 10;
}
