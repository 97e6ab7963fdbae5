// What a walk saw of each directory (inode, mtime, ctime), so that a later
// refresh may skip a directory that has not changed since: its entries are
// the same, so are its subdirectories, and its files are taken to be as
// the index holds them (plocate's and GUFI's rescans; a file rewritten in
// place changes no directory, which is why this is an option).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace scipis {

// Beside the manifest in a generation: the directories of the last walk of
// the whole tree.
inline const char* kDirsFile = "DIRS";

struct DirRecord {
  uint64_t ino = 0;  // 0: list it next time (unreadable, or changed as it was read)
  int64_t mtime_ns = 0, ctime_ns = 0;
};

// What the crawl rules were: records of other rules are not used.
uint64_t crawl_rules_id(const std::string& root, const std::vector<std::string>& include,
                        const std::vector<std::string>& exclude, bool follow_symlinks);

// A generation's records, read back.
class DirRecords {
 public:
  // False (and nothing loaded) when missing, damaged or of other rules.
  bool load(const std::string& path, uint64_t rules_id);
  // The same from the file's bytes (a journal's list), path naming them.
  bool load_bytes(const std::string& path, const std::string& bytes, uint64_t rules_id);
  // The record of a directory whose stat is st, if it has not changed.
  const DirRecord* unchanged(const std::string& path, const struct stat& st) const;
  // Its subdirectories' names when it was walked, in name order.
  const std::vector<std::string>& children(const std::string& path) const;

 private:
  absl::flat_hash_map<std::string, DirRecord> dirs_;
  absl::flat_hash_map<std::string, std::vector<std::string>> children_;
  std::vector<std::string> none_;
};

// Collects a walk's records (its crawlers add from their threads).
class DirRecorder {
 public:
  // A directory listed now, with the stat taken before its listing; one
  // changed within the file system's clock tick of now is recorded as to
  // be listed again.
  void listed(const std::string& path, const struct stat& st, int64_t now_ns);
  // One the walk could not list (it is tried again next time).
  void unlisted(const std::string& path);
  // One skipped: its record carried over.
  void kept(const std::string& path, const DirRecord& r);
  std::string encode(uint64_t rules_id);

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, DirRecord>> dirs_;
};

}  // namespace scipis
