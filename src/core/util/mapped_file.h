// A segment file mapped read-only: its pages are the page cache's, shared
// by every backend that maps it, and are not copied into any of them.
// Segment files are never changed once the manifest names them (a new
// generation writes new files), so a mapping stays valid while it is held.
// A small file (or range) is read into memory instead: mapping, faulting
// and unmapping it, with a shootdown of every thread's TLB, cost more
// than the copy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace scipis {

class MappedFile {
 public:
  // Maps path; a missing file, or one whose size is not expect_size, is a
  // corruption error naming it.
  static std::shared_ptr<const MappedFile> open(const std::string& path, uint64_t expect_size);
  // Any size (for files whose size no manifest records).
  static std::shared_ptr<const MappedFile> open_any(const std::string& path);
  // Bytes [off, off + len) of the file at path (a part of a file that
  // grows: the rest is not mapped); a file too short for them is a
  // corruption error naming name.
  static std::shared_ptr<const MappedFile> open_range(const std::string& path, uint64_t off,
                                                      uint64_t len, std::string name);
  // Bytes [off, off + len) of whole (which the slice keeps mapped), named
  // name in errors. The range must lie within whole.
  static std::shared_ptr<const MappedFile> slice(std::shared_ptr<const MappedFile> whole, size_t off,
                                                 size_t len, std::string name);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(p_), n_}; }
  const std::string& path() const { return path_; }
  // Its bytes were read into memory (a small file's, or a slice of one):
  // keeping it keeps no file mapped.
  bool in_memory() const { return whole_ ? whole_->in_memory() : read_ != nullptr || n_ == 0; }

 private:
  MappedFile(std::string path, const void* p, size_t n) : path_(std::move(path)), p_(p), n_(n) {}
  // Bytes [from, from + n) of fd read into memory.
  MappedFile(std::string path, int fd, uint64_t from, size_t n);
  static std::shared_ptr<const MappedFile> map(const std::string& path, const uint64_t* expect,
                                               uint64_t off = 0, uint64_t len = 0);
  std::string path_;
  const void* p_;
  size_t n_;
  std::shared_ptr<const MappedFile> whole_;  // a slice's; it maps nothing itself
  std::unique_ptr<char[]> read_;  // a small file's bytes: nothing mapped
};

}  // namespace scipis
