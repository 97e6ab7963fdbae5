#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "index/file_block_stats.h"
#include "index/segment_format.h"
#include "pipeline/append.h"
#include "pipeline/refresh.h"
#include "query/collection.h"
#include "util/error.h"
#include "util/time_ns.h"

namespace scipis {

bool path_in_scope(std::string_view path, const std::string& scope_path) {
  if (scope_path == "/") return true;
  return path.size() >= scope_path.size() && path.compare(0, scope_path.size(), scope_path) == 0 &&
         (path.size() == scope_path.size() || path[scope_path.size()] == '/');
}

void RefreshCatalog::load(Collection& c, const std::vector<std::string>& scope,
                          const std::atomic<bool>& stop, const DeadSeqs& racy_docs) {
  DocInfo docs[kFileBlock];
  size_t ends[kFileBlock];
  std::string paths;
  // A scope path p holds paths in [p, p + "0"): '0' follows '/'.
  std::vector<std::string> upper;
  for (const auto& p : scope) upper.push_back(p == "/" ? std::string() : p + "0");
  struct Range {
    std::string_view from, to;
  };
  std::vector<Range> ranges;
  // A whole tree's records, sized once: growing showed in its profile.
  if (scope.empty()) {
    size_t records = 0;
    for (SegmentState& s : c.segments()) records += s.ref.docs;
    files_.reserve(records);
    index_.reserve(records);
  }
  for (SegmentState& s : c.segments()) {
    if (s.ref.docs == 0) continue;
    if (stop.load()) fail(SCIPIS_E_CANCELED, "refresh was cancelled");
    const FileBlocks& fb = c.files(s);
    // The scope as ranges of what follows the segment's common prefix:
    // blocks whose path fences meet none are not decoded.
    ranges.clear();
    for (size_t i = 0; i < scope.size(); i++) {
      Range r;
      if (range_after_prefix(fb.common_prefix(), scope[i], upper[i], !upper[i].empty(), r.from, r.to))
        ranges.push_back(r);
    }
    if (!scope.empty() && ranges.empty()) continue;
    for (size_t b = 0; b < fb.blocks(); b++) {
      if (!scope.empty()) {
        const FileBlockStats st = fb.stats(b);
        bool meets = false;
        for (size_t i = 0; i < ranges.size() && !meets; i++)
          meets = st.paths_may_meet(ranges[i].from, ranges[i].to);
        if (!meets) continue;
      }
      paths.clear();
      fb.decode(b, docs, paths, ends);
      for (size_t i = 0, at = 0; i < fb.records_in(b); at = ends[i++]) {
        if (c.hidden(s, b * kFileBlock + i)) continue;
        const std::string_view p = std::string_view(paths).substr(at, ends[i] - at);
        if (!scope.empty()) {
          bool in = false;
          for (const auto& sp : scope) in = in || path_in_scope(p, sp);
          if (!in) continue;
        }
        const DocInfo& d = docs[i];
        const auto& listed = racy_docs[s.ref.indexer];
        const bool racy = (s.ref.run_started_ns != INT64_MIN &&
                           d.ctime_ns >= s.ref.run_started_ns - kRacyNs) ||
                          std::binary_search(listed.begin(), listed.end(), s.seq0 + b * kFileBlock + i);
        const uint64_t seq = s.seq0 + b * kFileBlock + i;
        const int64_t ch = c.chain_of(s.ref.indexer, seq);
        KnownFile k{d.size, d.mtime_ns, d.ctime_ns, d.ino, seq, d.tokens, s.ref.indexer,
                    racy, d.tail, -1, DocId{s.ref.indexer, seq}};
        if (ch >= 0) {
          const Chain& chain = c.chains()[static_cast<size_t>(ch)];
          k.tokens = chain.tokens;
          k.root = chain.members.front();
          k.chain = static_cast<int64_t>(members_.size());
          members_.push_back(chain.members);
        }
        files_.push_back(k);
        if (by_dir) {
          const size_t slash = p.rfind('/');
          DirFiles& d = dirs_[path_key(slash == 0 ? std::string_view("/") : p.substr(0, slash))];
          d.files.push_back(static_cast<uint32_t>(files_.size() - 1));
          d.racy = d.racy || racy;
        }
        // Two live records of one path (never written so): the earlier
        // one is never found, so it is tombstoned.
        index_[path_key(p)] = static_cast<uint32_t>(files_.size() - 1);
      }
    }
  }
  state_ = std::make_unique<std::atomic<uint8_t>[]>(files_.size());
  for (size_t i = 0; i < files_.size(); i++) state_[i].store(kUnseen, std::memory_order_relaxed);
}

bool RefreshCatalog::needs_read(const std::string& path, int dirfd, const char* name,
                                bool via_symlink, uint32_t* append) {
  *append = 0;
  auto it = index_.find(path_key(path));
  if (it == index_.end()) {
    added_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  const KnownFile& k = files_[it->second];
  checked_.fetch_add(1, std::memory_order_relaxed);
  struct statx sx;
  const int flags = AT_STATX_SYNC_AS_STAT | (via_symlink ? 0 : AT_SYMLINK_NOFOLLOW);
  if (::statx(dirfd, name, flags, STATX_SIZE | STATX_MTIME | STATX_CTIME | STATX_INO, &sx) != 0)
    return false;  // vanished: its record is tombstoned
  const struct timespec m{sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec};
  const struct timespec ct{sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec};
  const bool same = !k.racy && sx.stx_size == k.size && timespec_ns(m) == k.mtime_ns &&
                    timespec_ns(ct) == k.ctime_ns && sx.stx_ino == k.ino;
  // A racy file that grew is an append like any other: its size and tail
  // checksum are of the very bytes read (whatever its times say), and the
  // reader checks that old end before it reads on. Under a watcher nearly
  // every log appended to is racy: read whole, they were most of its reads.
  if (!same && k.tail != 0 && sx.stx_ino == k.ino && sx.stx_size > k.size &&
      k.size >= append_min_bytes()) {
    *append = it->second + 1;  // the reader checks its old end
    return true;
  }
  state_[it->second].store(same ? kSame : kChanged, std::memory_order_relaxed);
  if (!same) changed_.fetch_add(1, std::memory_order_relaxed);
  return !same;
}

bool RefreshCatalog::keep_dir(const std::string& path) {
  auto it = dirs_.find(path_key(path));
  if (it == dirs_.end()) {
    dirs_kept_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if (it->second.racy) return false;
  for (uint32_t i : it->second.files) state_[i].store(kSame, std::memory_order_relaxed);
  dirs_kept_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void RefreshCatalog::resolve_append(uint32_t i, bool appended) {
  state_[i].store(appended ? kAppended : kChanged, std::memory_order_relaxed);
  (appended ? appended_ : changed_).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace scipis
