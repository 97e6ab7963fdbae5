/*
 * INSERT/UPDATE/COPY: each row's value is tokenized into an entry and
 * appended to the pending list, which every scan reads too, so a committed
 * row is searchable by the next statement. Past pending_limit the inserter
 * merges the list into a segment, unless another merge runs already.
 */
#include "am.h"

#include "scipis_pg.h"

bool
scipis_am_insert(Relation index, Datum *values, bool *isnull, ItemPointer tid, Relation heap,
				 IndexUniqueCheck check, bool indexUnchanged, IndexInfo *info)
{
	ScipisMeta	meta;
	const char *data = NULL;
	size_t		len = 0;
	scipis_error err;
	scipis_am_blob *entry;
	const unsigned char *bytes;
	size_t		nbytes;
	uint64		keys[SCIPIS_MAX_VALS];
	unsigned char nulls[SCIPIS_MAX_VALS];
	scipis_am_vals vals;

	scipis_am_read_meta(index, &meta);
	scipis_am_row_vals(index, values, isnull, keys, nulls, &vals);
	if (!isnull[0])
	{
		text	   *t = DatumGetTextPP(values[0]);

		data = VARDATA_ANY(t);
		len = VARSIZE_ANY_EXHDR(t);
	}
	entry = scipis_am_entry_encode(scipis_am_tid_key(tid), data, len, isnull[0], &vals, meta.delimiter,
								   &err);
	if (!entry)
		scipis_am_fail(NULL, &err, index);
	bytes = scipis_am_blob_data(entry, &nbytes);
	PG_TRY();
	{
		scipis_am_append(index, bytes, nbytes);
	}
	PG_FINALLY();
	{
		scipis_am_blob_free(entry);
	}
	PG_END_TRY();
	if (meta.pending_bytes + nbytes > scipis_am_pending_limit(index))
		scipis_am_flush_pending(index, false);
	return false;
}
