// One indexer's in-memory TF-IDF index: term -> postings, the postings kept
// in contiguous TF arrays of `index_depth` entries, terms and arrays carved
// from a monotonic arena so that entries never move.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "index/arena.h"
#include "util/bytes.h"

namespace scipis {

struct TfChunk {
  TfChunk* next;
  uint32_t fill;
  uint32_t pad;
  // seq[depth] then tf[depth] follow in the same allocation.
};

struct TermEntry {
  const char* bytes;
  uint32_t len;
  uint32_t df;
  size_t hash;
  TfChunk* head;
  TfChunk* tail;
  uint64_t last_seq;  // append cache: the document the tail slot counts
  uint32_t* last_tf;
  // The term that followed this one last time. Log lines repeat their
  // templates, so checking it first skips most hash probes.
  TermEntry* next_hint;
  std::string_view term() const { return {bytes, len}; }
};

// A term looked up by its bytes and precomputed hash.
struct TermKey {
  std::string_view s;
  size_t hash;
};

struct TermHash {
  using is_transparent = void;
  size_t operator()(const TermEntry* e) const { return e->hash; }
  size_t operator()(const TermKey& k) const { return k.hash; }
};

struct TermEq {
  using is_transparent = void;
  static bool same(const TermEntry* e, const TermKey& k) {
    return e->hash == k.hash && e->term() == k.s;
  }
  bool operator()(const TermEntry* a, const TermEntry* b) const { return a == b; }
  bool operator()(const TermEntry* a, const TermKey& k) const { return same(a, k); }
  bool operator()(const TermKey& k, const TermEntry* a) const { return same(a, k); }
};

class TfIdfIndex {
 public:
  TfIdfIndex(uint64_t budget, int depth);

  // Counts one occurrence of term in document seq. Documents arrive in
  // ascending seq; a repeated term of the same document hits the append
  // cache and only increments its count.
  void add(std::string_view term, uint64_t seq) { add(term, hash_of(term), seq); }
  // The same with the term's hash computed beforehand (see prefetch).
  void add(std::string_view term, size_t hash, uint64_t seq) {
    TermEntry* e = nullptr;
    TermEntry* h = prev_ ? prev_->next_hint : nullptr;
    if (h && h->len == term.size() && std::memcmp(h->bytes, term.data(), term.size()) == 0) {
      e = h;
    } else {
      e = lookup(term, hash);
      if (prev_) prev_->next_hint = e;
    }
    prev_ = e;
    if (e->last_seq == seq && e->last_tf) {
      ++*e->last_tf;
      return;
    }
    append(e, seq);
  }
  static size_t hash_of(std::string_view term) {
    return token_hash(term.data(), term.size());
  }
  // Starts loading the table memory a later add of this term will touch,
  // so that the cache misses of many lookups overlap.
  void prefetch(std::string_view term, size_t hash) const {
    set_.prefetch(TermKey{term, hash});
  }
  // True when the index holds 90% of its budget, or the next term could
  // grow the table past it.
  bool full() const;
  bool empty() const { return set_.empty(); }
  size_t memory() const;
  // Serialises into a TF data file and split_factor metadata files.
  void serialise(int split_factor, std::string& data,
                 std::vector<std::string>& metas) const;
  void clear();

 private:
  TermEntry* lookup(std::string_view term, size_t hash);
  void append(TermEntry* e, uint64_t seq);
  TfChunk* new_chunk();
  uint32_t* seqs(TfChunk* c) const { return reinterpret_cast<uint32_t*>(c + 1); }

  uint64_t budget_;
  int depth_;
  Arena arena_;
  absl::flat_hash_set<TermEntry*, TermHash, TermEq> set_;
  TermEntry* prev_ = nullptr;
  uint64_t base_seq_ = UINT64_MAX;  // seqs stored relative to the first
};

}  // namespace scipis
