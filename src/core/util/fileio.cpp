#include "util/fileio.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "util/error.h"
#include "util/mem_account.h"

namespace scipis {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

void mkdir_p(const std::string& path) {
  if (path.empty()) return;
  // Mostly only the last is missing: one call, not one per component.
  if (::mkdir(path.c_str(), 0700) == 0) return;
  if (errno != ENOENT && errno != EEXIST) fail_io(errno, "create directory", path);
  size_t pos = 1;
  while (true) {
    pos = path.find('/', pos);
    std::string part = path.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      fail_io(errno, "create directory", part);
    if (pos == std::string::npos) break;
    pos++;
  }
}

void write_all(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(errno, "write file", path);
    }
    done += static_cast<size_t>(n);
  }
}

void pwrite_all(int fd, std::string_view data, uint64_t off, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(off + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(errno, "write file", path);
    }
    done += static_cast<size_t>(n);
  }
}

namespace {
std::atomic<bool> sync_enabled{true};
}  // namespace

int sync_fd(int fd) { return sync_enabled.load(std::memory_order_relaxed) ? ::fsync(fd) : 0; }
int sync_data_fd(int fd) { return sync_enabled.load(std::memory_order_relaxed) ? ::fdatasync(fd) : 0; }
void set_sync_enabled(bool on) { sync_enabled.store(on); }

void write_file_durable(const std::string& path, std::string_view data,
                        bool sync) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) fail_io(errno, "create file", path);
  write_all(fd.get(), data, path);
  if (sync) {
    if (sync_fd(fd.get()) != 0) fail_io(errno, "fsync file", path);
  } else if (sync_enabled.load(std::memory_order_relaxed)) {
    // Start writeback now so that the fsync at commit finds little to do.
    ::sync_file_range(fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
  }
}

namespace {
std::atomic<int> direct_refusal{0};
}  // namespace

DirectBounce::~DirectBounce() {
  if (!p_) return;
  std::free(p_);
  mem::release(kBytes);
}

char* DirectBounce::get() {
  if (!p_) {
    p_ = static_cast<char*>(std::aligned_alloc(kAlign, kBytes));
    if (!p_) throw std::bad_alloc();
    mem::charge(kBytes);
  }
  return p_;
}

void set_direct_refusal_for_tests(int at) { direct_refusal.store(at); }

void write_file_direct(const std::string& path, std::string_view data, DirectBounce& bounce) {
  constexpr size_t kAlign = DirectBounce::kAlign;
  const int refusal = direct_refusal.load(std::memory_order_relaxed);
  Fd fd(refusal == 1 ? (errno = EINVAL, -1)
                     : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0600));
  if (!fd && errno == EINVAL) return write_file_durable(path, data, false);  // no O_DIRECT here
  if (!fd) fail_io(errno, "create file", path);
  const size_t whole = data.size() & ~(kAlign - 1);
  const bool aligned = (reinterpret_cast<uintptr_t>(data.data()) & (kAlign - 1)) == 0;
  char* const via = !aligned && whole ? bounce.get() : nullptr;
  size_t done = 0;
  while (done < whole) {
    const size_t n = aligned ? whole - done : std::min(DirectBounce::kBytes, whole - done);
    const char* src = data.data() + done;
    if (via) {
      std::memcpy(via, src, n);
      src = via;
    }
    const ssize_t w = refusal == 2 ? (errno = EINVAL, -1) : ::pwrite(fd.get(), src, n, static_cast<off_t>(done));
    if (w < 0 && errno == EINTR) continue;
    // A device with larger blocks refuses the writes: the rest buffered.
    if (w < 0 && errno == EINVAL) break;
    if (w < 0) fail_io(errno, "write file", path);
    done += static_cast<size_t>(w);
    if (done % kAlign) break;  // a short write: what is left is not aligned
  }
  if (done == data.size()) return;
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_DIRECT) != 0) fail_io(errno, "write file", path);
  pwrite_all(fd.get(), data.substr(done), done, path);
  if (sync_enabled.load(std::memory_order_relaxed))
    ::sync_file_range(fd.get(), static_cast<off_t>(done), 0, SYNC_FILE_RANGE_WRITE);
}

void fsync_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) fail_io(errno, "open file", path);
  if (sync_fd(fd.get()) != 0) fail_io(errno, "fsync file", path);
}



void fsync_dir(const std::string& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) fail_io(errno, "open directory", dir);
  if (sync_fd(fd.get()) != 0) fail_io(errno, "fsync directory", dir);
}

void link_or_copy(const std::string& a, const std::string& b) {
  if (::link(a.c_str(), b.c_str()) == 0) return;
  if (errno != EXDEV && errno != EPERM && errno != EMLINK && errno != ENOTSUP)
    fail_io(errno, "link", b);
  std::string bytes;
  if (!read_file(a, bytes)) fail_io(ENOENT, "read", a);
  write_file_durable(b, bytes);
}

std::string parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void replace_file_atomic(const std::string& path, const std::string& data, bool sync) {
  std::string tmp = path + ".tmp";
  if (!sync) tmp += "." + std::to_string(::getpid());
  write_file_durable(tmp, data, sync);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail_io(e, "rename file to", path);
  }
  if (sync) fsync_dir(parent_dir(path));
}

bool read_file(const std::string& path, std::string& out, struct stat* st_out) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return false;
    fail_io(errno, "open file", path);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) fail_io(errno, "stat file", path);
  if (st_out) *st_out = st;
  out.resize(static_cast<size_t>(st.st_size));
  pread_exact(fd.get(), out.data(), out.size(), 0, path);
  return true;
}

void pread_exact(int fd, void* buf, size_t len, uint64_t off,
                 const std::string& path) {
  auto* p = static_cast<char*>(buf);
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, p + done, len - done, static_cast<off_t>(off + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io(errno, "read file", path);
    }
    if (n == 0) fail_corrupt(path, "file is shorter than its index says (truncated)");
    done += static_cast<size_t>(n);
  }
}

Fd open_read(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) fail_corrupt(path, "file is missing");
    fail_io(errno, "open file", path);
  }
  return fd;
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  DIR* d = ::opendir(path.c_str());
  if (!d) {
    if (errno == ENOENT || errno == ENOTDIR) return names;
    fail_io(errno, "open directory", path);
  }
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(d);
  return names;
}

void remove_tree(const std::string& path, const std::atomic<bool>* stop) {
  if (stop && stop->load(std::memory_order_relaxed)) return;
  // Most entries are files: unlinked first, stat'ed only when unlink says
  // it is a directory.
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return;
  if (errno != EISDIR && errno != EPERM) fail_io(errno, "remove file", path);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    fail_io(errno, "stat", path);
  }
  if (!S_ISDIR(st.st_mode)) fail_io(EPERM, "remove file", path);
  for (const auto& n : list_dir(path)) remove_tree(path + "/" + n, stop);
  if (stop && stop->load(std::memory_order_relaxed)) return;
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) fail_io(errno, "remove directory", path);
}

uint64_t tree_bytes(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return static_cast<uint64_t>(st.st_size);
  uint64_t total = 0;
  for (const auto& n : list_dir(path)) total += tree_bytes(path + "/" + n);
  return total;
}

}  // namespace scipis
