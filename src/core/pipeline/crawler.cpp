#include "pipeline/crawler.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "util/time_ns.h"

namespace scipis {

bool glob_matches(const std::string& pattern, const std::string& rel,
                  const std::string& name) {
  const std::string& subject = pattern.find('/') == std::string::npos ? name : rel;
  return fnmatch(pattern.c_str(), subject.c_str(), 0) == 0;
}

bool Crawler::excluded(const std::string& rel, const std::string& name) const {
  for (const auto& p : rules_.exclude)
    if (glob_matches(p, rel, name)) return true;
  return false;
}

bool Crawler::included(const std::string& rel, const std::string& name) const {
  if (rules_.include.empty()) return true;
  for (const auto& p : rules_.include)
    if (glob_matches(p, rel, name)) return true;
  return false;
}

CrawledDir::~CrawledDir() {
  if (fd >= 0) ::close(fd);
}

std::optional<DirWork> CrawlWork::take(const std::atomic<bool>& stop,
                                        const std::atomic<bool>& paused) {
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    if (ended_ || stop.load(std::memory_order_relaxed) || paused.load(std::memory_order_relaxed)) {
      ended_ = true;
      cv_.notify_all();
      return std::nullopt;
    }
    if (!stack_.empty()) {
      DirWork w = std::move(stack_.back());
      stack_.pop_back();
      busy_++;
      return w;
    }
    if (busy_ == 0) {
      ended_ = true;
      cv_.notify_all();
      return std::nullopt;
    }
    // Another crawler's directory may still yield subdirectories; the
    // timeout bounds how late a stop is seen.
    cv_.wait_for(lk, std::chrono::milliseconds(50));
  }
}

void CrawlWork::finish(std::vector<DirWork>& subdirs) {
  std::lock_guard<std::mutex> lk(mu_);
  // Reversed, so that the stack hands them out in name order.
  for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack_.push_back(std::move(*it));
  subdirs.clear();
  busy_--;
  cv_.notify_all();
}

bool CrawlWork::first_visit(dev_t dev, ino_t ino) {
  std::lock_guard<std::mutex> lk(mu_);
  return seen_.insert({dev, ino}).second;
}

void CrawlWork::end() {
  std::lock_guard<std::mutex> lk(mu_);
  ended_ = true;
  cv_.notify_all();
}

namespace {

// A directory's entries: names in one buffer (each followed by '\0'), with
// the type readdir reported, so that most entries need no stat.
struct Listing {
  struct Entry {
    uint32_t off, len;
    unsigned char type;  // DT_*
  };
  std::string names;
  std::vector<Entry> entries;
  std::string_view name(const Entry& e) const { return {names.data() + e.off, e.len}; }
};

// Opens a directory (kept open in fd for the readers' openat) and stats it.
bool open_dir(const std::string& path, bool follow, struct stat& st, int& fd) {
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  fd = ::open(path.c_str(), flags);
  if (fd < 0) return false;
  return ::fstat(fd, &st) == 0;
}

// Reads an open directory's entries, sorted by name so that a crawl is
// repeatable. getdents64 on the directory's own descriptor: opendir's
// duplicate descriptor, its stat and flag checks were three more system
// calls per directory.
bool read_entries(int fd, Listing& out) {
  alignas(8) char buf[32 << 10];
  while (true) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) break;
    for (long at = 0; at < n;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
      at += e->d_reclen;
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      const size_t len = std::strlen(e->d_name);
      out.entries.push_back({static_cast<uint32_t>(out.names.size()), static_cast<uint32_t>(len),
                             e->d_type});
      out.names.append(e->d_name, len + 1);
    }
  }
  std::sort(out.entries.begin(), out.entries.end(),
            [&](const Listing::Entry& a, const Listing::Entry& b) { return out.name(a) < out.name(b); });
  return true;
}

}  // namespace

bool Crawler::send(FileBatch& batch) {
  if (rules_.largest_first)
    std::stable_sort(batch.files.begin(), batch.files.end(),
                     [](const FileBatch::Entry& a, const FileBatch::Entry& b) { return a.size > b.size; });
  batch.node = node_;
  return out_.push(std::move(batch));
}

void Crawler::run(CrawlWork& work, std::atomic<uint64_t>& skipped) {
  const bool globs = !rules_.include.empty() || !rules_.exclude.empty();
  const bool sizes = found_.count_bytes || rules_.largest_first;
  Listing listing;
  std::vector<DirWork> subdirs;
  while (auto taken = work.take(stop_, found_.paused)) {
    DirWork w = std::move(*taken);
    listing.names.clear();
    listing.entries.clear();
    subdirs.clear();
    auto dir = std::make_shared<CrawledDir>();
    struct stat dst;
    // The root is followed even if it is a symlink: the user named it.
    if (!w.only.empty()) {
      // One named file: its directory is not listed (nor marked visited).
      dir->fd = ::open(w.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir->fd < 0) {
        work.finish(subdirs);
        continue;
      }
      listing.entries.push_back({0, static_cast<uint32_t>(w.only.size()), DT_UNKNOWN});
      listing.names.append(w.only.c_str(), w.only.size() + 1);
    } else if (!open_dir(w.path, rules_.follow_symlinks || w.root, dst, dir->fd)) {
      if (rules_.record) rules_.record->unlisted(w.path);
      skipped++;
      work.finish(subdirs);
      continue;
    } else if (!work.first_visit(dst.st_dev, dst.st_ino)) {  // a loop
      work.finish(subdirs);
      continue;
    } else if (const DirRecord* same = rules_.dirs ? rules_.dirs->unchanged(w.path, dst) : nullptr;
               same && rules_.known->keep_dir(w.path)) {
      // Unchanged since the last walk: its files are as the index holds
      // them, its subdirectories those it had.
      rules_.record->kept(w.path, *same);
      for (const std::string& n : rules_.dirs->children(w.path))
        subdirs.push_back({w.path + "/" + n, w.rel.empty() ? n : w.rel + "/" + n, false, ""});
      work.finish(subdirs);
      continue;
    } else if (!read_entries(dir->fd, listing)) {
      if (rules_.record) rules_.record->unlisted(w.path);
      skipped++;
      work.finish(subdirs);
      continue;
    } else if (rules_.record) {
      rules_.record->listed(w.path, dst, realtime_ns());
    }
    dir->path = w.path;
    FileBatch batch;
    batch.dir = dir;
    // Each file's path, built in place: no allocation per file.
    std::string full = w.path + "/";
    const size_t dir_len = full.size();
    for (const auto& e : listing.entries) {
      const std::string_view name = listing.name(e);
      const char* cname = name.data();  // '\0'-terminated in listing.names
      // readdir's type saves a stat per entry; the reader checks a file's
      // type again on its open descriptor. File systems that do not report
      // types (DT_UNKNOWN) get the lstat of old.
      unsigned char type = e.type;
      struct stat st;
      if (type == DT_UNKNOWN) {
        if (::fstatat(dir->fd, cname, &st, AT_SYMLINK_NOFOLLOW) != 0) {
          skipped++;  // vanished since the listing, or unreadable
          continue;
        }
        type = IFTODT(st.st_mode);
      }
      bool via_symlink = false;
      if (type == DT_LNK) {
        if (!rules_.follow_symlinks) continue;
        if (::fstatat(dir->fd, cname, &st, 0) != 0) continue;  // dangling
        type = IFTODT(st.st_mode);
        via_symlink = true;
      }
      if (type == DT_DIR) {
        if (!w.only.empty()) continue;
        std::string n(name);
        std::string rel = w.rel.empty() ? n : w.rel + "/" + n;
        if (!excluded(rel, n)) subdirs.push_back({w.path + "/" + n, std::move(rel), false, ""});
      } else if (type == DT_REG) {
        if (globs) {
          std::string n(name);
          std::string rel = w.rel.empty() ? n : w.rel + "/" + n;
          if (excluded(rel, n) || !included(rel, n)) continue;
        }
        uint64_t size = 0;
        if (sizes) {
          struct statx sx;
          if (::statx(dir->fd, cname, AT_STATX_DONT_SYNC | (via_symlink ? 0 : AT_SYMLINK_NOFOLLOW),
                      STATX_SIZE, &sx) == 0)
            size = sx.stx_size;
          if (found_.count_bytes) found_.bytes.fetch_add(size, std::memory_order_relaxed);
        }
        found_.files.fetch_add(1, std::memory_order_relaxed);
        full.resize(dir_len);
        full.append(name);
        if (rules_.done && !rules_.done->empty() && rules_.done->contains(path_key(full))) continue;
        uint32_t append = 0;
        uint64_t to_read = kUnknownToRead;
        if (rules_.known &&
            !rules_.known->needs_read(full, dir->fd, cname, via_symlink, &append, &to_read))
          continue;
        if (found_.count_to_read) {
          if (to_read == kUnknownToRead && !sizes) {
            // A file the index does not hold: not stat'ed yet.
            struct statx sx;
            if (::statx(dir->fd, cname, AT_STATX_DONT_SYNC | (via_symlink ? 0 : AT_SYMLINK_NOFOLLOW),
                        STATX_SIZE, &sx) == 0)
              size = sx.stx_size;
          }
          found_.to_read.fetch_add(to_read == kUnknownToRead ? size : to_read,
                                   std::memory_order_relaxed);
        }
        batch.add(name, via_symlink, size, append);
        if (batch.files.size() == FileBatch::kMaxFiles) {
          if (!send(batch)) {
            work.end();
            return;
          }
          batch = FileBatch();
          batch.dir = dir;
        }
      }
    }
    if (!batch.files.empty() && !send(batch)) {
      work.end();
      return;
    }
    work.finish(subdirs);
  }
}

}  // namespace scipis
