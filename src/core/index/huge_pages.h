// Memory for the in-memory index on 2 MiB pages where the kernel offers
// transparent huge pages: term lookups touch entries spread over hundreds of
// MiB, and with 4 KiB pages nearly every one of them also misses the TLB.
#pragma once

#include <cstddef>
#include <new>

namespace scipis {

constexpr size_t kHugePage = size_t{2} << 20;

// Regions of at least kHugePage bytes are mapped on their own and advised
// as huge pages; smaller ones come from operator new.
// zeroed, when given, says whether the memory is known to hold zeros (a
// fresh mapping, whose pages the kernel zeroes only when first touched).
// huge false: a large region of which little will be touched, mapped on
// 4 KiB pages (a first touch would clear 2 MiB).
void* huge_alloc(size_t bytes, bool* zeroed = nullptr, bool huge = true);
void huge_free(void* p, size_t bytes);
// A region of huge_alloc's bytes, moved into one of new_bytes (advised
// as huge pages, as huge_alloc's default): what it holds, and the pages
// touched so far, come along (mremap); the pages of a fresh region would
// be faulted in and cleared by the kernel again. Small regions and
// shrinking get a fresh region, contents not kept.
void* huge_grow(void* p, size_t bytes, size_t new_bytes);
// Lets the calling thread keep a few regions it frees for its next
// allocations of the same size (pipeline threads, which end with the
// build); other threads give freed regions back to the kernel at once, so
// that a backend holds no index memory between builds.
void keep_freed_huge_pages();
// Gives back what the calling thread kept and stops keeping: the end of
// a task on a thread that lives on (util/engine_thread.h).
void drop_freed_huge_pages();

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(huge_alloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { huge_free(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

}  // namespace scipis
