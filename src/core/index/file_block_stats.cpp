#include "index/file_block_stats.h"

#include <algorithm>
#include <cstring>

#include "index/path_index.h"
#include "util/bytes.h"

namespace scipis {

namespace {

char* write_fence(char* w, std::string_view p) {
  const size_t n = std::min(p.size(), kPathFence);
  *w++ = static_cast<char>(n | (p.size() > kPathFence ? 0x80 : 0));
  std::memset(w, 0, kPathFence);
  std::memcpy(w, p.data(), n);
  return w + kPathFence;
}

}  // namespace

void FileBlockStats::add(const DocInfo& d) {
  size_min = std::min(size_min, d.size);
  size_max = std::max(size_max, d.size);
  mtime_min = std::min(mtime_min, d.mtime_ns);
  mtime_max = std::max(mtime_max, d.mtime_ns);
  ctime_min = std::min(ctime_min, d.ctime_ns);
  ctime_max = std::max(ctime_max, d.ctime_ns);
  uid_min = std::min(uid_min, d.uid);
  uid_max = std::max(uid_max, d.uid);
  gid_min = std::min(gid_min, d.gid);
  gid_max = std::max(gid_max, d.gid);
}

void FileBlockStats::write(char* out, std::string_view lo, std::string_view hi) const {
  char* w = write_u64(out, size_min);
  w = write_u64(w, size_max);
  w = write_u64(w, static_cast<uint64_t>(mtime_min));
  w = write_u64(w, static_cast<uint64_t>(mtime_max));
  w = write_u64(w, static_cast<uint64_t>(ctime_min));
  w = write_u64(w, static_cast<uint64_t>(ctime_max));
  w = write_u32(w, uid_min);
  w = write_u32(w, uid_max);
  w = write_u32(w, gid_min);
  w = write_u32(w, gid_max);
  w = write_fence(w, lo);
  write_fence(w, hi);
}

bool FileBlockStats::read(const unsigned char* p) {
  size_min = get_u64(p);
  size_max = get_u64(p + 8);
  mtime_min = static_cast<int64_t>(get_u64(p + 16));
  mtime_max = static_cast<int64_t>(get_u64(p + 24));
  ctime_min = static_cast<int64_t>(get_u64(p + 32));
  ctime_max = static_cast<int64_t>(get_u64(p + 40));
  uid_min = get_u32(p + 48);
  uid_max = get_u32(p + 52);
  gid_min = get_u32(p + 56);
  gid_max = get_u32(p + 60);
  const unsigned char* f = p + 64;
  const size_t lo = f[0] & 0x7f, hi = f[1 + kPathFence] & 0x7f;
  if (lo > kPathFence || hi > kPathFence) return false;
  path_lo = std::string_view(reinterpret_cast<const char*>(f + 1), lo);
  path_hi = std::string_view(reinterpret_cast<const char*>(f + 2 + kPathFence), hi);
  hi_cut = (f[1 + kPathFence] & 0x80) != 0;
  return true;
}

bool FileBlockStats::paths_may_meet(std::string_view from, std::string_view to) const {
  // Every path is below `to` when the low fence is (the fence is at most
  // the least path); none reaches `from` when the high bound is below it.
  if (!to.empty() && path_lo >= to) return false;
  if (hi_cut) return from.substr(0, path_hi.size()) <= path_hi;
  return path_hi >= from;
}

bool range_after_prefix(std::string_view prefix, std::string_view from, std::string_view to,
                        bool to_set, std::string_view& sfrom, std::string_view& sto) {
  const std::string_view head = from.substr(0, prefix.size());
  if (head < prefix.substr(0, head.size())) {
    sfrom = {};  // every path is above from
  } else if (head != prefix.substr(0, head.size())) {
    return false;  // every path is below from
  } else {
    sfrom = from.size() > prefix.size() ? from.substr(prefix.size()) : std::string_view();
  }
  sto = {};
  if (!to_set) return true;
  const std::string_view top = to.substr(0, prefix.size());
  if (top > prefix.substr(0, top.size())) return true;  // every path is below to
  if (top != prefix.substr(0, top.size()) || to.size() <= prefix.size()) return false;
  sto = to.substr(prefix.size());
  return true;
}

}  // namespace scipis
