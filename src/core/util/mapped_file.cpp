#include "util/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "util/error.h"
#include "util/fileio.h"

namespace scipis {

namespace {
// Files and ranges of at most this many bytes are read, not mapped.
constexpr uint64_t kReadAtMost = 64u << 10;
}  // namespace

MappedFile::MappedFile(std::string path, int fd, uint64_t from, size_t n)
    : path_(std::move(path)), p_(nullptr), n_(n), read_(new char[n]) {
  pread_exact(fd, read_.get(), n, from, path_);
  p_ = read_.get();
}

std::shared_ptr<const MappedFile> MappedFile::map(const std::string& path, const uint64_t* expect,
                                                  uint64_t off, uint64_t len) {
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) {
    if (errno == ENOENT) fail_corrupt(path, "file is missing");
    fail_io(errno, "open", path);
  }
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) fail_io(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) fail_corrupt(path, "not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (expect && size != *expect)
    fail_corrupt(path, "file size differs from the manifest (truncated or overwritten)");
  if (len) {
    // A range: mapped from the page holding its start.
    if (off > size || len > size - off) fail_corrupt(path, "file is shorter than the manifest says");
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t from = off / page * page;
    if (off + len - from <= kReadAtMost)
      return std::shared_ptr<const MappedFile>(new MappedFile(path, fd.get(), from, static_cast<size_t>(off + len - from)));
    void* p = ::mmap(nullptr, static_cast<size_t>(off + len - from), PROT_READ, MAP_SHARED, fd.get(),
                     static_cast<off_t>(from));
    if (p == MAP_FAILED) fail_io(errno, "mmap", path);
    return std::shared_ptr<const MappedFile>(new MappedFile(path, p, static_cast<size_t>(off + len - from)));
  }
  if (size == 0) return std::shared_ptr<const MappedFile>(new MappedFile(path, nullptr, 0));
  if (size <= kReadAtMost)
    return std::shared_ptr<const MappedFile>(new MappedFile(path, fd.get(), 0, static_cast<size_t>(size)));
  // The descriptor is not needed once mapped.
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) fail_io(errno, "mmap", path);
  return std::shared_ptr<const MappedFile>(new MappedFile(path, p, static_cast<size_t>(size)));
}

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, uint64_t expect_size) {
  return map(path, &expect_size);
}

std::shared_ptr<const MappedFile> MappedFile::open_any(const std::string& path) {
  return map(path, nullptr);
}

std::shared_ptr<const MappedFile> MappedFile::open_range(const std::string& path, uint64_t off,
                                                         uint64_t len, std::string name) {
  auto whole = map(path, nullptr, off, len);
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return slice(std::move(whole), static_cast<size_t>(off % page), static_cast<size_t>(len), std::move(name));
}

std::shared_ptr<const MappedFile> MappedFile::slice(std::shared_ptr<const MappedFile> whole, size_t off,
                                                    size_t len, std::string name) {
  const char* base = static_cast<const char*>(whole->p_);
  auto* m = new MappedFile(std::move(name), len ? base + off : nullptr, len);
  m->whole_ = std::move(whole);
  return std::shared_ptr<const MappedFile>(m);
}

MappedFile::~MappedFile() {
  if (p_ && !whole_ && !read_) ::munmap(const_cast<void*>(p_), n_);
}

}  // namespace scipis
