// Walks a directory tree and hands regular files to the readers. Symlinks
// are followed only when asked (with loop detection); FIFOs, sockets and
// devices are never opened.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "pipeline/dir_records.h"
#include "pipeline/queue.h"
#include "pipeline/refresh.h"
#include "pipeline/resume.h"

namespace scipis {

// A listed directory, kept open while its files wait to be read: readers
// open them relative to it (openat), so the kernel does not walk the whole
// path again for every file.
struct CrawledDir {
  int fd = -1;
  std::string path;  // the files' paths are path + "/" + name
  CrawledDir() = default;
  CrawledDir(const CrawledDir&) = delete;
  CrawledDir& operator=(const CrawledDir&) = delete;
  ~CrawledDir();
};

struct OpenBatch;

// Regular files of one directory in name order (at most kMaxFiles): one
// queue hand-off for all of them, their names in one buffer.
struct FileBatch {
  static constexpr size_t kMaxFiles = 256;
  struct Entry {
    uint32_t name_off;
    uint32_t name_len;
    bool via_symlink;
    uint64_t size;  // when the walk asked (CrawlRules::largest_first)
    uint32_t append;  // RefreshCatalog::needs_read's
  };
  std::shared_ptr<const CrawledDir> dir;
  int node = 0;  // the NUMA node (of the build's plan) whose crawler listed it
  std::string names;  // each name followed by '\0' (a C string for openat)
  std::vector<Entry> files;
  // No files: an indexer that reads offers the rest of its batch
  // (pipeline/indexer_reads.cpp).
  std::shared_ptr<OpenBatch> share;

  void add(std::string_view name, bool via_symlink, uint64_t size = 0, uint32_t append = 0) {
    files.push_back({static_cast<uint32_t>(names.size()), static_cast<uint32_t>(name.size()),
                     via_symlink, size, append});
    names.append(name);
    names.push_back('\0');
  }
  const char* name(const Entry& e) const { return names.data() + e.name_off; }
};

// A batch an indexer that reads works through a file at a time; indexers
// that would otherwise wait take its files too.
struct OpenBatch {
  explicit OpenBatch(FileBatch b) : batch(std::move(b)) {}
  FileBatch batch;
  std::atomic<size_t> next{0};
  std::atomic<bool> offered{false};  // an offer of it is queued
  // The next file no one took, or null.
  const FileBatch::Entry* take() {
    const size_t i = next.fetch_add(1, std::memory_order_relaxed);
    return i < batch.files.size() ? &batch.files[i] : nullptr;
  }
  bool untaken() const { return next.load(std::memory_order_relaxed) < batch.files.size(); }
};

struct CrawlRules {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool follow_symlinks = false;
  // Each batch handed out largest file first (a statx per file), so that
  // the big files of a directory start early and small ones fill the tail.
  bool largest_first = false;
  // A resumed build's files already indexed (pipeline/resume.h): not read again.
  const absl::flat_hash_set<PathKey>* done = nullptr;
  // A refresh's catalog (pipeline/refresh.h): only new and changed files
  // are handed out.
  RefreshCatalog* known = nullptr;
  // With known: directories unchanged since these records are not listed
  // (pipeline/dir_records.h).
  const DirRecords* dirs = nullptr;
  // Where the walk records the directories it sees.
  DirRecorder* record = nullptr;
};

// What the walk has found so far, for progress reports. Sizes cost a statx
// per file (the readers fstat again on the open descriptor), so they are
// counted only when asked for.
struct CrawlCounters {
  std::atomic<uint64_t> files{0}, bytes{0};
  std::atomic<bool> done{false};
  std::atomic<bool> paused{false};  // Pipeline::pause: hand out no more files
  bool count_bytes = false;
  // With count_to_read: what the files handed out have to be read for (an
  // appended file's growth), as the walk's stat saw them.
  std::atomic<uint64_t> to_read{0};
  bool count_to_read = false;
};

struct DirWork {
  std::string path;
  std::string rel;
  bool root = false;
  // Set: of the directory only this entry, a file (a refresh of given paths).
  std::string only;
};

// The directories still to list, shared by a build's crawlers (one per
// NUMA node): each takes the next one, so a node whose readers keep up
// lists more. With one crawler the walk is depth first in name order, as
// a resume expects nothing else from it.
class CrawlWork {
 public:
  explicit CrawlWork(std::string root) { stack_.push_back({std::move(root), "", true, ""}); }
  // Several starting points, walked in the order given.
  explicit CrawlWork(std::vector<DirWork> starts) {
    for (auto it = starts.rbegin(); it != starts.rend(); ++it) stack_.push_back(std::move(*it));
  }
  // The next directory, or nothing once every one is listed or the walk
  // ended (stop, pause, end()).
  std::optional<DirWork> take(const std::atomic<bool>& stop, const std::atomic<bool>& paused);
  // A taken directory is listed: its subdirectories, in name order.
  void finish(std::vector<DirWork>& subdirs);
  // False for a directory seen before (a loop through symlinks).
  bool first_visit(dev_t dev, ino_t ino);
  void end();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<DirWork> stack_;
  int busy_ = 0;  // directories taken and not finished
  bool ended_ = false;
  absl::flat_hash_set<std::pair<dev_t, ino_t>> seen_;
};

class Crawler {
 public:
  Crawler(CrawlRules rules, BoundedQueue<FileBatch>& out, const std::atomic<bool>& stop,
          CrawlCounters& found, int node = 0)
      : rules_(std::move(rules)), out_(out), stop_(stop), found_(found), node_(node) {}
  // Lists directories from work until it is done; counts entries it could
  // not read in skipped.
  void run(CrawlWork& work, std::atomic<uint64_t>& skipped);

 private:
  bool excluded(const std::string& rel, const std::string& name) const;
  bool included(const std::string& rel, const std::string& name) const;
  bool send(FileBatch& batch);

  CrawlRules rules_;
  BoundedQueue<FileBatch>& out_;
  const std::atomic<bool>& stop_;
  CrawlCounters& found_;
  int node_;
};

// A glob without '/' matches an entry's name; one with '/' matches the path
// relative to the root.
bool glob_matches(const std::string& pattern, const std::string& rel,
                  const std::string& name);

}  // namespace scipis
