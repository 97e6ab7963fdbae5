// Counts the terms of one read block before they reach the TF-IDF index.
// A block of log lines repeats few distinct terms many times (the
// templates), so a small table that stays in cache absorbs the repeats and
// the large index sees each distinct term once per block, with its count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "index/tokenizer.h"
#include "util/bytes.h"

namespace scipis {

class BlockCounter {
 public:
  // 2^bits slots; drain when full() (half of them used).
  explicit BlockCounter(int bits = 14)
      : mask_((size_t{1} << bits) - 1),
        limit_(size_t{1} << (bits - 1)),
        slots_(new Slot[size_t{1} << bits]()),
        used_(new uint32_t[size_t{1} << (bits - 1)]) {}

  // Counts the token at base+off of n bytes (n <= 255); prefix, tail and
  // hash as in BlockToken (short_token_hash: the slot index takes its low
  // bits, the tag its high ones). A token longer than 16 bytes keeps its
  // hash where a shorter one keeps its last word: that hash is token_hash
  // of its bytes, which the drain hands on instead of hashing them again
  // (an id of a source tree is often longer).
  __attribute__((always_inline)) void add(const char* base, uint32_t off, size_t n,
                                          uint64_t prefix, uint64_t tail, uint64_t hash) {
    if (__builtin_expect(n > 16, 0)) tail = hash;
    // The tag keeps hash bits the slot index does not use, and the length;
    // with the prefix it identifies a token of up to 8 bytes (the prefix is
    // zero-padded), so most repeats read one 16-byte slot and nothing else.
    const uint32_t tag = (static_cast<uint32_t>(hash >> 32) & ~0xffu) | static_cast<uint32_t>(n);
    size_t i = hash & mask_;
    while (true) {
      Slot& s = slots_[i];
      if (s.tag == tag && s.prefix == prefix) {
        if (__builtin_expect(n <= 8, 1) || same_rest(base, i, off, n, tail)) {
          s.count++;
          return;
        }
      } else if (s.tag == 0) {
        s = Slot{prefix, tail, tag, 1, off, 0};
        used_[used_n_++] = static_cast<uint32_t>(i);
        return;
      }
      i = (i + 1) & mask_;
    }
  }
  // Counts the tokens t[0..nt) of the block at base (tokenize_block's),
  // calling drain() whenever the counter is full; each token's slot is
  // prefetched a few tokens before its add. Always inlined into the
  // caller's loop: token_bench measured both a separately compiled loop
  // and one over local copies of the fields slower.
  template <typename Drain>
  __attribute__((always_inline)) void add_tokens(const char* base, const BlockToken* t, size_t nt,
                                                 Drain&& drain) {
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
  bool full() const { return used_n_ >= limit_; }
  bool empty() const { return used_n_ == 0; }

  // Calls f(p, n, prefix, tail, hash, count) for every distinct term
  // counted since the last drain, in first-seen order, then forgets them;
  // tail is the last word of a term of 9 to 16 bytes (else 0), hash its
  // token_hash.
  template <typename F>
  void drain(const char* base, F&& f) {
    // The index's adds between two drains push the counter out of the
    // core's cache: its slots are loaded a few terms ahead.
    constexpr size_t kAhead = 8;
    for (size_t k = 0; k < used_n_ && k < kAhead; k++) prefetch_slot(used_[k]);
    for (size_t k = 0; k < used_n_; k++) {
      if (k + kAhead < used_n_) prefetch_slot(used_[k + kAhead]);
      const uint32_t i = used_[k];
      Slot& s = slots_[i];
      const size_t n = s.tag & 0xffu;
      // (Up to 16 bytes, token_hash reads no byte of the term.)
      const bool whole = n <= 16;
      f(base + s.off, n, s.prefix, whole ? s.tail : 0,
        whole ? token_hash(base + s.off, n, s.prefix, s.tail) : s.tail, s.count);
      s.tag = 0;
    }
    used_n_ = 0;
  }

 private:
  void prefetch_slot(uint32_t i) const {
    __builtin_prefetch(&slots_[i]);
  }
  // A repeat of a token of up to 16 bytes touches its slot only, half a
  // cache line (the last word and offset in arrays of their own cost a
  // second line per repeat of a longer token: 1.5% of the token path on the
  // Linux tree, bench/results/2026-11-30-s58).
  struct Slot {
    uint64_t prefix;
    uint64_t tail;
    uint32_t tag;  // 0: empty
    uint32_t count;
    uint32_t off;
    uint32_t pad;
  };
  static_assert(sizeof(Slot) == 32, "two slots a cache line");
  // Slot i holds the n-byte token at base+off when n > 8 too: equal last
  // words (for n > 16, equal hashes), and for n > 16 equal bytes after
  // the first word.
  bool same_rest(const char* base, size_t i, uint32_t off, size_t n, uint64_t tail) const {
    return slots_[i].tail == tail && (n <= 16 || same_tail(base + slots_[i].off, base + off, n));
  }

  size_t mask_;
  size_t limit_;  // full() at this many distinct terms
  size_t used_n_ = 0;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<uint32_t[]> used_;      // slots in first-seen order
};

}  // namespace scipis
