// Byte ranges of a mapped, immutable file whose crc a reader has checked,
// remembered so that a frequent term's regions are checked once per
// mapping, not once per query (as a segment's dictionary chunks and file
// blocks are). Direct-mapped by address: a range pushed out is checked
// again when next read, never trusted unchecked.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scipis {

class VerifiedBytes {
 public:
  bool has(const char* p, size_t n) const {
    const Slot& s = slots_[slot_of(p)];
    return s.p == p && s.n == n;
  }
  void add(const char* p, size_t n) { slots_[slot_of(p)] = Slot{p, n}; }

 private:
  static constexpr size_t kSlots = 512;
  static size_t slot_of(const char* p) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    return static_cast<size_t>((a ^ (a >> 9) ^ (a >> 18)) % kSlots);
  }
  struct Slot {
    const char* p = nullptr;
    size_t n = 0;
  };
  Slot slots_[kSlots];
};

}  // namespace scipis
