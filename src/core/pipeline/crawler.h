// Walks a directory tree and hands regular files to the readers. Symlinks
// are followed only when asked (with loop detection); FIFOs, sockets and
// devices are never opened.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "pipeline/queue.h"
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

// Regular files of one directory in name order (at most kMaxFiles): one
// queue hand-off for all of them, their names in one buffer.
struct FileBatch {
  static constexpr size_t kMaxFiles = 256;
  struct Entry {
    uint32_t name_off;
    uint32_t name_len;
    bool via_symlink;
  };
  std::shared_ptr<const CrawledDir> dir;
  std::string names;  // each name followed by '\0' (a C string for openat)
  std::vector<Entry> files;

  void add(std::string_view name, bool via_symlink) {
    files.push_back({static_cast<uint32_t>(names.size()), static_cast<uint32_t>(name.size()),
                     via_symlink});
    names.append(name);
    names.push_back('\0');
  }
  const char* name(const Entry& e) const { return names.data() + e.name_off; }
};

struct CrawlRules {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool follow_symlinks = false;
  // A resumed build's files already indexed (pipeline/resume.h): not read again.
  const absl::flat_hash_set<PathKey>* done = nullptr;
};

// What the walk has found so far, for progress reports. Sizes cost a statx
// per file (the readers fstat again on the open descriptor), so they are
// counted only when asked for.
struct CrawlCounters {
  std::atomic<uint64_t> files{0}, bytes{0};
  std::atomic<bool> done{false};
  std::atomic<bool> paused{false};  // Pipeline::pause: hand out no more files
  bool count_bytes = false;
};

class Crawler {
 public:
  Crawler(std::string root, CrawlRules rules, BoundedQueue<FileBatch>& out,
          const std::atomic<bool>& stop, CrawlCounters& found)
      : root_(std::move(root)), rules_(std::move(rules)), out_(out), stop_(stop), found_(found) {}
  // Runs the walk; counts entries it could not read in skipped.
  void run(std::atomic<uint64_t>& skipped);

 private:
  bool excluded(const std::string& rel, const std::string& name) const;
  bool included(const std::string& rel, const std::string& name) const;

  std::string root_;
  CrawlRules rules_;
  BoundedQueue<FileBatch>& out_;
  const std::atomic<bool>& stop_;
  CrawlCounters& found_;
};

// A glob without '/' matches an entry's name; one with '/' matches the path
// relative to the root.
bool glob_matches(const std::string& pattern, const std::string& rel,
                  const std::string& name);

}  // namespace scipis
