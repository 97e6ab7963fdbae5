// Counts the terms of one read block before they reach the TF-IDF index.
// A block of log lines repeats few distinct terms many times (the
// templates), so a small table that stays in cache absorbs the repeats and
// the large index sees each distinct term once per block, with its count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "util/bytes.h"

namespace scipis {

class BlockCounter {
 public:
  // 2^bits slots; drain when full() (half of them used).
  explicit BlockCounter(int bits = 14)
      : slots_(size_t{1} << bits), counts_(size_t{1} << bits), mask_((size_t{1} << bits) - 1) {
    used_.reserve(slots_.size() / 2);
  }

  // The counter's own hash of a token: one multiply when the first word
  // holds the whole token (most log tokens), token_hash otherwise. The
  // slot index takes its low bits, the tag its high ones.
  static uint64_t hash_of(const char* p, size_t n, uint64_t prefix) {
    if (n <= 8) {
      const uint64_t h = (prefix ^ (static_cast<uint64_t>(n) << 59)) * 0x9E3779B97F4A7C15ull;
      return h ^ (h >> 29);
    }
    return token_hash(p, n, prefix);
  }

  // Counts the token [p, p+n) (n <= 255) of the block starting at base;
  // prefix is its token_prefix, hash its hash_of.
  void add(const char* base, const char* p, size_t n, uint64_t prefix, uint64_t hash) {
    // The tag keeps hash bits the slot index does not use, and the length.
    const uint32_t tag = (static_cast<uint32_t>(hash >> 32) & ~0xffu) | static_cast<uint32_t>(n);
    size_t i = hash & mask_;
    while (true) {
      Slot& s = slots_[i];
      if (s.tag == 0) {
        s = Slot{prefix, tag, static_cast<uint32_t>(p - base)};
        counts_[i] = 1;
        used_.push_back(static_cast<uint32_t>(i));
        return;
      }
      if (s.tag == tag && s.prefix == prefix &&
          (n <= 8 || same_tail(base + s.offset, p, n))) {
        counts_[i]++;
        return;
      }
      i = (i + 1) & mask_;
    }
  }
  // Loads the slot a later add of this hash starts at.
  void prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }
  bool full() const { return used_.size() >= slots_.size() / 2; }
  bool empty() const { return used_.empty(); }

  // Calls f(p, n, prefix, count) for every distinct term counted since the
  // last drain, in first-seen order, then forgets them.
  template <typename F>
  void drain(const char* base, F&& f) {
    for (uint32_t i : used_) {
      Slot& s = slots_[i];
      f(base + s.offset, static_cast<size_t>(s.tag & 0xffu), s.prefix, counts_[i]);
      s.tag = 0;
    }
    used_.clear();
  }

 private:
  struct Slot {
    uint64_t prefix;
    uint32_t tag;     // 0: empty
    uint32_t offset;  // of the term's first occurrence in the block
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> counts_;
  std::vector<uint32_t> used_;
  size_t mask_;
};

}  // namespace scipis
