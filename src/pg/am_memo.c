/*
 * The score of the row an ordered scan has just returned, for the operator
 * the executor then evaluates on that row (`SELECT col <@> q ... ORDER BY
 * col <@> q`). Without it a long value (TOASTed: log files, documents) is
 * fetched, decompressed and tokenized again for every row returned, which
 * costs milliseconds a row where the scan spent microseconds.
 *
 * The memo only answers for a value still in its TOAST pointer whose row is
 * the one the scan returned last: the operator fetches that row version and
 * compares its column's TOAST pointer with its argument's. A TOAST value
 * never changes, so an equal pointer is the same text, and under the same
 * statement's statistics the same score.
 */
#include "am.h"

#include "access/detoast.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "scipis_pg.h"

#define MEMO_SLOTS 4

typedef struct Memo
{
	bool		used;
	Oid			index;
	Oid			heap;
	AttrNumber	attno;
	LocalTransactionId lxid;
	TimestampTz stmt;
	ScipisQuery *q;				/* in TopMemoryContext */
	ItemPointerData tid;		/* the row returned last */
	bool		matches;
	double		score;
} Memo;

static Memo memo[MEMO_SLOTS];
static int	memo_next;

static bool
same_query(const ScipisQuery *a, const ScipisQuery *b)
{
	return VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0;
}

static Memo *
find(Oid index, const ScipisQuery *q)
{
	LocalTransactionId lxid = MyProc->lxid;
	TimestampTz stmt = GetCurrentStatementStartTimestamp();
	int			i;

	for (i = 0; i < MEMO_SLOTS; i++)
	{
		Memo	   *m = &memo[i];

		if (m->used && m->index == index && m->lxid == lxid && m->stmt == stmt &&
			same_query(m->q, q))
			return m;
	}
	return NULL;
}

void
scipis_am_memo_note(Relation index, const ScipisQuery *q, ItemPointer tid, bool matches,
					double score)
{
	AttrNumber	attno = index->rd_index->indkey.values[0];
	Memo	   *m;

	if (attno <= 0)
		return;					/* an expression: the operator never sees a stored value */
	m = find(RelationGetRelid(index), q);
	if (m == NULL)
	{
		m = &memo[memo_next];
		memo_next = (memo_next + 1) % MEMO_SLOTS;
		if (m->q)
			pfree(m->q);
		m->q = MemoryContextAlloc(TopMemoryContext, VARSIZE(q));
		memcpy(m->q, q, VARSIZE(q));
		m->index = RelationGetRelid(index);
		m->heap = index->rd_index->indrelid;
		m->attno = attno;
		m->lxid = MyProc->lxid;
		m->stmt = GetCurrentStatementStartTimestamp();
		m->used = true;
	}
	m->tid = *tid;
	m->matches = matches;
	m->score = score;
}

static bool
same_pointer(struct varlena *a, struct varlena *b)
{
	struct varatt_external pa,
				pb;

	VARATT_EXTERNAL_GET_POINTER(pa, a);
	VARATT_EXTERNAL_GET_POINTER(pb, b);
	return pa.va_valueid == pb.va_valueid && pa.va_toastrelid == pb.va_toastrelid;
}

bool
scipis_am_memo_lookup(Oid index, const ScipisQuery *q, Datum value, int *matches, double *score)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(value);
	Memo	   *m;
	Relation	heap;
	TupleTableSlot *slot;
	bool		hit = false;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return false;
	m = find(index, q);
	if (m == NULL)
		return false;
	heap = table_open(m->heap, AccessShareLock);
	slot = table_slot_create(heap, NULL);
	/* Any version at that TID: the pointer comparison decides. */
	if (table_tuple_fetch_row_version(heap, &m->tid, SnapshotAny, slot))
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, m->attno, &isnull);

		if (!isnull && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(d)) &&
			same_pointer((struct varlena *) DatumGetPointer(d), raw))
		{
			*matches = m->matches;
			*score = m->score;
			hit = true;
		}
	}
	ExecDropSingleTupleTableSlot(slot);
	table_close(heap, AccessShareLock);
	return hit;
}
