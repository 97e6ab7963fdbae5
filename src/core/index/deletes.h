// A generation's tombstones: the documents of its segments that a refresh
// found deleted or replaced. Searches, lookups and listings pass over them
// and N, df and avgdl leave them out; a compaction drops them for good.
// File `deleted` in the generation: a header (count: entries; aux: the
// encoding), then the entries, ascending by (indexer, seq), no repeats.
// kDeletesDeltas (written): per indexer with any, varint indexer, varint
// n, then n varints: its first seq, then each seq less the one before
// (a watcher's tombstones are dense: about a byte each, where 12 bytes
// each made the list megabytes that every refresh wrote and every search
// handle opened read). kDeletesFixed (read): per entry u32 indexer, u64
// seq. The racy list (pipeline/refresh.h) has the same format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scipis {

inline const char* kDeletesFile = "deleted";
inline constexpr char kMagicDeletes[] = "SCIPISDL";
inline constexpr uint32_t kDeletesFixed = 0, kDeletesDeltas = 1;

// By indexer: the dead seqs, ascending.
using DeadSeqs = std::vector<std::vector<uint64_t>>;

std::string encode_deletes(const DeadSeqs& dead);
// Checks the file whole: header, checksum, order and that every seq is
// below its indexer's documents (docs[i]); a corruption error otherwise.
DeadSeqs decode_deletes(const std::string& path, const std::string& bytes,
                        const std::vector<uint64_t>& docs);
uint64_t count_dead(const DeadSeqs& dead);

}  // namespace scipis
