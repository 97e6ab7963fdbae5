/*
 * The scipis index access method: page layout and the shared helpers of
 * am_*.c. The index is a metapage (block 0), immutable segments (each a
 * run of consecutive pages holding one engine byte stream, every page with
 * its own crc) and a pending list of entries (one per row, possibly cut in
 * chunks over several pages) that inserts append to and merges fold into a
 * segment.
 *
 * Locks (heavyweight page locks on tags, not on real pages):
 *   SCIPIS_LOCK_VIEW    share while a scan reads one view; exclusive while a
 *                       merge publishes a new one and frees pages
 *   SCIPIS_LOCK_MERGE   one merge (pending flush, VACUUM) at a time
 *   SCIPIS_LOCK_APPEND  one appender to the pending list at a time
 */
#ifndef SCIPIS_AM_H
#define SCIPIS_AM_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "nodes/execnodes.h"
#include "access/generic_xlog.h"
#include "access/reloptions.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "scipis_engine.h"

#define SCIPIS_AM_MAGIC 0x53434d31	/* "SCM1" */
#define SCIPIS_AM_VERSION 1
#define SCIPIS_METAPAGE_BLKNO 0
#define SCIPIS_MAX_SEGMENTS 200
#define SCIPIS_MAX_FREE 128

#define SCIPIS_LOCK_VIEW 0
#define SCIPIS_LOCK_MERGE 1
#define SCIPIS_LOCK_APPEND 2

/* Page types, in the special space. */
#define SCIPIS_PAGE_META 1
#define SCIPIS_PAGE_SEGMENT 2
#define SCIPIS_PAGE_PENDING 3
#define SCIPIS_PAGE_FREE 4

typedef struct ScipisPageOpaque
{
	uint16		type;
	uint16		flags;
	uint32		owner;			/* segment id; pending: unused */
	uint32		aux;			/* segment: page within it; pending: next block */
	uint32		crc;			/* segment: crc of owner, page and payload */
} ScipisPageOpaque;

#define ScipisPageGetOpaque(page) ((ScipisPageOpaque *) PageGetSpecialPointer(page))
#define SCIPIS_PAYLOAD (BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(ScipisPageOpaque)))

/* A pending chunk item: this header, then bytes of the entry. */
#define SCIPIS_CHUNK_FIRST 1
#define SCIPIS_CHUNK_LAST 2
typedef struct ScipisChunkHeader
{
	uint8		flags;
} ScipisChunkHeader;
/* Room for a chunk's bytes in one page. */
#define SCIPIS_CHUNK_MAX \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(ScipisPageOpaque)) - \
	 sizeof(ItemIdData) - MAXALIGN(sizeof(ScipisChunkHeader)) - 64)

typedef struct ScipisExtent
{
	BlockNumber start;
	uint32		npages;
} ScipisExtent;

typedef struct ScipisMeta
{
	uint32		magic;
	uint32		version;
	unsigned char delimiter[256];	/* the tokenizer the index was built with */
	uint32		next_segment_id;
	uint32		nsegments;
	scipis_am_segment segments[SCIPIS_MAX_SEGMENTS];
	/* The pending list: entries from the (skip+1)-th item of head on. */
	BlockNumber pending_head;
	BlockNumber pending_tail;
	uint32		pending_skip;
	uint32		pending_pages;
	uint64		pending_entries;
	uint64		pending_bytes;
	uint32		nfree;
	ScipisExtent free[SCIPIS_MAX_FREE];
	uint64		leaked_pages;	/* freed when the free list was full */
} ScipisMeta;

#define ScipisPageGetMeta(page) ((ScipisMeta *) PageGetContents(page))

typedef struct ScipisAmOptions
{
	int32		vl_len_;
	int			tokenizer;		/* offsets of string options */
	int			delimiters;
	int			indexer_threads;
	int			tfidf_index_size;	/* MB */
	int			pending_limit;	/* kB */
} ScipisAmOptions;

/* am_options.c */
extern void scipis_am_options_init(void);
extern bytea *scipis_am_options(Datum reloptions, bool validate);
extern void scipis_am_delimiters(Relation index, unsigned char delimiter[256]);
extern int	scipis_am_threads(Relation index);
extern uint64 scipis_am_memory(Relation index);
extern uint64 scipis_am_pending_limit(Relation index);

/* am_pages.c */
typedef struct ScipisReadCtx
{
	Relation	index;
	MemoryContext cxt;
	ErrorData  *saved;			/* a PostgreSQL error caught in a callback */
	BlockNumber nblocks;		/* the relation's size when last asked */
} ScipisReadCtx;

extern void scipis_am_reader_init(scipis_am_reader *rd, ScipisReadCtx *ctx, Relation index);
extern void scipis_am_fail(ScipisReadCtx *ctx, const scipis_error *err, Relation index);
extern void scipis_am_read_meta(Relation index, ScipisMeta *meta);
extern Relation scipis_am_open_for_sql(Oid indexoid, Relation *heap);
extern void scipis_am_init_metapage(Page page, const unsigned char delimiter[256]);
extern void scipis_am_view_read(Relation index, const ScipisMeta *meta, scipis_am_view *view,
								BlockNumber *end_block, OffsetNumber *end_item);
extern BlockNumber scipis_am_alloc_pages(Relation index, uint32 npages);
extern void scipis_am_free_pages(Relation index, ScipisMeta *meta, BlockNumber start,
								 uint32 npages);
extern void scipis_am_fill_segment_page(Page page, uint32 id, uint32 pageno,
										const unsigned char *data, size_t len);
extern void scipis_am_write_segment(Relation index, scipis_am_segment *seg,
									const unsigned char *data, size_t len, bool bulk);
extern void scipis_am_write_blob(Relation index, scipis_am_segment *seg, scipis_am_blob *blob,
								 bool bulk);
extern void scipis_am_append(Relation index, const unsigned char *entry, size_t len);

/* am_vals.c: filter columns (the index's columns after the first) */
#define SCIPIS_MAX_VALS 31
extern bool scipis_am_filter_type(Oid type);
extern void scipis_am_check_columns(Relation index);
extern void scipis_am_row_vals(Relation index, Datum *values, bool *isnull, uint64 *keys,
							   unsigned char *nulls, scipis_am_vals *out);
extern bool scipis_am_key_filter(Relation index, ScanKey k, scipis_am_filter *f);

/* am_merge.c */
extern bool scipis_am_flush_pending(Relation index, bool wait);
extern void scipis_am_merge_vacuum(Relation index, const uint64 *dead, size_t ndead,
								   const bool *rewrite);
extern uint64 scipis_am_tid_key(ItemPointer tid);
extern void scipis_am_key_tid(uint64 key, ItemPointer tid);

/* am_build.c, am_insert.c, am_scan.c, am_vacuum.c */
extern IndexBuildResult *scipis_ambuild(Relation heap, Relation index, IndexInfo *info);
extern void scipis_ambuildempty(Relation index);
extern bool scipis_am_insert(Relation index, Datum *values, bool *isnull, ItemPointer tid,
							 Relation heap, IndexUniqueCheck check, bool indexUnchanged,
							 IndexInfo *info);
extern IndexScanDesc scipis_am_beginscan(Relation index, int nkeys, int norderbys);
extern void scipis_am_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
							 int norderbys);
extern bool scipis_am_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 scipis_am_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void scipis_am_endscan(IndexScanDesc scan);
extern IndexBulkDeleteResult *scipis_am_bulkdelete(IndexVacuumInfo *info,
												   IndexBulkDeleteResult *stats,
												   IndexBulkDeleteCallback callback,
												   void *state);
extern IndexBulkDeleteResult *scipis_am_vacuumcleanup(IndexVacuumInfo *info,
													  IndexBulkDeleteResult *stats);

/* am_query.c: the scipisquery type */
typedef struct ScipisQuery
{
	int32		vl_len_;
	int32		ranking;
	int32		match;
	Oid			index;			/* InvalidOid: not named */
	char		text[FLEXIBLE_ARRAY_MEMBER];
} ScipisQuery;

#define DatumGetScipisQuery(d) ((ScipisQuery *) PG_DETOAST_DATUM(d))
#define ScipisQueryTextLen(q) (VARSIZE(q) - offsetof(ScipisQuery, text))

extern scipis_am_query *scipis_am_open_query(const ScipisQuery *q,
											 const unsigned char delimiter[256]);
/* Who asks for a statement's statistics (am_query.c). */
typedef enum ScipisStatsFor
{
	SCIPIS_STATS_OPERATOR,		/* an operator's own evaluation */
	SCIPIS_STATS_SCAN,			/* an ordered scan: keeps what it read for its first round */
	SCIPIS_STATS_PLAN			/* the planner's estimate: kept for the scan that follows */
} ScipisStatsFor;

extern void scipis_am_statement_stats(Relation index, const ScipisQuery *q, scipis_am_query *into,
									  ScipisStatsFor who);
/* am_selfuncs.c: what one call of an operator on arg costs the planner. */
struct PlannerInfo;
extern bool scipis_am_call_cost(struct PlannerInfo *root, Node *arg, Cost *per_call);

/* am_memo.c: the score of the row an ordered scan returned last. */
extern void scipis_am_memo_note(Relation index, const ScipisQuery *q, ItemPointer tid,
								bool matches, double score);
extern bool scipis_am_memo_lookup(Oid index, const ScipisQuery *q, Datum value, int *matches,
								  double *score);

#endif
