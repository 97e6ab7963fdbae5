/*
 * The engine's only door: plain C types, no PostgreSQL header, no C++ type.
 * Every function catches everything inside and reports failure through a
 * scipis_error; nothing unwinds out of it.
 */
#ifndef SCIPIS_ENGINE_H
#define SCIPIS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error classes; the C side maps each to an SQLSTATE. */
typedef enum scipis_status
{
	SCIPIS_OK = 0,
	SCIPIS_E_INVALID,			/* bad argument or option: 22023 */
	SCIPIS_E_IO,				/* file system error: 58030 */
	SCIPIS_E_CORRUPT,			/* damaged index file: XX001 */
	SCIPIS_E_CANCELED,			/* stopped on request: 57014 */
	SCIPIS_E_NOMEM,				/* out of memory: 53200 */
	SCIPIS_E_NOT_INDEXED,		/* no index built yet: 55000 */
	SCIPIS_E_INTERNAL			/* a bug: XX000 */
} scipis_status;

typedef struct scipis_error
{
	scipis_status code;
	char		message[1024];
} scipis_error;

/* Collection options; scipis_options_init fills the documented defaults. */
typedef struct scipis_options
{
	const char *const *include; /* globs on the path relative to the root */
	int			n_include;
	const char *const *exclude;
	int			n_exclude;
	int			follow_symlinks;
	unsigned char delimiter[256];	/* 1 = the byte is a delimiter */
	int			reader_threads; /* 0 = chosen from the machine */
	int			indexer_threads;
	int			writer_threads;
	uint64_t	block_size;
	uint64_t	path_index_size;	/* bytes, per indexer */
	uint64_t	tfidf_index_size;	/* bytes, per indexer */
	int			index_depth;
	int			split_factor;
	int			direct_io;
	int			direct_writes;	/* large segment files past the page cache */
} scipis_options;

void		scipis_options_init(scipis_options *opts);
/* Fills delimiter[] for a named tokenizer ("word" or "whitespace"). */
int			scipis_tokenizer_named(const char *name, unsigned char delimiter[256]);
/* 1 when the query has at least one token under the delimiter table. */
int			scipis_query_has_terms(const char *query, size_t len,
								   const unsigned char delimiter[256]);
/* Checks ranges; on failure names the option in err. */
int			scipis_options_check(const scipis_options *opts, scipis_error *err);

typedef struct scipis_build_stats
{
	uint64_t	files;
	uint64_t	bytes;
	uint64_t	tokens;
	uint64_t	terms;			/* distinct terms over the collection */
	uint64_t	segments;
	uint64_t	skipped;		/* entries not indexed: unreadable, vanished */
	uint64_t	index_bytes;
	double		seconds;
	uint64_t	resumed_files;	/* taken from an interrupted build's segments, not read */
	uint64_t	resumed_bytes;
	/* What changed (a full build: every file added). */
	uint64_t	files_added;
	uint64_t	files_changed;	/* read again; their old versions tombstoned */
	uint64_t	files_deleted;	/* gone from the tree: tombstoned */
	uint64_t	bytes_read;
	uint64_t	deleted_docs;	/* tombstoned documents the index now holds */
	uint64_t	files_appended;	/* grown only: just the new bytes read, linked */
	uint64_t	chain_links;	/* appended parts the index now holds */
	/* A compaction's work. */
	uint64_t	segments_merged;
	uint64_t	docs_dropped;	/* tombstoned, and chains' members folded */
	uint64_t	chains_folded;	/* whole, or their last links into one */
	/* A refresh's walk (SCIPIS_REFRESH_SKIP_DIRS). */
	uint64_t	dirs_skipped;	/* unchanged since the last walk: not listed */
	uint64_t	files_checked;	/* held files stat'ed to see whether they changed */
} scipis_build_stats;

typedef struct scipis_build scipis_build;

/*
 * Starts building a new generation of the collection's index in dir (created
 * if missing) from the tree at root, on engine threads. The previous
 * generation stays live until the build commits.
 */
scipis_build *scipis_build_start(const char *dir, const char *root,
								 const scipis_options *opts, scipis_error *err);
/* Flags of scipis_build_start_ex. */
#define SCIPIS_BUILD_COUNT_BYTES 1	/* the walk sums the sizes it finds (a statx each) */
/*
 * Resumable: each flushed segment is marked once durable, and an earlier
 * build of the same options that did not commit is continued: its marked
 * segments are kept and the files they hold are not read again.
 */
#define SCIPIS_BUILD_RESUME 2
/*
 * A refresh of the whole tree lists only the directories whose inode, mtime
 * or ctime changed since the last walk of the whole tree (builds and
 * refreshes record them; not with follow_symlinks), and stats only the files
 * in those: a file rewritten in place in an unchanged directory is not seen.
 */
#define SCIPIS_REFRESH_SKIP_DIRS 4
/*
 * A refresh whose change goes into the journal may return before that
 * record is synced (as PostgreSQL's synchronous_commit = off): a killed
 * process loses nothing, a crash of the machine may take the collection
 * back to its last synced state (never a mix), and the next refresh finds
 * the changes again. It syncs all the same when it removes files the state
 * before it holds, or once the first unsynced record is a second old.
 */
#define SCIPIS_REFRESH_DEFER_SYNC 8
/*
 * A refresh of the whole tree leaves fresh_as_of as it was: its caller
 * knows it may not have seen every change (a watcher's poll that lists
 * only changed directories).
 */
#define SCIPIS_REFRESH_KEEP_FRESH 16
/* Tests: the build stops (as if canceled) after n marks, n < 65536. */
#define SCIPIS_BUILD_STOP_AFTER_MARKS(n) ((int) ((unsigned) (n) << 8))
scipis_build *scipis_build_start_ex(const char *dir, const char *root,
									const scipis_options *opts, int flags,
									scipis_error *err);

/* Where a running build is; every counter only grows. */
typedef enum scipis_build_phase
{
	SCIPIS_PHASE_CRAWLING,		/* walking, no file indexed yet */
	SCIPIS_PHASE_INDEXING,		/* reading and indexing (the walk may go on) */
	SCIPIS_PHASE_FLUSHING		/* every file read: the last segments are written */
} scipis_build_phase;

typedef struct scipis_build_progress
{
	uint64_t	files_found;	/* regular files the walk has handed out */
	uint64_t	bytes_found;	/* their sizes (with SCIPIS_BUILD_COUNT_BYTES) */
	uint64_t	files_done;		/* indexed */
	uint64_t	bytes_done;		/* read */
	uint64_t	skipped;
	int			crawl_done;		/* the walk has ended: found are the totals */
	int			phase;			/* scipis_build_phase */
	double		seconds;
	uint64_t	resumed_files;	/* of the done ones: kept from an interrupted build */
	uint64_t	resumed_bytes;
} scipis_build_progress;

/*
 * Starts refreshing the collection's index in dir against the tree at root
 * (search-semantics.md, "Changing collections"): files the index holds as
 * they are (path, inode, size, mtime and ctime in ns) are not read; new and
 * changed files are indexed into new segments, the old versions of changed
 * files and the files gone are tombstoned, and the next generation commits
 * atomically. With n_paths > 0 only those absolute paths under root (files
 * or whole subtrees) are looked at. An index never built, damaged, or built
 * with another tokenizer or split factor is built afresh instead. Polled,
 * cancelled and finished as a build; flags: SCIPIS_BUILD_COUNT_BYTES,
 * SCIPIS_REFRESH_SKIP_DIRS.
 */
scipis_build *scipis_refresh_start(const char *dir, const char *root,
								   const scipis_options *opts, const char *const *paths,
								   int n_paths, int flags, scipis_error *err);
/*
 * Starts compacting the collection's index in dir: each indexer's last
 * segments (its tail tier, once it holds 2 or more, or from where
 * tombstoned and linked documents are half of them; with
 * SCIPIS_COMPACT_ALL every segment of every indexer) are merged into new
 * ones, tombstoned documents dropped and appended files' chains folded,
 * and the next generation commits atomically; searches answer the same
 * before and after. opts: the table sizes of the new segments. Polled,
 * cancelled and finished as a build (a pause cancels it).
 */
#define SCIPIS_COMPACT_ALL 1
/* Tiers of at most 1 MiB instead of 8 (a watcher with changes waiting). */
#define SCIPIS_COMPACT_SMALL 2
/*
 * Beside refreshes: the caller holds the collection's lock while this
 * starts and while scipis_build_finish commits, not in between, so that
 * refreshes commit meanwhile. Tail tiers of up to 64 MiB only; every
 * document keeps its number and record, tombstoned ones lose their
 * postings, and chains whose members it merges fold into their last (the
 * others tombstoned; the commit applies the folds to the chains it finds,
 * links added meanwhile following the folded one); the commit puts the
 * merged segments into the generation it finds, or drops the merge if
 * that no longer holds what it merged (a rebuild, scipis_compact). One at
 * a time per collection: another fails with SCIPIS_E_INVALID.
 */
#define SCIPIS_COMPACT_BESIDE 4
/*
 * With SCIPIS_COMPACT_BESIDE: a build's segments instead of the tail
 * tiers. Each indexer whose last segments (together at most 8 times
 * tfidf_index_size, their terms too) hold no tombstoned or chained
 * document merges them in step into one, whatever their sizes: what
 * scipis_compact would write for them, without the lock held meanwhile.
 * An indexer that does not qualify is left be.
 */
#define SCIPIS_COMPACT_SETTLE 8
scipis_build *scipis_compact_start(const char *dir, const scipis_options *opts, int flags,
								   scipis_error *err);
/*
 * A compaction (as scipis_compact_start with no flags: tail tiers, and
 * tombstoned documents' records dropped, documents renumbered) beside
 * refreshes: the caller holds the collection's lock while this starts and
 * while scipis_build_finish commits, not in between. The commit publishes
 * the merge when nothing was committed meanwhile; otherwise it refreshes
 * the whole tree under root on top of the merged generation before that
 * is published, and publishes the refresh's (so the commit takes about
 * as long as a refresh of what changed while the merge ran). It is
 * dropped if a segment it keeps is gone (a rebuild, scipis_compact). One
 * merge at a time per collection, as SCIPIS_COMPACT_BESIDE.
 */
scipis_build *scipis_compact_garbage_start(const char *dir, const char *root,
										   const scipis_options *opts, scipis_error *err);
/*
 * 1 when the index in dir has a tail tier a compaction (flags) would
 * merge, or (unless SCIPIS_COMPACT_BESIDE) garbage it would drop; with
 * SCIPIS_COMPACT_SETTLE, when an indexer has two or more segments that
 * begin and end with whole documents (the closer look waits for the start).
 */
int			scipis_compact_needed(const char *dir, int flags);
/*
 * 1 while a merge beside refreshes of the index in dir runs (another
 * scipis_compact_start with SCIPIS_COMPACT_BESIDE would fail); a caller
 * holding the collection's lock may then release it and try again later.
 */
int			scipis_compact_busy(const char *dir);
/*
 * 1 with *ns set when dir records when its collection was last fresh: every
 * change to the tree before that time (ns since the epoch) is searchable;
 * 0 when unknown.
 */
int			scipis_fresh_as_of(const char *dir, int64_t *ns);
/*
 * Records that every change before ns is searchable (a watcher, after the
 * refresh of every path its events named up to ns); an earlier time than
 * the one recorded is ignored.
 */
int			scipis_mark_fresh(const char *dir, int64_t ns, scipis_error *err);

/* Safe to call at any time between start and finish, from the owning thread. */
void		scipis_build_get_progress(scipis_build *b, scipis_build_progress *p);
/* Waits up to timeout_ms; returns 1 when the build has finished. */
int			scipis_build_wait(scipis_build *b, int timeout_ms);
/*
 * Asks the threads to stop; scipis_build_wait then returns promptly, and
 * scipis_build_finish commits nothing and reports SCIPIS_E_CANCELED, even
 * when the threads had already ended.
 */
void		scipis_build_cancel(scipis_build *b);
/*
 * Asks a resumable build (SCIPIS_BUILD_RESUME) to end early but keep what
 * it read: no new files, the files being read are finished, the indexers
 * flush and the segments are marked; scipis_build_finish then reports a
 * cancel, and the next resumable build continues from there.
 */
void		scipis_build_pause(scipis_build *b);
/* After the wait returned 1: commits (or discards) and frees the build. */
int			scipis_build_finish(scipis_build *b, scipis_build_stats *stats,
								scipis_error *err);
/* Stops, joins and frees a build that will not be committed. */
void		scipis_build_abort(scipis_build *b);
/*
 * The most memory a build with these options can hold in its term tables
 * and arenas, path indexes, read buffers and flush buffers, whatever the
 * collection's size (threads resolved as scipis_build_start does).
 */
uint64_t	scipis_build_memory_bound(const scipis_options *opts);
/* Those bytes held now by the engine, and the most held since the last reset. */
uint64_t	scipis_memory_held(void);
uint64_t	scipis_memory_peak(void);
void		scipis_memory_reset_peak(void);

/* An opened collection index: the manifest and lazily read segments. */
typedef struct scipis_index scipis_index;

/* The tokenizer is the one the index was built with (kept in its manifest). */
scipis_index *scipis_index_open(const char *dir, scipis_error *err);
/* 1 when the manifest on disk is still the one ix was opened on. */
int			scipis_index_is_current(scipis_index *ix);
/*
 * Moves ix to the manifest now on disk, keeping what it had read of the
 * segments both name (a refresh adds a few and leaves the rest): cheaper
 * than closing and opening. On failure ix is as it was.
 */
int			scipis_index_update(scipis_index *ix, scipis_error *err);
void		scipis_index_close(scipis_index *ix);

typedef struct scipis_index_info
{
	uint64_t	generation;
	uint64_t	files;
	uint64_t	bytes;
	uint64_t	docs_with_tokens;
	uint64_t	total_tokens;
	uint64_t	segments;
	uint64_t	index_bytes;
	uint64_t	deleted_docs;	/* tombstoned, not yet compacted away */
	/* This handle's own memory, and the segment files it has mapped (the
	 * page cache's, shared by every process mapping them). */
	uint64_t	heap_bytes;
	uint64_t	mapped_bytes;
} scipis_index_info;

int			scipis_index_info_get(scipis_index *ix, scipis_index_info *info,
								  scipis_error *err);

typedef enum scipis_ranking
{
	SCIPIS_TFIDF = 0,
	SCIPIS_BM25 = 1
} scipis_ranking;

typedef enum scipis_match
{
	SCIPIS_MATCH_ANY = 0,
	SCIPIS_MATCH_ALL = 1
} scipis_match;

/* One file of the collection. path points into memory owned by the result. */
typedef struct scipis_doc
{
	const char *path;
	uint32_t	path_len;
	uint64_t	size;
	int64_t		mtime_ns;		/* since the Unix epoch */
	uint64_t	tokens;
	/* The rest of what fstat said when the file was opened. */
	int64_t		ctime_ns;		/* since the Unix epoch */
	uint64_t	inode;
	uint32_t	uid;
	uint32_t	gid;
	uint32_t	mode;			/* st_mode, file type bits included */
	double		score;
} scipis_doc;

typedef struct scipis_docs
{
	scipis_doc *docs;
	size_t		n;
	void	   *owner;			/* engine memory behind docs and paths */
} scipis_docs;

/*
 * Ranked search per search-semantics.md. k < 0 means every match.
 * The query must have at least one token (SCIPIS_E_INVALID otherwise).
 */
int			scipis_search(scipis_index *ix, const char *query, size_t query_len,
						  int64_t k, scipis_ranking ranking, scipis_match match,
						  scipis_docs *out, scipis_error *err);
/* Exact path lookup through the path index; out->n is 0 or 1. */
int			scipis_lookup(scipis_index *ix, const char *path, size_t path_len,
						  scipis_docs *out, scipis_error *err);
/* Every file of the collection, in path order. */
int			scipis_list_files(scipis_index *ix, scipis_docs *out, scipis_error *err);

/*
 * A conjunction of ranges over file records, every bound inclusive except
 * path_to; scipis_file_filter_init leaves each field unrestricted. Times
 * in nanoseconds since the Unix epoch.
 */
typedef struct scipis_file_filter
{
	uint64_t	size_min, size_max;
	int64_t		mtime_min, mtime_max;
	int64_t		ctime_min, ctime_max;
	uint32_t	uid_min, uid_max;
	uint32_t	gid_min, gid_max;
	/* Paths p with path_from <= p (bytewise) and, if path_to_set, p < path_to. */
	const char *path_from;
	size_t		path_from_len;
	const char *path_to;
	size_t		path_to_len;
	int			path_to_set;
} scipis_file_filter;

void		scipis_file_filter_init(scipis_file_filter *f);

/* What a filtered listing read: blocks of file records, and of them read. */
typedef struct scipis_scan_stats
{
	uint64_t	blocks;
	uint64_t	blocks_read;
} scipis_scan_stats;

/*
 * The files matching every range of filter, in path order; blocks whose
 * statistics rule them out are not read. stats (may be NULL) accumulates.
 */
int			scipis_list_files_where(scipis_index *ix, const scipis_file_filter *filter,
									scipis_docs *out, scipis_scan_stats *stats,
									scipis_error *err);
/*
 * The files whose path matches pattern (search-semantics.md, "Paths": a
 * substring, or a shell glob on the whole path when it has '*', '?' or
 * '['), in path order.
 */
int			scipis_locate(scipis_index *ix, const char *pattern, size_t pattern_len,
						  scipis_docs *out, scipis_error *err);
void		scipis_docs_free(scipis_docs *docs);

/* Removes the whole index directory of a collection. */
int			scipis_remove_dir(const char *dir, scipis_error *err);

/* ---- block min/max indexes ---- */

#define SCIPIS_BLOCK_MAX_DIMS 16

/* One variable: a raw little-endian array in a file. */
typedef struct scipis_block_var
{
	const char *name;
	const char *path;
	const char *dtype;			/* "int32", "int64", "float32", "float64" */
	int64_t		header_bytes;	/* bytes to skip at the start of the file */
} scipis_block_var;

/* What to index; 0 / NULL fields take the documented defaults. */
typedef struct scipis_block_spec
{
	const scipis_block_var *vars;
	int			n_vars;
	const int64_t *shape;		/* NULL: 1-D of the files' length */
	int			n_shape;
	const int64_t *block_shape; /* NULL: the whole array is one block */
	int			n_block_shape;
	int64_t		partition_bytes;	/* 0: default */
	int			threads;		/* 0: chosen from the machine */
} scipis_block_spec;

typedef struct scipis_block_info
{
	int			n_vars;
	int			ndims;
	int64_t		shape[SCIPIS_BLOCK_MAX_DIMS];
	int64_t		block_shape[SCIPIS_BLOCK_MAX_DIMS];
	uint64_t	elements;		/* per variable */
	uint64_t	blocks;
	uint64_t	partitions;		/* per variable */
	uint64_t	partition_elements;
	uint64_t	bytes_indexed;	/* all variables */
	uint64_t	index_bytes;	/* size of the index file */
	double		build_seconds;
} scipis_block_info;

typedef struct scipis_block_build scipis_block_build;

/*
 * Starts building a block index of spec into the file index_path (its
 * directory is created if missing) on engine threads; the file appears
 * atomically when the build finishes.
 */
scipis_block_build *scipis_block_build_start(const char *index_path,
											 const scipis_block_spec *spec,
											 scipis_error *err);
/* Waits up to timeout_ms; returns 1 when the build has finished. */
int			scipis_block_build_wait(scipis_block_build *b, int timeout_ms);
void		scipis_block_build_cancel(scipis_block_build *b);
/* After the wait returned 1: reports the outcome and frees the build. */
int			scipis_block_build_finish(scipis_block_build *b, scipis_block_info *info,
									  scipis_error *err);
/* Stops, joins and frees a build that will not be finished. */
void		scipis_block_build_abort(scipis_block_build *b);

/* An opened index file, every checksum verified, data files checked unchanged. */
typedef struct scipis_block_index scipis_block_index;

scipis_block_index *scipis_block_open(const char *index_path, scipis_error *err);
void		scipis_block_close(scipis_block_index *ix);
void		scipis_block_info_get(const scipis_block_index *ix, scipis_block_info *info);
/* Variable i's name (variables are in byte order of their names). */
const char *scipis_block_var_name(const scipis_block_index *ix, int i);
/* Row-major coordinates over shape of a global element index. */
void		scipis_block_coords(const scipis_block_index *ix, int64_t element,
								int64_t *coords);

/* How candidates are chosen: the partitions, whole storage blocks, or all. */
typedef enum scipis_block_prune
{
	SCIPIS_PRUNE_PARTITION = 0,
	SCIPIS_PRUNE_BLOCK = 1,
	SCIPIS_PRUNE_NONE = 2
} scipis_block_prune;

typedef struct scipis_block_read_opts
{
	int64_t		max_gap;		/* <0: default; bytes to read through */
	int64_t		max_read;		/* <=0: default; largest single read */
	scipis_block_prune prune;
	int			count_only;		/* scans return counts, no hits */
} scipis_block_read_opts;

void		scipis_block_read_opts_init(scipis_block_read_opts *o);

/* One coalesced read of one variable's file. */
typedef struct scipis_block_range
{
	int			var;
	int64_t		block;
	int64_t		first_partition;	/* inside the block */
	int64_t		partitions;		/* candidate partitions in the read */
	int64_t		offset;			/* bytes from the start of the file */
	int64_t		length;
	double		min;			/* over the candidate partitions; NaN if none */
	double		max;
} scipis_block_range;

typedef struct scipis_block_ranges
{
	scipis_block_range *ranges;
	size_t		n;
	void	   *owner;
} scipis_block_range_list;

/* The reads a query would do, in file order; predicate errors name the position. */
int			scipis_block_plan(scipis_block_index *ix, const char *predicate,
							  const scipis_block_read_opts *opts,
							  scipis_block_range_list *out, scipis_error *err);
void		scipis_block_ranges_free(scipis_block_range_list *r);

/* A scan reads the planned ranges one at a time on the calling thread. */
typedef struct scipis_block_scan scipis_block_scan;

typedef struct scipis_block_hits
{
	const int64_t *elements;	/* global element indexes; NULL if count_only */
	const double *values;		/* n * n_vars, row by row; NULL if count_only */
	size_t		n;
} scipis_block_hits;

typedef struct scipis_block_scan_info
{
	uint64_t	candidate_partitions;
	uint64_t	bytes_read;
	uint64_t	read_requests;
	uint64_t	elements_checked;
	uint64_t	hits;
} scipis_block_scan_info;

scipis_block_scan *scipis_block_scan_start(scipis_block_index *ix, const char *predicate,
										   const scipis_block_read_opts *opts,
										   scipis_error *err);
/* Returns 1 with a batch of hits (valid until the next call), 0 at the end, -1 on error. */
int			scipis_block_scan_next(scipis_block_scan *s, scipis_block_hits *out,
								   scipis_error *err);
void		scipis_block_scan_info_get(const scipis_block_scan *s,
									   scipis_block_scan_info *info);
void		scipis_block_scan_end(scipis_block_scan *s);

/* Removes an index file; a missing file is not an error. */
int			scipis_block_remove(const char *index_path, scipis_error *err);

/* ---- end block ---- */


/* ---- the index access method (src/core/am) ----
 *
 * An index is a set of immutable segments, each a byte stream cut into the
 * payloads of consecutive pages of the index relation, plus a pending list
 * of entries (one per row) not yet merged into a segment. The C side owns
 * the pages: the engine reads a segment's bytes through scipis_am_reader,
 * whose callback copies one page's payload after checking it; the callback
 * catches PostgreSQL errors itself (nothing longjmps through the engine)
 * and reports them as a status.
 *
 * A row is identified by its TID as a 48-bit key: block << 16 | offset.
 */

typedef struct scipis_am_segment
{
	uint32_t	id;				/* written on every page of the segment */
	uint32_t	start;			/* first block */
	uint32_t	npages;
	uint64_t	bytes;			/* length of the byte stream */
} scipis_am_segment;

typedef struct scipis_am_reader
{
	void	   *ctx;
	uint32_t	payload;		/* bytes of a segment per page */
	/* Copies the payload of logical page `page` of seg into dst; 0 or -1. */
	int			(*read_page) (void *ctx, const scipis_am_segment *seg, uint32_t page,
							  unsigned char *dst, scipis_error *err);
	/*
	 * The index's storage (tablespace, database, relation file): names its
	 * pages in the process's page cache. All 0: nothing is cached.
	 */
	uint32_t	cache_rel[3];
} scipis_am_reader;

/*
 * Bounds the process's cache of segment pages read and checked (0: no
 * cache); shrinking it empties it. Pages per cached so far, for tests.
 */
void		scipis_am_cache_configure(size_t bytes);
size_t		scipis_am_cache_pages(void);

/* One consistent state of an index, as read from its metapage. */
typedef struct scipis_am_view
{
	const scipis_am_segment *segs;
	int			nsegs;
	const unsigned char *const *pending;	/* entries, oldest first */
	const uint32_t *pending_len;
	uint64_t	npending;
} scipis_am_view;

/*
 * A row's filter values: the index's columns after the first (at most 31),
 * each an order-preserving 64-bit key (the C side maps its type's order
 * onto unsigned order) or NULL. NULL pointers when n is 0.
 */
typedef struct scipis_am_vals
{
	uint32_t	n;
	const uint64_t *keys;
	const unsigned char *nulls;	/* 1: NULL */
} scipis_am_vals;

/* Rows whose filter column col holds a key in [lo, hi] (never NULL). */
typedef struct scipis_am_filter
{
	uint32_t	col;
	uint64_t	lo,
				hi;
} scipis_am_filter;

/* A pending entry for one row's value (NULL when is_null); vals may be NULL. */
typedef struct scipis_am_blob scipis_am_blob;
scipis_am_blob *scipis_am_entry_encode(uint64_t tid, const char *text, size_t len, int is_null,
									   const scipis_am_vals *vals,
									   const unsigned char delimiter[256],
									   scipis_error *err);
const unsigned char *scipis_am_blob_data(const scipis_am_blob *b, size_t *len);
void		scipis_am_blob_free(scipis_am_blob *b);
/* The row of an entry; -1 when the bytes are not an entry. */
int			scipis_am_entry_tid(const unsigned char *entry, size_t len, uint64_t *tid,
								scipis_error *err);

typedef struct scipis_am_stats
{
	uint64_t	entries;		/* rows, NULL and token-free ones included */
	uint64_t	docs;			/* rows with at least one token: N */
	uint64_t	tokens;
	uint64_t	terms;
} scipis_am_stats;

/* The rows of a segment, ascending within it (owned by the caller: free()). */
int			scipis_am_segment_tids(const scipis_am_reader *rd, const scipis_am_segment *seg,
								   uint64_t **tids, size_t *n, scipis_error *err);
int			scipis_am_segment_stats(const scipis_am_reader *rd,
									const scipis_am_segment *seg,
									scipis_am_stats *stats, scipis_error *err);

/*
 * Merges the view's segments and pending entries into one new segment,
 * leaving out the rows in dead (ascending). *out is NULL when nothing is
 * left.
 */
int			scipis_am_merge(const scipis_am_view *view, const scipis_am_reader *rd,
							const uint64_t *dead, size_t ndead, scipis_am_blob **out,
							scipis_am_stats *stats, scipis_error *err);

/*
 * Building: rows go in on the caller's thread, segments come out; each row
 * holds nvals filter values.
 */
typedef struct scipis_am_build scipis_am_build;
scipis_am_build *scipis_am_build_start(const unsigned char delimiter[256], int threads,
									   uint64_t memory_bytes, uint32_t nvals,
									   scipis_error *err);
/*
 * 0 when taken, 1 when the queue is full (take segments, then retry); vals
 * holds the build's nvals (NULL when it has none).
 */
int			scipis_am_build_add(scipis_am_build *b, uint64_t tid, const char *text,
								size_t len, int is_null, const scipis_am_vals *vals,
								scipis_error *err);
/* No more rows: the indexers write what they hold. */
int			scipis_am_build_finish_input(scipis_am_build *b, scipis_error *err);
/*
 * Waits up to timeout_ms for a finished segment: 1 with *seg (the caller
 * frees it), 0 when none is ready yet, 2 when the build is over, -1.
 */
int			scipis_am_build_take(scipis_am_build *b, int timeout_ms, scipis_am_blob **seg,
								 scipis_error *err);
/*
 * How many times the indexers have written what they held in memory so
 * far (they merge those writes into fewer segments while memory allows).
 */
uint64_t	scipis_am_build_flushes(const scipis_am_build *b);
void		scipis_am_build_free(scipis_am_build *b);

/* A query against an index (or a value, for the operators' own calls). */
typedef struct scipis_am_query scipis_am_query;
scipis_am_query *scipis_am_query_new(const char *query, size_t len,
									 const unsigned char delimiter[256],
									 scipis_ranking ranking, scipis_match match,
									 scipis_error *err);
void		scipis_am_query_free(scipis_am_query *q);
/*
 * Takes from's N, df and avgdl (a prepared query of the same text); with
 * take_opened also what from's prepare kept for a scan's first round.
 */
int			scipis_am_query_adopt(scipis_am_query *q, scipis_am_query *from, int take_opened,
								  scipis_error *err);
/*
 * From now on q's ranked rows, rest rows and matches pass the filter too
 * (filters add up); a segment without the column is an error.
 */
int			scipis_am_query_filter(scipis_am_query *q, const scipis_am_filter *f,
								   scipis_error *err);
/*
 * The rows of the view passing every filter, ascending by tid (malloc'ed;
 * the caller frees): a scan whose conditions are all on filter columns.
 */
int			scipis_am_filter_tids(const scipis_am_view *view, const scipis_am_reader *rd,
								  const scipis_am_filter *filters, size_t nfilters,
								  uint64_t **tids, size_t *n, scipis_error *err);
/* The fraction of the index's rows that match (after prepare; 0 before). */
double		scipis_am_query_selectivity(const scipis_am_query *q);
/*
 * Fixes N, df and avgdl from view; later calls keep the first ones. With
 * for_scan, what it read waits for the first ranked round (same view).
 */
int			scipis_am_query_prepare(scipis_am_query *q, const scipis_am_view *view,
									const scipis_am_reader *rd, int for_scan, scipis_error *err);

typedef struct scipis_am_hit
{
	uint64_t	tid;
	double		score;
	int			is_null;		/* the row's value is NULL */
} scipis_am_hit;

/*
 * Up to k matching rows ranked after (after_score, after_tid) in the order
 * score descending, then tid ascending (every match when has_after = 0).
 * Hits stay valid until the next call on q.
 */
int			scipis_am_query_ranked(scipis_am_query *q, const scipis_am_view *view,
								   const scipis_am_reader *rd, uint64_t k, int has_after,
								   double after_score, uint64_t after_tid,
								   const scipis_am_hit **hits, size_t *n, scipis_error *err);
/*
 * Up to k rows that do not match, ordered by (is_null, tid), after
 * (after_null, after_tid) when has_after.
 */
int			scipis_am_query_rest(scipis_am_query *q, const scipis_am_view *view,
								 const scipis_am_reader *rd, uint64_t k, int has_after,
								 int after_null, uint64_t after_tid,
								 const scipis_am_hit **hits, size_t *n, scipis_error *err);
/* Every matching row, ascending by tid. */
int			scipis_am_query_matches(scipis_am_query *q, const scipis_am_view *view,
									const scipis_am_reader *rd, const uint64_t **tids,
									size_t *n, scipis_error *err);
/* Whether a value matches, and its score (after prepare; 0 when no match). */
int			scipis_am_query_value(scipis_am_query *q, const char *text, size_t len,
								  int *matches, double *score, scipis_error *err);

/*
 * scipis_index_check: each entry of the view with a fingerprint of its
 * terms, counts and filter values, ascending by tid (malloc'ed; the caller frees). Every
 * segment is read whole and its statistics recomputed; a disagreement is a
 * SCIPIS_E_CORRUPT error naming it.
 */
typedef struct scipis_am_check_entry
{
	uint64_t	tid;
	uint64_t	fingerprint;
	uint32_t	len;			/* tokens; UINT32_MAX for NULL */
} scipis_am_check_entry;

int			scipis_am_check_entries(const scipis_am_view *view, const scipis_am_reader *rd,
									scipis_am_check_entry **entries, size_t *n,
									scipis_error *err);
/*
 * The same fingerprint for a value and its filter values (vals may be
 * NULL), as the index would hold them.
 */
int			scipis_am_value_fingerprint(const char *text, size_t len, int is_null,
										const scipis_am_vals *vals,
										const unsigned char delimiter[256],
										scipis_am_check_entry *out, scipis_error *err);

/* ---- end access method ---- */

#ifdef __cplusplus
}
#endif

#endif
