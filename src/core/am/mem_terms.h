// The term table of a MemIndex: an open-addressing table of 32-byte slots
// that are the terms themselves (first word, length and hash bits, counts)
// and an arena for the postings and the bytes of terms longer than 8. A
// lookup of a known short term reads its slot alone; its hash is computed
// once per token; no term or posting list is a heap allocation of its own
// (a build holds millions: malloc, vector growth and a key compare that
// followed a pointer took a third of CREATE INDEX's time).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "index/term_slot.h"
#include "util/bytes.h"

namespace scipis::am {

class MemTerms {
 public:
  // A token about to be counted: bytes, first word, hash.
  struct Key {
    const char* p;
    uint32_t n;
    uint64_t prefix;
    uint64_t hash;
    static Key of(const char* p, size_t n) {
      const uint64_t pre = token_prefix(p, n);
      return {p, static_cast<uint32_t>(n), pre, token_hash(p, n, pre)};
    }
  };

  // df: the term's rows; cur_seq and cur_tf: its last row and count
  // there, apart from the chunks while the row's tokens still count.
  using Slot = TermSlot;

  MemTerms();
  void prefetch(const Key& k) const { __builtin_prefetch(&slots_[home(k.hash)]); }
  // Where the term's next posting goes, once its slot is in cache.
  void prefetch_postings(const Key& k) const {
    const Slot* s = find(k);
    if (s && s->tail) __builtin_prefetch(unit(s->tail));
  }
  // Counts tf more occurrences of the term in row ord (ords ascend);
  // true when the term is new.
  bool add(const Key& k, uint32_t ord, uint32_t tf);
  const Slot* find(const Key& k) const;
  std::string_view term(const Slot& s) const {
    return {s.len() <= 8 ? reinterpret_cast<const char*>(&s.prefix) : unit(s.bytes), s.len()};
  }
  // A term's postings, ascending.
  void postings(const Slot& s, std::vector<uint32_t>& ords, std::vector<uint32_t>& tfs) const;
  // The terms in ascending byte order (the table does not change after).
  std::vector<const Slot*> sorted() const;
  size_t size() const { return terms_; }
  size_t bytes() const { return cap_ * sizeof(Slot) + arena_bytes_; }
  // The table doubles at 3/4 full while bytes() stays within budget (0:
  // no budget); past it, it fills to 7/8 and is crowded meanwhile (the
  // caller writes it out) and doubles only beyond.
  void set_budget(size_t bytes) { budget_ = bytes; }
  bool crowded() const { return terms_ * 4 > cap_ * 3; }

 private:
  // A chunk of postings: varints (tf, then the gap to the next row) for
  // each posting before the last; it links back to the one before.
  struct Chunk {
    uint32_t prev;
    uint16_t used;
    uint16_t cap;
  };
  static constexpr uint32_t kUnitBits = 20;  // units of 8 bytes per block
  static constexpr uint16_t kMaxChunk = 4096;

  size_t home(uint64_t h) const { return static_cast<size_t>(h >> shift_); }
  static uint32_t tag_of(const Key& k) {
    return (static_cast<uint32_t>(k.hash) & ~0xffu) | (k.n & 0xffu);
  }
  bool matches(const Slot& s, uint32_t tag, const Key& k) const {
    return s.tag == tag && s.prefix == k.prefix &&
           (k.n <= 8 || same_tail(unit(s.bytes), k.p, k.n));
  }
  char* unit(uint32_t u) const {
    return blocks_[u >> kUnitBits].get() + size_t{u & ((1u << kUnitBits) - 1)} * 8;
  }
  uint32_t alloc(size_t bytes);
  void append(Slot& s, uint32_t tf, uint32_t gap);
  void grow();

  std::unique_ptr<Slot[]> slots_;
  size_t cap_ = 0;
  int shift_ = 64;
  size_t terms_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  uint32_t block_units_ = 0;  // of the last block
  uint32_t used_units_ = 0;   // in the last block
  size_t arena_bytes_ = 0;
  size_t budget_ = 0;
  mutable std::vector<const Chunk*> chain_;  // postings' scratch
};

}  // namespace scipis::am
