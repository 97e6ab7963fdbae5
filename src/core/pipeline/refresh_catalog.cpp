#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <mutex>

#include "index/file_block_stats.h"
#include "index/segment_format.h"
#include "pipeline/append.h"
#include "pipeline/kept_docs.h"
#include "pipeline/refresh.h"
#include "query/collection.h"
#include "util/engine_thread.h"
#include "util/error.h"
#include "util/time_ns.h"

namespace scipis {

bool path_in_scope(std::string_view path, const std::string& scope_path) {
  if (scope_path == "/") return true;
  return path.size() >= scope_path.size() && path.compare(0, scope_path.size(), scope_path) == 0 &&
         (path.size() == scope_path.size() || path[scope_path.size()] == '/');
}

bool scope_less(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; i++) {
    const unsigned char x = a[i] == '/' ? 0 : static_cast<unsigned char>(a[i]);
    const unsigned char y = b[i] == '/' ? 0 : static_cast<unsigned char>(b[i]);
    if (x != y) return x < y;
  }
  return a.size() < b.size();
}

namespace {

// Whether path lies in a path of scope, as refresh_scope leaves it (in
// scope_less order, none inside another): in that order a path's
// ancestors come before it and any other scope path between them would
// be inside one, so the one to check is the last at or before it. A
// catch-up names thousands.
bool in_scope(std::string_view path, const std::vector<std::string>& scope) {
  const auto it = std::upper_bound(scope.begin(), scope.end(), path,
                                   [](std::string_view p, const std::string& q) { return scope_less(p, q); });
  return it != scope.begin() && path_in_scope(path, *std::prev(it));
}

// Ranges [from, to) of what follows a segment's common prefix (to empty:
// no upper end), put in order and those that meet merged, so that a
// block's fences are checked against one range, found by its low fence.
struct Range {
  std::string_view from, to;
};
void merge_ranges(std::vector<Range>& ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.from < b.from; });
  size_t n = 0;
  for (const Range& r : ranges) {
    if (n > 0 && (ranges[n - 1].to.empty() || r.from <= ranges[n - 1].to)) {
      Range& last = ranges[n - 1];
      if (!last.to.empty() && (r.to.empty() || r.to > last.to)) last.to = r.to;
    } else {
      ranges[n++] = r;
    }
  }
  ranges.resize(n);
}
bool block_meets(const FileBlockStats& st, const std::vector<Range>& ranges) {
  // The first range not wholly below the low fence; those after it begin
  // later still.
  const auto it = std::partition_point(ranges.begin(), ranges.end(), [&](const Range& r) {
    return !r.to.empty() && st.path_lo >= r.to;
  });
  return it != ranges.end() && st.paths_may_meet(it->from, it->to);
}

// A live record of a segment, as the catalog will hold it.
struct Found {
  KnownFile k;
  PathKey key, dir;  // dir: with by_dir only
  int64_t chain;     // into c.chains(), or -1
};

// Segment s's live records whose path lies in scope (upper: each scope
// path's end of range).
void load_segment(Collection& c, SegmentState& s, const std::vector<std::string>& scope,
                  const std::vector<std::string>& upper, const DeadSeqs& racy_docs, bool by_dir,
                  std::vector<Found>& out) {
  const auto& listed = racy_docs[s.ref.indexer];
  auto add = [&](const DocInfo& d, std::string_view p, uint64_t rec) {
    if (c.hidden(s, rec)) return;
    if (!scope.empty() && !in_scope(p, scope)) return;
    const uint64_t seq = s.seq0 + rec;
    const bool racy = (s.ref.run_started_ns != INT64_MIN && d.ctime_ns >= s.ref.run_started_ns - kRacyNs) ||
                      std::binary_search(listed.begin(), listed.end(), seq);
    Found f{KnownFile{d.size, d.mtime_ns, d.ctime_ns, d.ino, seq, d.tokens, s.ref.indexer, racy, d.tail,
                      -1, DocId{s.ref.indexer, seq}},
            path_key(p), PathKey{}, c.chain_of(s.ref.indexer, seq)};
    if (f.chain >= 0) {
      const Chain& chain = c.chains()[static_cast<size_t>(f.chain)];
      f.k.tokens = chain.tokens;
      f.k.root = chain.members.front();
    }
    if (by_dir) {
      const size_t slash = p.rfind('/');
      f.dir = path_key(slash == 0 ? std::string_view("/") : p.substr(0, slash));
    }
    out.push_back(f);
  };
  // A small segment this process's refresh committed (the watcher's, a
  // job worker's): its records are kept, not read back from the journal.
  if (const auto kept = kept_docs(c.dir(), c.manifest(), s.ref); kept && kept->count() == s.ref.docs) {
    const size_t had = out.size();
    bool in_order = true;
    uint64_t rec = 0;
    kept->each([&](const std::vector<std::string>&, const AbsorbDocs::Doc& d) {
      in_order = in_order && d.info.seq == s.seq0 + rec;
      if (in_order) add(d.info, d.path, rec++);
    });
    if (in_order) return;
    out.resize(had);  // not the segment's records after all: read them
  }
  DocInfo docs[kFileBlock];
  size_t ends[kFileBlock];
  std::string paths;
  // A refresh of named paths reads a few blocks of each segment; one of
  // the whole tree reads every segment whole, checking it again.
  const auto known = scope.empty() ? nullptr : kept_file_data(c.dir(), c.manifest(), s.ref);
  const FileBlocks& fb = c.files(s, known);
  if (!known && !scope.empty()) keep_file_data(c.dir(), c.manifest(), s.ref, s.file_map);
  // The scope as ranges of what follows the segment's common prefix:
  // blocks whose path fences meet none are not decoded.
  std::vector<Range> ranges;
  for (size_t i = 0; i < scope.size(); i++) {
    Range r;
    if (range_after_prefix(fb.common_prefix(), scope[i], upper[i], !upper[i].empty(), r.from, r.to))
      ranges.push_back(r);
  }
  if (!scope.empty() && ranges.empty()) return;
  merge_ranges(ranges);
  if (scope.empty()) out.reserve(s.ref.docs);
  for (size_t b = 0; b < fb.blocks(); b++) {
    if (!scope.empty() && !block_meets(fb.stats(b), ranges)) continue;
    paths.clear();
    fb.decode(b, docs, paths, ends);
    for (size_t i = 0, at = 0; i < fb.records_in(b); at = ends[i++])
      add(docs[i], std::string_view(paths).substr(at, ends[i] - at), b * kFileBlock + i);
  }
}

}  // namespace

void RefreshCatalog::load(Collection& c, const std::vector<std::string>& scope,
                          const std::atomic<bool>& stop, const DeadSeqs& racy_docs) {
  // A scope path p holds paths in [p, p + "0"): '0' follows '/'.
  std::vector<std::string> upper;
  for (const auto& p : scope) upper.push_back(p == "/" ? std::string() : p + "0");
  std::vector<SegmentState*> segs;
  for (SegmentState& s : c.segments())
    if (s.ref.docs > 0) segs.push_back(&s);
  // Segments are decoded apart, two at a time for a whole tree (alone,
  // this thread took a quarter to a third of an unchanged tree's refresh),
  // then put in order: a later record of a path replaces an earlier one.
  std::vector<std::vector<Found>> found(segs.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto work = [&] {
    for (size_t j; !failed.load() && !stop.load() && (j = next.fetch_add(1)) < segs.size();) {
      try {
        load_segment(c, *segs[j], scope, upper, racy_docs, by_dir, found[j]);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  EngineThread helper;
  if (scope.empty() && segs.size() > 1) helper = EngineThread(work);
  work();
  helper.join();
  if (error) std::rethrow_exception(error);
  if (stop.load()) fail(SCIPIS_E_CANCELED, "refresh was cancelled");
  size_t records = 0;
  for (const auto& f : found) records += f.size();
  files_.reserve(records);
  index_.reserve(records);
  for (auto& seg : found) {
    for (Found& f : seg) {
      if (f.chain >= 0) {
        f.k.chain = static_cast<int64_t>(members_.size());
        members_.push_back(c.chains()[static_cast<size_t>(f.chain)].members);
      }
      files_.push_back(f.k);
      const uint32_t at = static_cast<uint32_t>(files_.size() - 1);
      if (by_dir) {
        DirFiles& d = dirs_[f.dir];
        d.files.push_back(at);
        d.racy = d.racy || f.k.racy;
      }
      // Two live records of one path (never written so): the earlier
      // one is never found, so it is tombstoned.
      index_[f.key] = at;
    }
    std::vector<Found>().swap(seg);
  }
  state_ = std::make_unique<std::atomic<uint8_t>[]>(files_.size());
  for (size_t i = 0; i < files_.size(); i++) state_[i].store(kUnseen, std::memory_order_relaxed);
}

bool RefreshCatalog::needs_read(const std::string& path, int dirfd, const char* name,
                                bool via_symlink, uint32_t* append, uint64_t* to_read) {
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
    *to_read = sx.stx_size - k.size;
    return true;
  }
  *to_read = sx.stx_size;
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
