// One indexer's in-memory TF-IDF index: term -> postings, the postings kept
// in contiguous TF arrays of `index_depth` entries, terms and arrays carved
// from a monotonic arena so that entries never move.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/arena.h"
#include "index/distinct_terms.h"
#include "index/huge_pages.h"
#include "index/out_buffer.h"
#include "util/bytes.h"

namespace scipis {

// Completed postings of earlier documents: seq[depth] then tf[depth]
// follow in the same allocation. A term keeps only its last array; each
// links back to the one before.
struct TfChunk {
  TfChunk* prev;
  uint32_t fill;
  uint32_t pad;
};

// A term's bytes follow its entry in the arena. The first word and the
// length sit in the entry, so most comparisons read one cache line; 32
// bytes, so that entries seldom straddle two.
struct TermEntry {
  uint64_t prefix;  // token_prefix of the term
  uint32_t len;
  uint32_t df;
  // The append cache: the document being counted (relative seq) and its
  // count so far; moved to the TF arrays when another document starts.
  uint32_t cur_seq;
  uint32_t cur_tf;
  TfChunk* tail;
  const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
  std::string_view term() const { return {bytes(), len}; }
};

// A token about to be counted: its bytes, first word and hash, and what
// resolve() found for it ahead of time.
struct TermKey {
  const char* p;
  size_t n;
  uint64_t prefix;
  uint64_t hash;
  TermEntry* found = nullptr;  // the table's entries with this hash
  uint64_t epoch = 0;          // of the index when found was looked up
  static TermKey of(std::string_view t) {
    uint64_t pre = token_prefix(t.data(), t.size());
    return {t.data(), t.size(), pre, token_hash(t.data(), t.size(), pre)};
  }
};

inline bool same_term(const TermEntry* e, const TermKey& k) {
  if (e->prefix != k.prefix || e->len != k.n) return false;
  return k.n <= 8 || same_tail(e->bytes(), k.p, k.n);
}

// The table is keyed by the 64-bit hash itself, so a probe compares keys
// in the table's own memory and never has to wait for an entry.
struct HashIsKey {
  size_t operator()(uint64_t h) const { return h; }
};

class TfIdfIndex {
 public:
  // sketch, when given, sees the hash of every term new to this index.
  TfIdfIndex(uint64_t budget, int depth, DistinctTerms* sketch = nullptr);

  // Counts count occurrences of a term in document seq. Documents arrive
  // in ascending seq; a term seen again in the same document hits the
  // append cache and only adds to its count.
  void add(const TermKey& k, uint64_t seq, uint32_t count = 1) {
    TermEntry* e = k.epoch == epoch_ ? among(k.found, k) : nullptr;
    if (!e) e = lookup(k);
    front_[k.hash & front_mask_] = front_slot(k.hash, e);
    if (base_seq_ == UINT64_MAX) base_seq_ = seq;
    const uint32_t rel = static_cast<uint32_t>(seq - base_seq_);
    if (e->cur_seq == rel) {
      e->cur_tf += count;
      return;
    }
    start_document(e, rel, count);
  }
  // Adds keys[i] with counts[i], all in document seq, calling after_each()
  // after every add (where the caller may flush). Each key goes through
  // four stages, kAhead keys apart, before its add, so that the cache
  // misses of many keys overlap: its front-cache slot is prefetched; the
  // slot is read and, when it names another term, the table memory is
  // prefetched; the table is searched without touching entries; the TF
  // array a new posting would go to is prefetched. Stages 2 and 3 prefetch
  // the entry add reads. A flush in after_each makes what the stages found
  // for later keys stale; the epoch tells add to look again.
  template <typename F>
  void add_batch(TermKey* keys, const uint32_t* counts, size_t n, uint64_t seq,
                 F&& after_each) {
    constexpr size_t kAhead = 10;
    for (size_t i = 0; i < n + 4 * kAhead; i++) {
      if (i < n) prefetch_front(keys[i]);
      if (i >= kAhead && i - kAhead < n) check_front(keys[i - kAhead]);
      if (i >= 2 * kAhead && i - 2 * kAhead < n) find(keys[i - 2 * kAhead]);
      if (i >= 3 * kAhead && i - 3 * kAhead < n) prefetch_tail(keys[i - 3 * kAhead]);
      if (i >= 4 * kAhead) {
        add(keys[i - 4 * kAhead], seq, counts[i - 4 * kAhead]);
        after_each();
      }
    }
  }
  // True when the index holds 90% of its budget, or the next term could
  // grow its tables past it.
  bool full() const;
  bool empty() const { return table_.empty(); }
  size_t memory() const;
  // Serialises into a TF data file and split_factor metadata files; the
  // buffers' memory, when given, is reused.
  void serialise(int split_factor, OutBuffer& data, std::vector<OutBuffer>& metas) const;
  void clear();

 private:
  // The stages of add_batch.
  void prefetch_front(const TermKey& k) const {
    __builtin_prefetch(&front_[k.hash & front_mask_]);
  }
  void check_front(TermKey& k) const {
    const uint64_t f = front_[k.hash & front_mask_];
    k.epoch = epoch_;
    if (f && (f >> kPointerBits) == (k.hash >> kPointerBits)) {
      k.found = reinterpret_cast<TermEntry*>(f & kPointerMask);
      __builtin_prefetch(k.found);
    } else {
      k.found = nullptr;
      table_.prefetch(k.hash);
    }
  }
  void find(TermKey& k) const {
    if (k.found || k.epoch != epoch_) return;
    auto it = table_.find(k.hash);
    if (it == table_.end()) return;
    k.found = it->second;
    __builtin_prefetch(k.found);
  }
  void prefetch_tail(const TermKey& k) const {
    if (k.found && k.epoch == epoch_ && k.found->tail) __builtin_prefetch(k.found->tail);
  }
  // A front-cache slot packs the top 16 bits of the hash (a tag) above a
  // 48-bit user-space pointer: 8 bytes, so that twice as many fit in cache.
  static constexpr int kPointerBits = 48;
  static constexpr uint64_t kPointerMask = (uint64_t{1} << kPointerBits) - 1;
  static uint64_t front_slot(uint64_t hash, const TermEntry* e) {
    const auto p = reinterpret_cast<uintptr_t>(e);
    if (p >> kPointerBits) return 0;  // not cached (no such address today)
    return (hash >> kPointerBits << kPointerBits) | p;
  }
  // e, or the term that shares its 64-bit hash, if one is k's.
  TermEntry* among(TermEntry* e, const TermKey& k) const {
    while (e) {
      if (same_term(e, k)) return e;
      if (same_hash_.empty()) return nullptr;
      auto it = same_hash_.find(e);
      e = it == same_hash_.end() ? nullptr : it->second;
    }
    return nullptr;
  }
  TermEntry* lookup(const TermKey& k);
  TermEntry* make_entry(const TermKey& k);
  void start_document(TermEntry* e, uint32_t rel, uint32_t count);
  uint32_t* seqs(TfChunk* c) const { return reinterpret_cast<uint32_t*>(c + 1); }
  void reserve();

  uint64_t budget_;
  int depth_;
  DistinctTerms* sketch_;
  Arena arena_;
  absl::flat_hash_map<uint64_t, TermEntry*, HashIsKey, std::equal_to<uint64_t>,
                      HugePageAllocator<std::pair<const uint64_t, TermEntry*>>>
      table_;
  std::vector<TermEntry*, HugePageAllocator<TermEntry*>> order_;
  // Chains of distinct terms with equal 64-bit hashes (the table holds
  // the newest of them); almost always empty.
  absl::flat_hash_map<const TermEntry*, TermEntry*> same_hash_;  // as allocated: serialised in this order
  // Direct-mapped by hash: the entries of the document's recent terms,
  // checked before the table (one load instead of a probe).
  std::vector<uint64_t> front_;
  size_t front_mask_;
  // Bumped by clear(): a TermKey resolved before a flush is not trusted.
  uint64_t epoch_ = 1;
  uint64_t postings_ = 0;
  uint64_t term_bytes_ = 0;  // of every term held
  size_t last_terms_ = 0;  // terms held at the last flush
  uint32_t last_rel_ = 0;
  uint64_t base_seq_ = UINT64_MAX;  // seqs stored relative to the first
  // Sort scratch of serialise, kept from one flush to the next.
  mutable OutBuffer sort_keys_, sort_out_;
};

}  // namespace scipis
