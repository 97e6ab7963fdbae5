#include "pipeline/crawler.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"

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

namespace {

struct DirWork {
  std::string path;
  std::string rel;
};

// Reads a directory's entry names, sorted so that a crawl is repeatable.
bool list_dir(const std::string& path, bool follow, std::vector<std::string>& names,
              dev_t& dev, ino_t& ino) {
  int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  dev = st.st_dev;
  ino = st.st_ino;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return true;
}

}  // namespace

void Crawler::run(std::atomic<uint64_t>& skipped) {
  absl::flat_hash_set<std::pair<dev_t, ino_t>> seen_dirs;
  std::vector<DirWork> stack;
  stack.push_back({root_, ""});
  bool first = true;
  while (!stack.empty() && !stop_.load(std::memory_order_relaxed)) {
    DirWork w = std::move(stack.back());
    stack.pop_back();
    std::vector<std::string> names;
    dev_t dev;
    ino_t ino;
    // The root is followed even if it is a symlink: the user named it.
    if (!list_dir(w.path, rules_.follow_symlinks || first, names, dev, ino)) {
      skipped++;
      first = false;
      continue;
    }
    first = false;
    if (!seen_dirs.insert({dev, ino}).second) continue;  // a loop
    std::vector<DirWork> subdirs;
    for (const auto& name : names) {
      std::string path = w.path + "/" + name;
      std::string rel = w.rel.empty() ? name : w.rel + "/" + name;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) {
        skipped++;  // vanished since the listing, or unreadable
        continue;
      }
      bool via_symlink = false;
      if (S_ISLNK(st.st_mode)) {
        if (!rules_.follow_symlinks) continue;
        if (::stat(path.c_str(), &st) != 0) continue;  // dangling
        via_symlink = true;
      }
      if (S_ISDIR(st.st_mode)) {
        if (!excluded(rel, name)) subdirs.push_back({path, rel});
      } else if (S_ISREG(st.st_mode)) {
        if (excluded(rel, name) || !included(rel, name)) continue;
        if (!out_.push(FileTask{path, via_symlink})) return;
      }
    }
    // Reverse so the stack visits subdirectories in name order.
    for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it)
      stack.push_back(std::move(*it));
  }
}

}  // namespace scipis
