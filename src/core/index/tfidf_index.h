// One indexer's in-memory TF-IDF index: term -> postings. One memory
// region holds an open-addressing table whose 32-byte slots are the terms
// themselves (first word, counts, append cache) and, after it, an arena
// for the TF arrays of `index_depth` entries and the bytes of terms longer
// than 8; nothing moves until the index is cleared.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "index/distinct_terms.h"
#include "index/out_buffer.h"
#include "index/path_index.h"
#include "index/term_dict.h"
#include "index/term_slot.h"
#include "index/tf_meta_writer.h"
#include "util/bytes.h"
#include "util/mem_account.h"

namespace scipis {

// Completed postings of earlier documents: cap (seq, tf) pairs follow, a
// posting's two words side by side, so that the flush reads both with one
// miss. A term keeps only its last array; each links back to the one before
// (arena units, 0: none). A term's first array holds index_depth postings
// and each next one twice its last, up to kMaxChunkCap: a frequent term's
// chain stays a few links long, so a flush does not wait on hundreds of
// dependent loads per term, while a rare term wastes no more than before.
struct TfChunk {
  uint32_t prev;
  uint16_t fill;
  uint16_t cap;
};
constexpr int kMaxChunkCap = 128;


// A token about to be counted: its bytes, first word and hash, and the
// slot add_batch's stages found for it ahead of time.
struct TermKey {
  const char* p;
  size_t n;
  uint64_t prefix;
  uint64_t hash;
  TermSlot* found = nullptr;
  uint64_t epoch = 0;  // of the index when found was looked up
  // The last word (load_u64(p + n - 8)) when n > 8, else 0: a term of up
  // to 16 bytes is compared with a slot's without reading p.
  uint64_t tail = 0;
  static TermKey of(std::string_view t) {
    const uint64_t pre = token_prefix(t.data(), t.size());
    const uint64_t tail = t.size() > 8 ? load_u64(t.data() + t.size() - 8) : 0;
    return {t.data(), t.size(), pre, token_hash(t.data(), t.size(), pre, tail), nullptr, 0, tail};
  }
};

class TfIdfIndex {
 public:
  // Callers ask full() at least this often (in adds); the region keeps
  // room for that many adds past the budget, so no add can run out.
  static constexpr uint32_t kAddsPerFullCheck = 32;

  // sketch, when given, sees the hash of every term new to this index.
  // Budgets above kMaxBudget are used as kMaxBudget (32-bit arena units).
  // most_terms, when known (a merge: the sum of its inputs' terms), caps
  // the table at what that many terms need and leaves the rest of the
  // budget to the arena: the kernel clears every page of a table, which
  // the keys' hashes touch at random, but only the arena pages used.
  TfIdfIndex(uint64_t budget, int depth, DistinctTerms* sketch = nullptr, size_t most_terms = 0);
  ~TfIdfIndex();
  TfIdfIndex(const TfIdfIndex&) = delete;
  TfIdfIndex& operator=(const TfIdfIndex&) = delete;
  static constexpr uint64_t kMaxBudget = uint64_t{32} << 30;

  // Counts count occurrences of a term in document seq. Documents arrive
  // in ascending seq; a term seen again in the same document hits the
  // append cache and only adds to its count.
  void add(const TermKey& k, uint64_t seq, uint32_t count = 1) {
    // What find saw in this epoch stands: slots never move or change terms
    // until the index is cleared.
    TermSlot* e = k.epoch == epoch_ && k.found ? k.found : lookup(k, tag_of(k));
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
  // two stages, kAhead keys apart, before its add, so that the cache
  // misses of many keys overlap: its home slot's line and the next are
  // prefetched (a probe runs on past the home slot's line); the table is
  // searched and the TF array a new posting would go to is prefetched. A
  // flush in after_each makes what the stages found for later keys stale;
  // the epoch tells add to look again. (A cache of recent terms' slots
  // checked first, as this had, cost more than the probes it saved.)
  template <typename F>
  void add_batch(TermKey* keys, const uint32_t* counts, size_t n, uint64_t seq,
                 F&& after_each) {
    if (spent_) used_spent();
    constexpr size_t kAhead = 16;
    for (size_t i = 0; i < n + 2 * kAhead; i++) {
      if (i < n) {
        const TermSlot* h = &slots_[home(keys[i].hash)];
        __builtin_prefetch(h);
        __builtin_prefetch(reinterpret_cast<const char*>(h) + 64);
      }
      if (i >= kAhead && i - kAhead < n) find(keys[i - kAhead]);
      if (i >= 2 * kAhead) {
        add(keys[i - 2 * kAhead], seq, counts[i - 2 * kAhead]);
        after_each();
      }
    }
  }
  // True when the index holds 90% of its budget, its table is three
  // quarters full, or either would be within kAddsPerFullCheck adds.
  bool full() const;
  // Past frac of what full() allows: a resumable build flushes between
  // files from here, so that few segments end inside a file.
  bool nearly_full(double frac) const;
  bool empty() const { return terms_ == 0; }
  size_t memory() const;
  size_t terms() const { return terms_; }
  // Serialises into a TF data file and split_factor metadata files; the
  // buffers' memory, when given, is reused. docs, when given, knows the
  // lengths of the finished documents, which bound the blocks' scores.
  // The index is spent: with one split its sort works in the table's
  // memory, read by then. Only clear() makes it usable again.
  void serialise(int split_factor, OutBuffer& data, std::vector<OutBuffer>& metas,
                 const PathIndex* docs = nullptr);
  // With budget (0: keep it), the index holds that much from now on: a
  // build that starts small (a refresh) grows its table as it flushes,
  // instead of clearing pages of a large one for a few terms.
  void clear(uint64_t budget = 0);

  // Upper bounds, from the options alone, of what an index holds (its
  // region and sort scratch) and of the bytes one flush's
  // buffers reserve; serialise checks its reservations against the latter.
  static size_t held_bound(uint64_t budget, int depth);
  static size_t flush_bound(uint64_t budget, int depth, int split_factor);

 private:
  // add_batch's search, ahead of the add.
  void find(TermKey& k) const {
    k.epoch = epoch_;
    k.found = nullptr;
    const uint32_t tag = tag_of(k);
    for (size_t i = home(k.hash);; i = next(i)) {
      TermSlot& s = slots_[i];
      if (!s.tag) return;
      if (matches(s, tag, k)) {
        k.found = &s;
        break;
      }
    }
    if (k.found->tail) __builtin_prefetch(unit(k.found->tail));
  }

  static uint32_t tag_of(const TermKey& k) {
    return (static_cast<uint32_t>(k.hash) & ~0xffu) | static_cast<uint32_t>(k.n);
  }
  // The table takes its position from the hash's high bits (any size, no
  // modulo), the tag from its low ones.
  size_t home(uint64_t h) const {
    return static_cast<size_t>((static_cast<unsigned __int128>(h) * cap_) >> 64);
  }
  size_t next(size_t i) const { return i + 1 == cap_ ? 0 : i + 1; }
  bool matches(const TermSlot& s, uint32_t tag, const TermKey& k) const {
    return s.tag == tag && s.prefix == k.prefix &&
           (k.n <= 8 || (k.n <= 16 ? load_u64(static_cast<const char*>(unit(s.bytes)) + k.n - 8) == k.tail
                                   : same_tail(static_cast<const char*>(unit(s.bytes)), k.p, k.n)));
  }
  const char* term_bytes(const TermSlot& s) const {
    return s.len() <= 8 ? reinterpret_cast<const char*>(&s.prefix)
                        : static_cast<const char*>(unit(s.bytes));
  }
  void* unit(uint32_t u) const { return arena_ + size_t{u} * kUnit; }
  TfChunk* chunk(uint32_t u) const { return static_cast<TfChunk*>(unit(u)); }
  static uint32_t* pairs(TfChunk* c) { return reinterpret_cast<uint32_t*>(c + 1); }
  static const uint32_t* pairs(const TfChunk* c) { return reinterpret_cast<const uint32_t*>(c + 1); }
  uint32_t alloc(size_t bytes);
  TermSlot* lookup(const TermKey& k, uint32_t tag);
  // The term's posting so far goes to its last TF array (a new one when
  // that is full), and rel's begins. Inline: nearly every add starts one.
  void start_document(TermSlot* e, uint32_t rel, uint32_t count) {
    if (e->cur_tf) {
      TfChunk* c = e->tail ? chunk(e->tail) : nullptr;
      if (!c || c->fill == c->cap) c = new_chunk(e);
      uint32_t* s = pairs(c) + 2 * c->fill++;
      s[0] = e->cur_seq;
      s[1] = e->cur_tf;
    }
    e->cur_seq = rel;
    e->cur_tf = count;
    e->df++;
    postings_++;
    if (rel > last_rel_) last_rel_ = rel;
  }
  // A TF array after the term's last, twice its size (up to max_cap_).
  TfChunk* new_chunk(TermSlot* e);
  void layout(double arena_per_term);
  // A term's dictionary hash and slot number; for serialise's sort, its
  // first word and where its bytes are (see gathered_).
  struct KeyIndex {
    uint64_t key;
    uint64_t value;
  };
  // A term's counts, read from its slot for the flush.
  struct Counts {
    uint32_t df, cur_seq, cur_tf, tail;
  };
  static_assert(sizeof(Counts) == 16, "a split's counts fit the radix scratch");
  // Fills keys with every term in dictionary order; returns their number.
  size_t dictionary_order(KeyIndex* keys) const;
  bool huge_region() const;
  // Sorts n keys by key, stably, with tmp_keys_ (room for n) as scratch.
  void radix_sort(KeyIndex* keys, size_t n) const;
  [[noreturn]] static void used_spent();
  void sort_ties(KeyIndex* first, KeyIndex* last, size_t word, const uint8_t* lens) const;

  static constexpr size_t kUnit = 8;  // arena offsets count 8-byte units

  uint64_t budget_;
  int depth_;
  size_t most_terms_;
  DistinctTerms* sketch_;
  uint16_t max_cap_;  // of a TF array: the larger of depth and kMaxChunkCap
  // The region: the table, then the arena up to region_bytes_.
  char* region_ = nullptr;
  size_t region_bytes_ = 0;
  bool zeroed_ = false;  // region_ holds only zeros (not yet laid out)
  TermSlot* slots_ = nullptr;
  size_t cap_ = 0;    // table slots
  size_t limit_ = 0;  // terms the table takes before it counts as full
  size_t terms_ = 0;
  char* arena_ = nullptr;
  size_t arena_used_ = 0, arena_cap_ = 0;  // bytes; cap_ excludes the headroom
  // Bumped by clear(): a TermKey resolved before a flush is not trusted.
  uint64_t epoch_ = 1;
  uint64_t postings_ = 0;
  uint64_t term_bytes_ = 0;  // of every term held
  uint32_t last_rel_ = 0;
  uint64_t base_seq_ = UINT64_MAX;  // seqs stored relative to the first
  // Sort scratch of serialise with more than one split, kept from one
  // flush to the next. (With one, the table's memory holds the keys and
  // the radix sort's copy: a build touches 12 MB less per indexer.)
  OutBuffer sort_keys_;
  mutable KeyIndex* tmp_keys_ = nullptr;
  bool spent_ = false;  // serialised, not yet cleared
  // One term's postings, gathered for its posting region.
  mutable std::vector<uint64_t, mem::Accounted<uint64_t>> term_seqs_;
  mutable std::vector<uint32_t, mem::Accounted<uint32_t>> term_tfs_;
  // The radix sort's copy of the keys, then a split's counts (more than
  // one split).
  OutBuffer radix_tmp_;
  // Every term's counts and length, read from the table in one pass in
  // slot order before the sort, whose keys then hold a term's place here
  // (low 32 bits) and the arena unit of its bytes (high 32): a tie is
  // broken without loading the term's slot, at random, before its bytes.
  mutable OutBuffer gathered_;
  // Groups, hot terms and dictionary entries, coded into the metas.
  mutable TfMetaWriter meta_;
};

}  // namespace scipis
