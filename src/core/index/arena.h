// Monotonic page allocator: bump allocation from pages, freed all at once
// after a flush; its bytes count against the index size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace scipis {

class Arena {
 public:
  explicit Arena(size_t page_size) : page_size_(page_size) {}

  void* alloc(size_t n, size_t align = 8) {
    size_t at = (used_ + align - 1) & ~(align - 1);
    if (pages_.empty() || at + n > cap_) {
      size_t sz = n > page_size_ ? n : page_size_;
      pages_.emplace_back(new unsigned char[sz]);
      bytes_ += sz;
      cap_ = sz;
      at = 0;
    }
    used_ = at + n;
    return pages_.back().get() + at;
  }

  void reset() {
    pages_.clear();
    used_ = cap_ = 0;
    bytes_ = 0;
  }
  size_t bytes() const { return bytes_; }
  size_t page_size() const { return page_size_; }

 private:
  size_t page_size_;
  std::vector<std::unique_ptr<unsigned char[]>> pages_;
  size_t used_ = 0, cap_ = 0, bytes_ = 0;
};

}  // namespace scipis
