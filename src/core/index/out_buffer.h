// A byte buffer that is never zero-filled: a flush writes hundreds of MiB
// of segment bytes, and every page the kernel hands out is already zeroed
// once. Large buffers come from huge_alloc (2 MiB pages); the caller sizes
// the buffer for the worst case, writes, then trims to what it wrote, and
// may hand the buffer on for reuse.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "index/huge_pages.h"

namespace scipis {

class OutBuffer {
 public:
  OutBuffer() = default;
  explicit OutBuffer(size_t capacity) { reset(capacity); }
  OutBuffer(OutBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        cap_(std::exchange(o.cap_, 0)) {}
  OutBuffer& operator=(OutBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      size_ = std::exchange(o.size_, 0);
      cap_ = std::exchange(o.cap_, 0);
    }
    return *this;
  }
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;
  ~OutBuffer() { release(); }

  // Drops the content; room for capacity bytes, uninitialised. Memory
  // large enough is kept: a recycled buffer costs no page faults, and
  // holds no more than it held before (a smaller buffer would be a fresh
  // mapping, cleared again). A large buffer is mapped half again as large
  // as asked, and grows by moving its pages into the larger mapping: a
  // flush's buffers are touched once per build, not again at each flush
  // that asks more than the last (about 60 MB of the 300 MB a build of
  // the Linux tree touched; a first touch cost 0.12 to 2.2 ms per MiB on
  // the VM of bench/results/2026-11-30-s52-pages, page-cost.txt).
  void reset(size_t capacity) {
    if (p_ && cap_ >= capacity) {
      size_ = capacity;
      return;
    }
    const size_t want = capacity ? capacity : 1;
    const size_t cap = want >= kHugePage ? want + want / 2 : want;
    if (p_ && cap_ >= kHugePage && cap >= kHugePage) {
      p_ = static_cast<char*>(huge_grow(p_, cap_, cap));
    } else {
      release();
      p_ = static_cast<char*>(huge_alloc(cap));
    }
    cap_ = cap;
    size_ = capacity;
  }
  char* data() { return p_; }
  const char* data() const { return p_; }
  size_t size() const { return size_; }
  // Keeps the first n bytes (n <= size()).
  void trim(size_t n) { size_ = n; }
  std::string_view view() const { return {p_, size_}; }

 private:
  void release() {
    if (p_) huge_free(p_, cap_);
    p_ = nullptr;
    size_ = cap_ = 0;
  }
  char* p_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
};

}  // namespace scipis
