// The engine's own account of its large allocations (term tables and
// arenas, read buffers, path indexes, flush buffers): what a build holds
// at its worst, measured by the code rather than by the resident size of
// the process, which allocators and sanitizers inflate at will.
#pragma once

#include <cstddef>
#include <memory>

namespace scipis::mem {

void charge(size_t bytes);
void release(size_t bytes);
// Bytes held now, and the most held since the last reset_peak().
size_t held();
size_t peak();
void reset_peak();

// A standard allocator whose allocations are charged to the account.
template <typename T>
struct Accounted {
  using value_type = T;
  Accounted() = default;
  template <typename U>
  Accounted(const Accounted<U>&) {}
  T* allocate(size_t n) {
    T* p = std::allocator<T>().allocate(n);
    charge(n * sizeof(T));
    return p;
  }
  void deallocate(T* p, size_t n) {
    release(n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const Accounted<U>&) const { return true; }
  template <typename U>
  bool operator!=(const Accounted<U>&) const { return false; }
};

}  // namespace scipis::mem

namespace scipis::mem {

// Bytes charged for as long as this lives (or until set again): for
// buffers whose allocator cannot be the account's, such as strings handed
// between threads.
class Charge {
 public:
  Charge() = default;
  Charge(Charge&& o) noexcept : bytes_(o.bytes_) { o.bytes_ = 0; }
  Charge& operator=(Charge&& o) noexcept {
    if (this != &o) {
      set(0);
      bytes_ = o.bytes_;
      o.bytes_ = 0;
    }
    return *this;
  }
  Charge(const Charge&) = delete;
  Charge& operator=(const Charge&) = delete;
  ~Charge() { set(0); }
  void set(size_t bytes) {
    charge(bytes);
    release(bytes_);
    bytes_ = bytes;
  }

 private:
  size_t bytes_ = 0;
};

}  // namespace scipis::mem
