// Monotonic page allocator: bump allocation from pages, released all at
// once after a flush; its bytes count against the index size. Released
// pages are kept for the next flush instead of going back to the kernel,
// which would fault and zero them again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/huge_pages.h"

namespace scipis {

class Arena {
 public:
  explicit Arena(size_t page_size) : page_size_(page_size) {}
  ~Arena() {
    for (const Page& p : pages_) huge_free(p.base, p.size);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* alloc(size_t n, size_t align = 8) {
    size_t at = (used_ + align - 1) & ~(align - 1);
    if (at + n > cap_) {
      next_page(n);
      at = 0;
    }
    used_ = at + n;
    return cur_ + at;
  }

  void reset() {
    // Odd-sized pages (a single huge allocation) are not worth keeping.
    size_t kept = 0;
    for (const Page& p : pages_) {
      if (p.size == page_size_)
        pages_[kept++] = p;
      else
        huge_free(p.base, p.size);
    }
    pages_.resize(kept);
    in_use_ = 0;
    cur_ = nullptr;
    used_ = cap_ = 0;
    bytes_ = 0;
  }
  // Bytes of the pages in use (kept spare pages are not counted: they are
  // fewer than the pages in use at the last flush, which fit the budget).
  size_t bytes() const { return bytes_; }
  size_t page_size() const { return page_size_; }

 private:
  struct Page {
    unsigned char* base;
    size_t size;
  };
  void next_page(size_t n) {
    if (n <= page_size_ && in_use_ < pages_.size() && pages_[in_use_].size == page_size_) {
      cur_ = pages_[in_use_++].base;
      cap_ = page_size_;
    } else {
      const size_t sz = n > page_size_ ? n : page_size_;
      auto* p = static_cast<unsigned char*>(huge_alloc(sz));
      pages_.push_back({p, sz});
      // Keep pages in use in front of the spare ones.
      std::swap(pages_[in_use_], pages_.back());
      in_use_++;
      cur_ = p;
      cap_ = sz;
    }
    bytes_ += cap_;
  }

  size_t page_size_;
  std::vector<Page> pages_;  // [0, in_use_) in use, the rest spare
  size_t in_use_ = 0;
  unsigned char* cur_ = nullptr;
  size_t used_ = 0, cap_ = 0, bytes_ = 0;
};

}  // namespace scipis
