// Small POSIX file helpers; every failure throws an Error naming the path.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

namespace scipis {

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

void mkdir_p(const std::string& path);
// fsync(fd), or nothing once syncing is turned off: the engine's unit
// tests, which never lose power (a killed process keeps the page cache),
// turn it off to spend their time on what they check.
int sync_fd(int fd);
// fdatasync(fd), off as sync_fd is: for overwrites of allocated,
// written blocks, where the file's size and blocks stay as they were.
int sync_data_fd(int fd);
void set_sync_enabled(bool on);
// Writes data to path (created or truncated). Without sync, writeback is
// started and the caller must fsync_file it before relying on it.
void write_file_durable(const std::string& path, std::string_view data,
                        bool sync = true);
void fsync_file(const std::string& path);
// Memory a direct write copies data through when data is not aligned
// (allocated at the first such write, charged to the memory account).
class DirectBounce {
 public:
  static constexpr size_t kBytes = size_t{1} << 20;
  // Of direct writes' memory, offsets and lengths: every device's block
  // and page alignment up to 4Kn.
  static constexpr size_t kAlign = 4096;
  DirectBounce() = default;
  DirectBounce(const DirectBounce&) = delete;
  DirectBounce& operator=(const DirectBounce&) = delete;
  ~DirectBounce();
  char* get();

 private:
  char* p_ = nullptr;
};
// Writes data to path (created or truncated) past the page cache: its
// whole 4 KiB blocks with O_DIRECT (from data itself when it is aligned,
// else through bounce), the last partial block buffered. Where the file
// system or device refuses O_DIRECT, the rest goes buffered. The caller
// must fsync_file it before relying on it.
void write_file_direct(const std::string& path, std::string_view data, DirectBounce& bounce);
// Tests: O_DIRECT refused (EINVAL) at the open (1) or at the first write
// (2), as a file system or device without it refuses; 0: as it comes.
void set_direct_refusal_for_tests(int at);
// The whole of data, at the file's offset or at off.
void write_all(int fd, std::string_view data, const std::string& path);
void pwrite_all(int fd, std::string_view data, uint64_t off, const std::string& path);
// Atomic replace: write a temporary, fsync, rename over path, fsync the dir.
// Without sync, neither fsync (after a crash path may hold either version,
// or nothing), and the temporary is named for the process.
void replace_file_atomic(const std::string& path, const std::string& data, bool sync = true);
void fsync_dir(const std::string& dir);
// Hard-links file a as b, or copies it where the file system has no hard
// links (or refuses one across devices).
void link_or_copy(const std::string& a, const std::string& b);
// Reads a whole file; returns false if it does not exist. st: the
// descriptor's stat, so the file the bytes came from (not the path's now).
bool read_file(const std::string& path, std::string& out, struct stat* st = nullptr);
// Reads exactly len bytes at off, or throws (a short read means damage).
void pread_exact(int fd, void* buf, size_t len, uint64_t off,
                 const std::string& path);
Fd open_read(const std::string& path);
// The names in a directory (not . and ..); none when it is missing.
std::vector<std::string> list_dir(const std::string& path);
// Removes a file tree; missing is fine. With stop, gives up (leaving the
// rest) as soon as *stop is set.
void remove_tree(const std::string& path, const std::atomic<bool>* stop = nullptr);
uint64_t tree_bytes(const std::string& path);
std::string parent_dir(const std::string& path);

}  // namespace scipis
