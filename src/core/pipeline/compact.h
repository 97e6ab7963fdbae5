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
// Segment j of an indexer, or the one before it while it begins inside a
// document a flush cut.
size_t first_uncut(const Manifest& m, uint32_t indexer, size_t j);

// Where each indexer's merge starts (an index into its segments, in flush
// order), or SIZE_MAX for none. all: every segment of an indexer that has
// more than one, or any tombstoned or chained document; else the tail
// tier: the last segments, each at most kTierRatio times the size of those
// after it and less than half the largest, when there are kTierWidth or
// more. A merge never starts inside a
// document a flush cut.
std::vector<size_t> plan_merges(const Manifest& m, bool all);

struct CompactState {
  bool all = false;
  Manifest current;
  std::atomic<bool> stop{false};
  uint64_t segments_merged = 0, docs_dropped = 0, chains_folded = 0;
};

}  // namespace scipis

struct scipis_build;
// The coordinator's part (engine thread) and the commit (caller's thread).
void compact_run(scipis_build* b);
void compact_commit(scipis_build* b, scipis_build_stats* stats);
