// One indexer's in-memory TF-IDF index: term -> postings, the postings kept
// in contiguous TF arrays of `index_depth` entries from a monotonic arena.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/arena.h"

namespace scipis {

struct TfChunk {
  TfChunk* next;
  uint32_t fill;
  uint32_t pad;
  // seq[depth] then tf[depth] follow in the same allocation.
};

struct TermEntry {
  TfChunk* head;
  TfChunk* tail;
  uint64_t last_seq;  // append cache: the document the tail slot counts
  uint32_t* last_tf;
  uint32_t df;
};

class TfIdfIndex {
 public:
  TfIdfIndex(uint64_t budget, int depth);

  // Counts one occurrence of term in document seq. Documents arrive in
  // ascending seq; a repeated term of the same document hits the append
  // cache and only increments its count.
  void add(std::string_view term, uint64_t seq);
  // True when the index holds 90% of its budget, or the next term could
  // grow the table past it.
  bool full() const;
  bool empty() const { return map_.empty(); }
  size_t memory() const;
  // Serialises into a TF data file and split_factor metadata files.
  void serialise(int split_factor, std::string& data,
                 std::vector<std::string>& metas) const;
  void clear();

 private:
  TfChunk* new_chunk();
  uint32_t* seqs(TfChunk* c) const { return reinterpret_cast<uint32_t*>(c + 1); }

  uint64_t budget_;
  int depth_;
  Arena arena_;
  absl::flat_hash_map<std::string_view, TermEntry> map_;
  uint64_t base_seq_ = UINT64_MAX;  // seqs stored relative to the first
};

}  // namespace scipis
