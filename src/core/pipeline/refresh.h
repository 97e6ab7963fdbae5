// Refreshing a collection (the SCIPIS paper's incremental updates): the
// files the index holds are compared by path, inode, size, mtime and ctime
// with what the walk finds; new and changed files are indexed into new
// segments appended to the indexers' own, the old versions of changed
// files and the files gone are tombstoned (index/deletes.h), and the new
// generation links the old segments' files instead of copying them.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/deletes.h"
#include "index/manifest.h"
#include "pipeline/resume.h"

namespace scipis {

class Collection;

// A file the index holds, as its record says.
struct KnownFile {
  uint64_t size;
  int64_t mtime_ns, ctime_ns;
  uint64_t ino;
  uint64_t seq;
  uint64_t tokens;
  uint32_t indexer;
  bool racy;  // recorded too close to its read: read it again
};

// Files whose recorded ctime is within this of the start of the run that
// read them may have been written again within one tick of the file
// system's coarse clock, keeping every attribute: they are read again.
constexpr int64_t kRacyNs = 100 * 1000 * 1000;

class RefreshCatalog {
 public:
  // The live files of c whose path lies in scope (every one when empty).
  void load(Collection& c, const std::vector<std::string>& scope,
            const std::atomic<bool>& stop);
  // For the crawlers: a regular file found at path (name in directory
  // dirfd). False when the index holds it as it is now (or it vanished):
  // nothing to read. True when it must be read: new, or changed (its old
  // record is then tombstoned).
  bool needs_read(const std::string& path, int dirfd, const char* name, bool via_symlink);
  size_t size() const { return files_.size(); }
  // After the walk: every held file not found unchanged.
  template <typename F>
  void for_each_gone(F&& f) const {
    for (size_t i = 0; i < files_.size(); i++)
      if (state_[i].load(std::memory_order_relaxed) != kSame) f(files_[i]);
  }
  uint64_t added() const { return added_.load(); }
  uint64_t changed() const { return changed_.load(); }

 private:
  static constexpr uint8_t kUnseen = 0, kSame = 1, kChanged = 2;
  absl::flat_hash_map<PathKey, uint32_t> index_;
  std::vector<KnownFile> files_;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  std::atomic<uint64_t> added_{0}, changed_{0};
};

// Whether path is scope_path or lies under it.
bool path_in_scope(std::string_view path, const std::string& scope_path);

}  // namespace scipis
