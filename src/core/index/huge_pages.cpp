#include "index/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace scipis {

namespace {
size_t mapped_size(size_t bytes) { return (bytes + kHugePage - 1) & ~(kHugePage - 1); }
}  // namespace

void* huge_alloc(size_t bytes) {
  if (bytes < kHugePage) return ::operator new(bytes);
  const size_t size = mapped_size(bytes);
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
  (void)::madvise(start, size, MADV_HUGEPAGE);
  return start;
}

void huge_free(void* p, size_t bytes) {
  if (!p) return;
  if (bytes < kHugePage) {
    ::operator delete(p);
    return;
  }
  ::munmap(p, mapped_size(bytes));
}

}  // namespace scipis
