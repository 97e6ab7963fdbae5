// Compaction (the SCIPIS paper's LSM-style merges): an indexer's last
// segments are merged into one run of new segments, their documents
// renumbered in order, tombstoned ones dropped and appended files' chains
// folded: into single documents when all their members take part, else
// their last two or more links that do into one link. Earlier
// segments keep their files (linked into the new generation) and their
// documents' numbers, so a merge costs what its segments hold.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "index/chains.h"
#include "index/journal.h"
#include "index/manifest.h"
#include "util/mapped_file.h"
#include "pipeline/journal_commit.h"
#include "scipis_engine.h"

struct scipis_build;

namespace scipis {

class Collection;

// A merge in step (index/tf_merge.h) is taken for runs of at most this
// many times tfidf_index_size at this many bytes per term of its inputs
// (measured: about 46 on the log corpus, 52 on the Linux tree, the
// dictionary's notes taking two bytes a symbol).
constexpr uint64_t kInStepBytesPerTerm = 56;
constexpr uint64_t kInStepTableShare = 8;
// Whether a run whose inputs hold this many terms may merge in step with a
// table of table_bytes (tfidf_index_size).
inline bool in_step_fits(uint64_t terms, uint64_t table_bytes) {
  return terms * kInStepBytesPerTerm <= kInStepTableShare * table_bytes;
}
// Merges begin once an indexer's tail tier holds this many segments; a
// segment is in the tail tier while it is at most kTierRatio times the
// size of the segments after it: sizes fall geometrically from the oldest
// segment to the newest, so an indexer keeps about log_kTierRatio of its
// growth in segments, and a byte is rewritten about that many times.
constexpr size_t kTierWidth = 2;
// Segments up to this size are in a tail tier whatever the largest.
constexpr uint64_t kTierFloor = 1u << 20;
constexpr uint64_t kTierRatio = 8;
// A merge also reaches back to the first segment from which on tombstoned
// documents and appended files' linked documents are half or more.
constexpr uint64_t kGarbageShareDenominator = 2;
// A merge a refresh runs on its own rewrites at most this many bytes of
// segments: it holds the collection's lock, and the next refresh waits for
// it. scipis_compact merges whatever is left.
constexpr uint64_t kMaxAutoMergeBytes = 8u << 20;
// A merge beside refreshes holds up none of them: it may take longer.
constexpr uint64_t kBesideMergeBytes = 64u << 20;
// Its tiers take a segment in while it is at most twice the size of those
// after it: at kTierRatio a merge would rewrite the one large segment a
// watcher's merges make with every eighth of its size that follows, so
// that under sustained churn merges ran back to back and the segments
// waiting for them piled up.
constexpr uint64_t kBesideTierRatio = 2;
// Its threads' nice value (Linux: per thread), while the collection has
// at most kBesideBacklog segments; past that, refreshes' segments pile up
// faster than a starved merge folds them (each makes every query look
// into one more), and it runs at the refreshes' own priority.
constexpr int kBesideNice = 10;
constexpr size_t kBesideBacklog = 32;
// With SCIPIS_COMPACT_SMALL (a watcher with changes waiting) at most this
// many, unless an indexer holds more than kSmallMergeSegments segments.
constexpr uint64_t kSmallMergeBytes = 1u << 20;
constexpr size_t kSmallMergeSegments = 10;
// A merge's TF-IDF table starts at this many times the bytes it merges
// (within 4 MiB and the tfidf_index_size option).
constexpr uint64_t kMergeTableFactor = 32;
// Segment j of an indexer, or the one before it while it begins inside a
// document a flush cut.
size_t first_uncut(const Manifest& m, uint32_t indexer, size_t j);

// An indexer's last segments that a refresh's first new segment may take
// in (AbsorbDocs: the merge they would need, a generation of its own,
// saved), together at most this many bytes: kTierRatio times a segment's
// fixed costs (a dictionary's code tables per split and a few headers).
// Larger ones stay: taking them in would cost more than the merge saves.
uint64_t absorb_max_bytes(uint32_t split_factor);
// A refresh takes them in once there are this many (a lone log's appends:
// two refreshes of three write a segment of their own document only);
// up to this many are no tail tier to merge. Each is a journal pack that
// queries look into too.
constexpr size_t kTakeInRun = 3;
// The first of indexer i's last segments a refresh may take in: each with
// documents and known sizes, together at most absorb_max_bytes, none
// beginning inside a document a flush cut, never the indexer's first
// segment. The indexer's segment count when there are none.
size_t take_in_from(const Manifest& m, uint32_t indexer);

// Where each indexer's merge starts (an index into its segments, in flush
// order), or SIZE_MAX for none. all: every segment of an indexer that has
// more than one, or any tombstoned or chained document; else the tail
// tier (before the segments a refresh will take in, while they are at
// most kTakeInRun): the last segments, each at most kTierRatio times the size of those
// after it and less than half the largest, when there are kTierWidth or
// more and together at most max_bytes (kMaxAutoMergeBytes for an indexer
// of more than kSmallMergeSegments segments). A merge never starts inside a
// document a flush cut.
// keep_full false: segments of half the largest's size are tiered too.
// ratio: kTierRatio, or another (kBesideTierRatio).
std::vector<size_t> plan_merges(const Manifest& m, bool all, uint64_t max_bytes = kMaxAutoMergeBytes,
                                bool keep_full = true, uint64_t ratio = kTierRatio);
// SCIPIS_COMPACT_SETTLE: each indexer's last segments, their postings and
// records together at most max_bytes (the first may take it past, to
// begin with a whole document),
// when they are two or more; SIZE_MAX for none.
std::vector<size_t> plan_settle(const Manifest& m, uint64_t max_bytes);

// Tests: merges (not beside refreshes) of a collection of from.size()
// indexers start each indexer's at these segments (SIZE_MAX: none)
// instead of where they would plan to; empty: as planned.
void set_compaction_plan(std::vector<size_t> from);
// Tests: false makes every merge add its postings to a table, as merges of
// runs that drop, fold or renumber documents do (true: runs that keep
// every document merge their TF parts in step, index/tf_merge.h).
void set_merge_in_step(bool on);

// A merge beside refreshes (SCIPIS_COMPACT_BESIDE) works in this
// directory of the collection's, flock()ed on its file LOCK while it runs:
// refreshes leave it be then, and remove it as garbage once it is not.
inline const char* kMergeStage = "merging";
bool merge_stage_busy(const std::string& stage);
// While one runs: how many segments each indexer had when it started
// (those it may hold: a refresh takes in only segments after them), from
// the LOCK file; empty when the file names none it can trust. Not
// running: nullopt.
std::optional<std::vector<size_t>> merge_stage_held(const std::string& stage);

struct CompactState {
  bool all = false;
  uint64_t max_bytes = kMaxAutoMergeBytes;  // of a merge that is not all
  Manifest current;  // its segments' sizes filled
  CurrentState state;  // what readers saw when it started (its lists)
  std::atomic<bool> stop{false};
  uint64_t segments_merged = 0, docs_dropped = 0, chains_folded = 0;

  // Beside refreshes: the tail tiers only, every document kept with its
  // number (a tombstoned one without its postings, a chain's folded
  // members as tombstones), so that the commit can put the merged
  // segments into whatever generation refreshes made meanwhile.
  // What it reads is opened under the lock, at the start: a refresh
  // removes the generation it replaces.
  bool beside = false;
  // SCIPIS_COMPACT_SETTLE: a build's segments, merged in step, read from
  // mappings (tf_maps) as a renumbering merge reads them: they may be
  // gigabytes.
  bool settle = false;
  int nice = kBesideNice;  // of a merge beside refreshes
  std::vector<size_t> plan;
  std::unique_ptr<Collection> snapshot;
  std::map<std::pair<uint32_t, uint32_t>, std::string> tf_data;  // (indexer, seg)
  // A renumbering one (which may read the whole index) maps its inputs'
  // TF data files instead, read a segment at a time; a packed segment's
  // pack stays mapped by its opened dictionaries.
  std::map<std::pair<uint32_t, uint32_t>, std::shared_ptr<const MappedFile>> tf_maps;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> input_ids;  // (dev, inode)
  std::string stage;
  int lock_fd = -1;
  std::vector<SegmentRef> written;              // the merged segments, in order
  std::vector<std::vector<uint64_t>> racy;      // racy documents among them
  // Chains it folded: their members when it started, the first that
  // folded, and the retraction the folded link keeps; the commit applies
  // the folds to the chains refreshes left meanwhile.
  struct BesideFold {
    std::vector<DocId> members;
    size_t from = 0;
    std::string kept_retract;
  };
  std::vector<BesideFold> folds;

  // Beside refreshes, renumbering (scipis_compact_garbage_start): the
  // compaction's own plan (tail tiers, garbage), tombstoned documents
  // dropped, read from what the start opened as a beside merge is, its
  // segments written into the stage. The commit publishes it, or, when
  // refreshes committed meanwhile, refreshes the tree (root) on top of it
  // and publishes that.
  bool renumber = false;
  std::string root;

  // A merge of the tail tiers small enough for one journal record keeps
  // its packs and lists for the commit, which puts them into the journal
  // of the generation it merged (pipeline/journal_commit.h), or, failing
  // that, writes a generation.
  bool defer = false;
  std::mutex packs_mu;
  std::vector<DeferredPack> packs;
  std::string dead, chains, racy_list;  // encoded; empty: none
  ~CompactState();
};

// A merge beside refreshes starts (caller holds the lock): its stage made
// and locked, the segments it holds written there, its snapshot opened.
void stage_open(scipis_build* b);
// Then what it reads of the segments from its plan on, opened or read.
void stage_inputs(scipis_build* b);
// The same segment, in the same files (its number aside from a rename).
bool same_segment(const SegmentRef& a, const SegmentRef& b);
std::vector<std::vector<const SegmentRef*>> by_indexer(const Manifest& m);
// A file's (device, inode), or (0, 0).
std::pair<uint64_t, uint64_t> file_id(const std::string& path);
// Opens what a merge beside refreshes reads (caller holds the lock).
void beside_prepare(scipis_build* b);
// The same for a renumbering one (CompactState::renumber): its plan, and
// the generation's lists read into memory (a refresh meanwhile may remove
// the generation).
void renumber_prepare(scipis_build* b);
// Commits it (caller holds the lock): nothing it kept from before the
// plan may have gone (a rebuild, scipis_compact), else it is dropped.
void renumber_commit(scipis_build* b, scipis_build_stats* stats);
// A compaction of the collection in dir as it is now, not started.
std::unique_ptr<scipis_build> compaction_of(const std::string& dir, const scipis_options& opts);
// Where each indexer's merge starts (SIZE_MAX: none), as compact_run plans.
std::vector<size_t> plan_compaction(Collection& c, const Manifest& cur, const CompactState& cs);
// Commits it into the collection's current generation (caller holds the
// lock): the merged segments replace their inputs if the generation still
// holds them, else the merge is dropped (nothing merged).
void beside_commit(scipis_build* b, scipis_build_stats* stats);
// A compaction's stats: the counts of the generation now live, and what
// it merged if it committed.
void compact_stats(const scipis_build& b, const Manifest& now, bool merged, scipis_build_stats* stats);
// Segment s's documents (records, paths, postings) as AbsorbDocs holds
// them; s must begin and end with whole documents.
struct AbsorbDocs;
struct SegmentState;
std::shared_ptr<AbsorbDocs> segment_documents(Collection& c, SegmentState& s);

// Links (or copies) segment s's files from generation from into to, named
// as segment as_seg there.
void link_segment(const std::string& from, const std::string& to, const SegmentRef& s,
                  uint32_t splits, uint32_t as_seg);

}  // namespace scipis

// The coordinator's part (engine thread) and the commit (caller's thread).
void compact_run(scipis_build* b);
void compact_commit(scipis_build* b, scipis_build_stats* stats);
