#include "index/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

#include "util/mem_account.h"
#include "util/mem_node.h"

namespace scipis {

namespace {
void unmap(void* p, size_t size) {
  ::munmap(p, size);
  mem::release(size);
}
size_t mapped_size(size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }

// Regions this thread freed, kept for its next allocation of the same
// size: an index flushes and refills its tables many times, and fresh
// mappings would be faulted in and zeroed by the kernel every time.
class Spare {
 public:
  ~Spare() { drop(); }
  void drop() {
    for (Region& r : regions_)
      if (r.base) {
        unmap(r.base, r.size);
        r = Region{};
      }
  }
  void* take(size_t size) {
    for (Region& r : regions_) {
      if (r.base && r.size == size) {
        void* p = r.base;
        r.base = nullptr;
        return p;
      }
    }
    return nullptr;
  }
  bool keep(void* p, size_t size) {
    for (Region& r : regions_) {
      if (!r.base) {
        r = Region{p, size};
        return true;
      }
    }
    return false;
  }

 private:
  struct Region {
    void* base = nullptr;
    size_t size = 0;
  };
  Region regions_[4];
};

thread_local Spare spare;
thread_local bool keep_spares = false;
}  // namespace

void keep_freed_huge_pages() { keep_spares = true; }

void drop_freed_huge_pages() {
  keep_spares = false;
  spare.drop();
}

void* huge_alloc(size_t bytes, bool* zeroed, bool huge) {
  if (zeroed) *zeroed = false;
  if (bytes < kHugePage) {
    void* p = ::operator new(bytes);
    mem::charge(bytes);
    return p;
  }
  const size_t size = mapped_size(bytes);
  if (void* p = spare.take(size)) return p;  // still charged
  if (zeroed) *zeroed = true;  // a fresh anonymous mapping
  // Over-map by one huge page so that the region can start on a boundary.
  void* raw = ::mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<char*>(raw);
  auto* start = reinterpret_cast<char*>(
      (reinterpret_cast<uintptr_t>(base) + kHugePage - 1) & ~(uintptr_t{kHugePage} - 1));
  if (start > base) ::munmap(base, static_cast<size_t>(start - base));
  char* end = start + size;
  if (base + size + kHugePage > end)
    ::munmap(end, static_cast<size_t>(base + size + kHugePage - end));
  // Advice only: where huge pages are off, this fails and 4 KiB pages serve.
  (void)::madvise(start, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  bind_to_thread_node(start, size);
  mem::charge(size);
  return start;
}

void* huge_grow(void* p, size_t bytes, size_t new_bytes) {
  const size_t size = mapped_size(bytes), new_size = mapped_size(new_bytes);
  if (p && bytes >= kHugePage && new_size == size) return p;  // its mapping holds new_bytes
  if (!p || bytes < kHugePage || new_size < size) {
    void* q = huge_alloc(new_bytes);
    huge_free(p, bytes);
    return q;
  }
  void* q = ::mremap(p, size, new_size, MREMAP_MAYMOVE);
  if (q == MAP_FAILED) {
    q = huge_alloc(new_bytes);
    huge_free(p, bytes);
    return q;
  }
  (void)::madvise(q, new_size, MADV_HUGEPAGE);
  bind_to_thread_node(q, new_size);
  mem::charge(new_size - size);
  return q;
}

void huge_free(void* p, size_t bytes) {
  if (!p) return;
  if (bytes < kHugePage) {
    ::operator delete(p);
    mem::release(bytes);
    return;
  }
  if (!keep_spares || !spare.keep(p, mapped_size(bytes))) unmap(p, mapped_size(bytes));
}

}  // namespace scipis
