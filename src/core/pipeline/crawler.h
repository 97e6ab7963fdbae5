// Walks a directory tree and hands regular files to the readers. Symlinks
// are followed only when asked (with loop detection); FIFOs, sockets and
// devices are never opened.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/queue.h"

namespace scipis {

struct FileTask {
  std::string path;
  bool via_symlink = false;
};

struct CrawlRules {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool follow_symlinks = false;
};

class Crawler {
 public:
  Crawler(std::string root, CrawlRules rules, BoundedQueue<FileTask>& out,
          const std::atomic<bool>& stop)
      : root_(std::move(root)), rules_(std::move(rules)), out_(out), stop_(stop) {}
  // Runs the walk; counts entries it could not read in skipped.
  void run(std::atomic<uint64_t>& skipped);

 private:
  bool excluded(const std::string& rel, const std::string& name) const;
  bool included(const std::string& rel, const std::string& name) const;

  std::string root_;
  CrawlRules rules_;
  BoundedQueue<FileTask>& out_;
  const std::atomic<bool>& stop_;
};

// A glob without '/' matches an entry's name; one with '/' matches the path
// relative to the root.
bool glob_matches(const std::string& pattern, const std::string& rel,
                  const std::string& name);

}  // namespace scipis
