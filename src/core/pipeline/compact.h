// Compaction (the SCIPIS paper's LSM-style merges): an indexer's last
// segments are merged into one run of new segments, their documents
// renumbered in order, tombstoned ones dropped and appended files' chains
// whose members all take part folded into single documents. Earlier
// segments keep their files (linked into the new generation) and their
// documents' numbers, so a merge costs what its segments hold.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "index/manifest.h"
#include "scipis_engine.h"

namespace scipis {

// Merges begin once an indexer's tail tier holds this many segments; a
// segment is in the tail tier while it is at most kTierRatio times the
// size of the segments after it: sizes fall geometrically from the oldest
// segment to the newest, so an indexer keeps about log_kTierRatio of its
// growth in segments, and a byte is rewritten about that many times.
constexpr size_t kTierWidth = 2;
constexpr uint64_t kTierRatio = 8;
// A merge also reaches back to the first segment from which on tombstoned
// documents and appended files' linked documents are half or more.
constexpr uint64_t kGarbageShareDenominator = 2;
// A merge a refresh runs on its own rewrites at most this many bytes of
// segments: it holds the collection's lock, and the next refresh waits for
// it. scipis_compact merges whatever is left.
constexpr uint64_t kMaxAutoMergeBytes = 8u << 20;
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

// Where each indexer's merge starts (an index into its segments, in flush
// order), or SIZE_MAX for none. all: every segment of an indexer that has
// more than one, or any tombstoned or chained document; else the tail
// tier: the last segments, each at most kTierRatio times the size of those
// after it and less than half the largest, when there are kTierWidth or
// more and together at most max_bytes (kMaxAutoMergeBytes for an indexer
// of more than kSmallMergeSegments segments). A merge never starts inside a
// document a flush cut.
std::vector<size_t> plan_merges(const Manifest& m, bool all, uint64_t max_bytes = kMaxAutoMergeBytes);

struct CompactState {
  bool all = false;
  uint64_t max_bytes = kMaxAutoMergeBytes;  // of a merge that is not all
  Manifest current;
  std::atomic<bool> stop{false};
  uint64_t segments_merged = 0, docs_dropped = 0, chains_folded = 0;
};

}  // namespace scipis

struct scipis_build;
// The coordinator's part (engine thread) and the commit (caller's thread).
void compact_run(scipis_build* b);
void compact_commit(scipis_build* b, scipis_build_stats* stats);
