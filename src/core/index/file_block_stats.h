// Per-block statistics of a file data file (segment_format.h): the least
// and greatest of each record field a metadata query filters on, so that a
// query reads only the blocks that can hold a match (the block index idea
// applied to the catalog). Layout, kBlockStatBytes each, little-endian:
//   u64 size min, max; i64 mtime_ns min, max; i64 ctime_ns min, max;
//   u32 uid min, max; u32 gid min, max;
//   path low fence: u8 length (bit 7: cut), kPathFence bytes (zero padded);
//   path high fence: the same.
// The low fence is the least path cut to kPathFence bytes (a lower bound
// either way); the high fence is the greatest path, and when cut, every
// path of the block is at most it followed by anything.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace scipis {

struct DocInfo;

constexpr size_t kPathFence = 31;
constexpr size_t kBlockStatBytes = 64 + 2 * (1 + kPathFence);

struct FileBlockStats {
  uint64_t size_min = UINT64_MAX, size_max = 0;
  int64_t mtime_min = INT64_MAX, mtime_max = INT64_MIN;
  int64_t ctime_min = INT64_MAX, ctime_max = INT64_MIN;
  uint32_t uid_min = UINT32_MAX, uid_max = 0, gid_min = UINT32_MAX, gid_max = 0;
  std::string_view path_lo, path_hi;  // fences, cut to kPathFence bytes
  bool hi_cut = false;

  // Widens the ranges to hold d (paths are fenced by the writer).
  void add(const DocInfo& d);
  // Writes kBlockStatBytes at out; lo and hi are the block's least and
  // greatest paths, whole.
  void write(char* out, std::string_view lo, std::string_view hi) const;
  // Reads kBlockStatBytes at p (views into p); false when a fence's length
  // is out of range.
  bool read(const unsigned char* p);
  // Whether some path of the block may lie in [from, to) (to empty: no
  // upper end).
  bool paths_may_meet(std::string_view from, std::string_view to) const;
};

// A path range [from, to) (to_set false: no upper end) over paths that all
// begin with prefix, as the range of what follows the prefix ([sfrom,
// sto), sto empty: no upper end); false when no such path lies in it.
bool range_after_prefix(std::string_view prefix, std::string_view from, std::string_view to,
                        bool to_set, std::string_view& sfrom, std::string_view& sto);

}  // namespace scipis
