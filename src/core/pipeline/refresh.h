// Refreshing a collection (the SCIPIS paper's incremental updates): the
// files the index holds are compared by path, inode, size, mtime and ctime
// with what the walk finds; new and changed files are indexed into new
// segments appended to the indexers' own, the old versions of changed
// files and the files gone are tombstoned (index/deletes.h), and the new
// generation refers to the old segments where they are.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/chains.h"
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
  uint64_t tokens;  // its chain's when it ends one
  uint32_t indexer;
  bool racy;  // recorded too close to its read: read it again
  uint64_t tail;  // FileAttrs::tail
  int64_t chain;  // its chain's members in the catalog, or -1
  DocId root;     // its chain's root, or itself
};

// Files whose recorded ctime is within this of the start of the build
// that read them may have been written again within one tick of the file
// system's coarse clock, keeping every attribute: they are read again.
// (A refresh judges each file by its own read: pipeline/racy.h.)
constexpr int64_t kRacyNs = 100 * 1000 * 1000;
// RefreshCatalog::needs_read's *to_read when it did not stat the file.
constexpr uint64_t kUnknownToRead = UINT64_MAX;
// Racy documents a refresh read, and those a compaction merged that were
// racy in their own segments (merged ones have no run start): read again
// by the next refresh.
// Tombstone file format (index/deletes.h).
inline const char* kRacyFile = "racy";

class RefreshCatalog {
 public:
  // The live files of c whose path lies in scope (every one when empty);
  // those of racy (by indexer, ascending seqs) are read again.
  void load(Collection& c, const std::vector<std::string>& scope,
            const std::atomic<bool>& stop, const DeadSeqs& racy);
  // For the crawlers: a regular file found at path (name in directory
  // dirfd). False when the index holds it as it is now (or it vanished):
  // nothing to read. True when it must be read: new, or changed (its old
  // record is then tombstoned).
  // *append is set (to the file's entry plus one) when it has the same
  // inode, grew and is large enough that reading only what it appended
  // may pay (pipeline/append.h): the reader decides, by resolve_append().
  // *to_read, when the file was stat'ed (it is held) and must be read: its
  // size, or what it grew by when *append is set.
  bool needs_read(const std::string& path, int dirfd, const char* name, bool via_symlink,
                  uint32_t* append, uint64_t* to_read);
  // Set before load: the files are also found by their directory.
  bool by_dir = false;
  // A directory the walk does not list: its files are as the index holds
  // them. False (nothing done) when one of them is racy: list it.
  bool keep_dir(const std::string& path);
  uint64_t dirs_kept() const { return dirs_kept_.load(); }
  uint64_t files_checked() const { return checked_.load(); }
  size_t size() const { return files_.size(); }
  const KnownFile& file(uint32_t i) const { return files_[i]; }
  // The reader found entry i appended to (its old end unchanged) or not.
  void resolve_append(uint32_t i, bool appended);
  // After the walk: every held file neither unchanged nor appended to.
  template <typename F>
  void for_each_gone(F&& f) const {
    for (size_t i = 0; i < files_.size(); i++) {
      const uint8_t st = state_[i].load(std::memory_order_relaxed);
      if (st != kSame && st != kAppended) f(files_[i]);
    }
  }
  // A gone file's documents: its chain's members, or itself.
  template <typename F>
  void for_each_member(const KnownFile& k, F&& f) const {
    if (k.chain < 0) return f(DocId{k.indexer, k.seq});
    for (const DocId& d : members_[static_cast<size_t>(k.chain)]) f(d);
  }
  uint64_t added() const { return added_.load(); }
  uint64_t changed() const { return changed_.load(); }
  uint64_t appended() const { return appended_.load(); }

 private:
  static constexpr uint8_t kUnseen = 0, kSame = 1, kChanged = 2, kAppended = 3;
  absl::flat_hash_map<PathKey, uint32_t> index_;
  std::vector<KnownFile> files_;
  std::vector<std::vector<DocId>> members_;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  std::atomic<uint64_t> added_{0}, changed_{0}, appended_{0}, dirs_kept_{0}, checked_{0};
  struct DirFiles {
    std::vector<uint32_t> files;
    bool racy = false;
  };
  absl::flat_hash_map<PathKey, DirFiles> dirs_;
};

// Whether path is scope_path or lies under it.
bool path_in_scope(std::string_view path, const std::string& scope_path);
// Byte order with '/' below every other byte: a path's descendants follow
// it (the order refresh scopes are kept in).
bool scope_less(std::string_view a, std::string_view b);

}  // namespace scipis
