// A collection's manifest: the one file naming its live segments. It is
// replaced atomically, so a crash leaves the previous index whole.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scipis {

struct SegmentRef {
  uint32_t indexer = 0;
  uint32_t seg = 0;
  uint64_t first_seq = 0;
  uint64_t docs = 0;          // file records in this segment
  uint64_t tf_data_bytes = 0;
  uint64_t file_data_bytes = 0;
  // Its dictionaries and path trigrams (kUnknownBytes in a manifest before
  // version 3 until fill_meta_bytes stats them).
  uint64_t meta_bytes = 0;
  // When the build that wrote it began (ns since the epoch): a file whose
  // recorded ctime is not well before this may have changed again within
  // the same tick of the file system's clock (INT64_MIN: none to judge
  // by; refreshes and merges list their racy documents instead).
  int64_t run_started_ns = INT64_MIN;
  // Where its files are: generation g<home>, named after file_seg there. A
  // segment keeps the files it was written as while later generations
  // refer to it (renumbered or not), so that a commit writes only what
  // changed. kOwnGeneration: the manifest's own generation, named after seg
  // (a segment just written); decoding always gives the generation.
  uint64_t home = UINT64_MAX;
  uint32_t file_seg = 0;
  // Its files are parts of one pack file (index/segment_pack.h).
  bool packed = false;
  // The pack lies in the generation's directory itself, not in the
  // indexer's (manifest version 6): a refresh or a merge of small segments
  // makes no directory beside its generation's.
  bool pack_root = false;
  // The pack lies in its home generation's journal (index/journal.h), at
  // this offset (a multiple of the journal's alignment), this long; 0: not.
  uint64_t journal_off = 0, journal_len = 0;
  bool in_journal() const { return journal_len != 0; }
};

inline constexpr uint64_t kOwnGeneration = UINT64_MAX;

// The number s's files are named after.
inline uint32_t file_seg_of(const SegmentRef& s) { return s.home == kOwnGeneration ? s.seg : s.file_seg; }

inline constexpr uint64_t kUnknownBytes = UINT64_MAX;

// Every byte of the segment's files (what merging it reads and writes).
inline uint64_t segment_bytes(const SegmentRef& s) {
  return s.tf_data_bytes + s.file_data_bytes + (s.meta_bytes == kUnknownBytes ? 0 : s.meta_bytes);
}

struct Manifest {
  uint64_t generation = 0;
  uint32_t split_factor = 1;
  uint32_t indexers = 0;
  unsigned char delimiter[256] = {};
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t docs_with_tokens = 0;
  uint64_t total_tokens = 0;
  uint64_t terms = 0;
  uint64_t skipped = 0;
  uint64_t index_bytes = 0;
  std::vector<SegmentRef> segments;
  // Tombstoned documents of the segments (index/deletes.h), counted in none
  // of the totals above, which are of live documents only (a manifest
  // written before tombstones existed has none).
  uint64_t deleted = 0;
  // Links of appended files' chains (index/chains.h).
  uint64_t chain_links = 0;

  std::string encode() const;
  // Throws a corruption error naming path when the bytes are damaged.
  static Manifest decode(const std::string& path, const std::string& bytes);
  std::string gen_dir(const std::string& dir) const {
    return dir + "/g" + std::to_string(generation);
  }
  uint64_t home_of(const SegmentRef& s) const { return s.home == kOwnGeneration ? generation : s.home; }
  // The generation directory that holds s's files.
  std::string home_dir(const std::string& dir, const SegmentRef& s) const {
    return dir + "/g" + std::to_string(home_of(s));
  }
};

inline std::string manifest_path(const std::string& dir) { return dir + "/MANIFEST"; }

// A generation's distinct-term sketch (index/distinct_terms.h registers),
// which a refresh extends: the terms estimate counts every term indexed
// since the last full build.
inline const char* kTermsFile = "TERMS";
std::string encode_terms(const std::vector<uint8_t>& registers);
// Empty when the bytes are not an intact sketch (the estimate then starts
// afresh; it is only an estimate).
std::vector<uint8_t> decode_terms(const std::string& bytes);

// When the collection was last fresh: every change to its tree before
// this time (ns since the epoch) is searchable. Beside the manifest, so
// that a refresh that finds nothing to change leaves readers' caches be.
void write_fresh_as_of(const std::string& dir, int64_t ns);
// False when unknown (never recorded, or damaged).
bool read_fresh_as_of(const std::string& dir, int64_t& ns);

}  // namespace scipis
