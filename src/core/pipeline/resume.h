// Resuming an interrupted build (the SCIPIS paper, 3.3.1): after a segment's
// files are durable the writer leaves a mark beside them; a later build of
// the same collection with the same options continues that generation,
// keeping each indexer's marked segments and reading only the files they
// do not hold.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "index/distinct_terms.h"
#include "index/manifest.h"
#include "index/path_index.h"

namespace scipis {

// file_index_<i>/seg_<n>.done
inline std::string seg_mark(uint32_t seg) { return "seg_" + std::to_string(seg) + ".done"; }
// The options a generation was started with: a resume needs the same.
inline const char* kBuildFingerprintFile = "BUILD";

struct SegmentMark {
  SegmentRef ref;
  // The flush came inside a file: its record (and the rest of its
  // postings) are in the indexer's next segment.
  bool partial = false;
  uint64_t next_seq = 0;  // the indexer's next document number after the flush
  // The indexer's files with records in this and its earlier segments.
  uint64_t files = 0, bytes = 0, tokens = 0, docs_with_tokens = 0;
  std::vector<uint8_t> sketch;  // DistinctTerms registers after the flush

  std::string encode() const;
  // nullopt when the bytes are not a whole, intact mark.
  static std::optional<SegmentMark> decode(std::string_view bytes);
};

// A path of a kept file, as two independent 64-bit hashes.
struct PathKey {
  uint64_t a, b;
  bool operator==(const PathKey& o) const { return a == o.a && b == o.b; }
  template <typename H>
  friend H AbslHashValue(H h, const PathKey& k) {
    return H::combine(std::move(h), k.a);
  }
};
PathKey path_key(std::string_view path);

// A refresh's indexer whose last segments are small takes their documents
// into its first flush, which then replaces those segments: an appended
// log's refresh wrote a segment of a few KiB that a merge (a generation of
// its own) then joined to the one before, after nearly every refresh.
// It waits until kTakeInRun of them have piled up (compaction leaves them
// be until then): taking in re-serialises every term they hold, a fifth
// of a 1 KiB append's refresh when done every time.
struct AbsorbDocs {
  SegmentRef ref;                  // the segment taken in
  // Documents of the segments before these: those a refresh took in, kept
  // with the ones it added (pipeline/kept_docs.h); none when decoded.
  std::vector<std::shared_ptr<const AbsorbDocs>> before;
  std::vector<std::string> names;  // its terms
  struct Doc {
    DocInfo info;  // its record, seq included
    std::string path;
    std::vector<std::pair<uint32_t, uint32_t>> terms;  // (into names, tf); a term may recur
  };
  std::vector<Doc> docs;  // in seq order, after before's
  // Every document, before's first: f(names, doc).
  template <typename F>
  void each(F&& f) const {
    for (const auto& b : before) b->each(f);
    for (const Doc& d : docs) f(names, d);
  }
  uint64_t count() const {
    uint64_t n = docs.size();
    for (const auto& b : before) n += b->count();
    return n;
  }
  // The TF-IDF table bytes their documents need at most: every name a
  // distinct term (a slot, its bytes) and every (term, document) pair a
  // posting in a TF array, each array at most twice its postings.
  uint64_t table_bytes() const {
    uint64_t n = 0;
    for (const std::string& t : names) n += 64 + t.size();
    for (const Doc& d : docs) n += 16 * d.terms.size();
    for (const auto& b : before) n += b->table_bytes();
    return n;
  }
};

struct ResumeState {
  struct Indexer {
    uint32_t segs = 0;  // kept segments 0..segs-1
    uint64_t next_seq = 0, files = 0, bytes = 0, tokens = 0, docs_with_tokens = 0;
    DistinctTerms::Shared sketch;  // null: none (zeros)
    // Segments taken in before the first new document, if any comes, in
    // order: their refs, and what decodes their documents then (a refresh
    // that gives this indexer nothing decodes nothing).
    std::vector<SegmentRef> absorb;
    // What absorb's documents need of a table, when all are kept (else 0:
    // kMergeTableFactor times their bytes is assumed).
    uint64_t absorb_table = 0;
    std::function<std::vector<std::shared_ptr<const AbsorbDocs>>()> absorb_docs;
  };
  std::vector<Indexer> indexers;
  std::vector<SegmentRef> kept;
  absl::flat_hash_set<PathKey> done;
  uint64_t files = 0, bytes = 0, tokens = 0, docs_with_tokens = 0;
};

// Keeps, per indexer of gen_dir, the longest run of marked segments from
// segment 0 that does not end inside a file and whose files are on disk
// as their records say (path, size, mtime, ctime, inode); removes every
// other segment file. Files of a kept segment that changed since make it
// and the indexer's later segments go.
ResumeState plan_resume(const std::string& gen_dir, uint32_t indexers);

}  // namespace scipis
