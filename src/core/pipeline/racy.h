// Racy files (as git's racy index entries): a file written again within
// one tick of the file system's clock after it was read keeps its size,
// mtime and ctime, so a refresh that trusts them would miss the change.
// Such a file's record is racy: the next refresh reads it again whatever
// its attributes say.
#pragma once

#include <algorithm>
#include <cstdint>

#include "index/path_index.h"

namespace scipis {

// A write's timestamps come from the kernel's coarse clock (a tick: at
// most 10 ms) cut to the file system's granularity (nanoseconds on ext4,
// XFS, Btrfs, tmpfs). Twice the coarsest tick.
constexpr int64_t kRacyTickNs = 20 * 1000 * 1000;
// Tests widen it to make a file surely racy.
int64_t racy_tick_ns();
void set_racy_tick_ns(int64_t ns);
// Timestamps of whole seconds come from a file system that keeps no
// more (FAT keeps 2 s): any write within these seconds may look alike.
constexpr int64_t kRacyCoarseNs = int64_t{3} * 1000 * 1000 * 1000;

// Whether a file with attributes a, whose bytes are read from read_ns on
// (CLOCK_REALTIME, taken after its fstat), is racy: a write after the read
// would give it a ctime past a's only when a's is older than one tick
// (or whole second) before the read began.
inline bool read_racy(const FileAttrs& a, int64_t read_ns) {
  const bool whole_seconds = a.ctime_ns % 1000000000 == 0 && a.mtime_ns % 1000000000 == 0;
  return a.ctime_ns >= read_ns - std::max(racy_tick_ns(), whole_seconds ? kRacyCoarseNs : 0);
}

}  // namespace scipis
