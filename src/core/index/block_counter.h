// Counts the terms of one read block before they reach the TF-IDF index.
// A block of log lines repeats few distinct terms many times (the
// templates), so a small table that stays in cache absorbs the repeats and
// the large index sees each distinct term once per block, with its count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "index/tokenizer.h"
#include "util/bytes.h"

namespace scipis {

class BlockCounter {
 public:
  // 2^bits slots; drain when full() (half of them used).
  explicit BlockCounter(int bits = 14)
      : slots_(size_t{1} << bits), offsets_(size_t{1} << bits), mask_((size_t{1} << bits) - 1) {
    used_.reserve(slots_.size() / 2);
  }

  // Counts the token at base+off of n bytes (n <= 255); prefix, tail and
  // hash as in BlockToken (short_token_hash: the slot index takes its low
  // bits, the tag its high ones).
  void add(const char* base, uint32_t off, size_t n, uint64_t prefix, uint64_t tail,
           uint64_t hash) {
    // The tag keeps hash bits the slot index does not use, and the length.
    const uint32_t tag = (static_cast<uint32_t>(hash >> 32) & ~0xffu) | static_cast<uint32_t>(n);
    size_t i = hash & mask_;
    while (true) {
      Slot& s = slots_[i];
      // First and last words equal: the bytes between are compared only
      // for tokens longer than 16.
      if (s.tag == tag && s.prefix == prefix && s.tail == tail &&
          (n <= 16 || std::memcmp(base + offsets_[i] + 8, base + off + 8, n - 16) == 0)) {
        s.count++;
        return;
      }
      if (s.tag == 0) {
        s = Slot{prefix, tail, tag, 1};
        offsets_[i] = off;
        used_.push_back(static_cast<uint32_t>(i));
        return;
      }
      i = (i + 1) & mask_;
    }
  }
  // Counts the tokens t[0..nt) of the block at base (tokenize_block's),
  // calling drain() whenever the counter is full; each token's slot is
  // prefetched a few tokens before its add. Always inlined: in the
  // caller's loop, where the counter is a local object, the compiler keeps
  // its fields in registers across the counts (as a call, with
  // -fno-strict-aliasing, it reloads them after every count; token_bench
  // measured that markedly slower).
  template <typename Drain>
  __attribute__((always_inline)) void add_tokens(const char* base, const BlockToken* t, size_t nt, Drain&& drain) {
    constexpr size_t kAhead = 8;
    for (size_t i = 0; i < nt && i < kAhead; i++) prefetch(t[i].hash);
    for (size_t i = 0; i < nt; i++) {
      if (i + kAhead < nt) prefetch(t[i + kAhead].hash);
      add(base, t[i].off, t[i].len, t[i].prefix, t[i].tail, t[i].hash);
      if (full()) drain();
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
      f(base + offsets_[i], static_cast<size_t>(s.tag & 0xffu), s.prefix, s.count);
      s.tag = 0;
    }
    used_.clear();
  }

 private:
  // A repeat of a token touches its slot only.
  struct Slot {
    uint64_t prefix;
    uint64_t tail;
    uint32_t tag;  // 0: empty
    uint32_t count;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> offsets_;  // of each term's first occurrence in the block
  std::vector<uint32_t> used_;
  size_t mask_;
};

}  // namespace scipis
