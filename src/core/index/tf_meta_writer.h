// What a TF segment's splits hold besides their posting regions, gathered
// while the regions are written and coded at the end: the dictionary's
// entries (one set of code tables for every split), the group index, each
// split's hot terms (segment_format.h). A flush of the in-memory index
// (TfIdfIndex::serialise) and a merge of segments (tf_merge.h) both write
// through it, so that the same terms and postings give the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "index/out_buffer.h"
#include "index/term_dict.h"
#include "util/mem_account.h"

namespace scipis {

// The most hot terms of a split of this many terms, and their bytes.
size_t hot_bound(size_t terms);
size_t hot_bytes_bound(size_t terms, size_t term_bytes);
// The most bytes a split's meta file of these terms takes.
size_t meta_reserve(size_t terms, size_t term_bytes);
// The most bytes the regions of these terms and postings take in a data
// file, its header included.
size_t data_reserve(size_t terms, size_t postings);

// Keeps the first bytes of a TF data file written into data (its header's
// room included) and writes that header: regions posting regions.
void seal_tf_data(OutBuffer& data, size_t bytes, uint64_t regions);

// A split's hot df: the least df >= 2 that leaves at most n / kHotShare of
// its terms at or above it (past every df: none is hot). df(i): term i's.
template <typename Df>
uint64_t hot_df(Df&& df, size_t n);

class TfMetaWriter {
 public:
  // Forgets the last segment; the next has these terms and term bytes in
  // all its splits.
  void reset(size_t terms, size_t term_bytes);
  // The next split begins (in split order).
  void begin_split();
  // The split's next group: where its regions start in the data file.
  void add_group(uint64_t data_offset);
  // The bytes of the last group's small regions (before their crc).
  void set_small_bytes(uint64_t bytes);
  // A term of the split's group (numbered in the split) whose region (at
  // offset, len bytes, df postings) is hot.
  void add_hot(std::string_view term, uint64_t offset, uint32_t len, uint32_t df, uint32_t group);
  // The split's next entry; a group's first has first set. The term's
  // bytes must stay where they are until the next add (DictEncoder::add).
  void add_entry(std::string_view term, bool first, uint64_t code, uint64_t x) {
    dict_.add(term, first, code, x);
  }
  // Codes every split into metas[s]: counts[s] terms of term_bytes[s]
  // bytes, postings stored from base_seq.
  void finish(size_t splits, const size_t* counts, const size_t* term_bytes, uint64_t base_seq,
              std::vector<OutBuffer>& metas);

  // Bytes it holds for terms, term bytes and splits (TfIdfIndex::held_bound).
  static size_t held_bound(size_t terms, size_t term_bytes, size_t splits);

 private:
  struct HotTerm {
    uint64_t offset;
    uint32_t hash;  // dict_hash >> 32, as stored
    uint32_t len, df, group, bytes_at;
    uint8_t term_len;
  };
  // Writes hot_[from, to) sorted at out, their count and bytes at head;
  // returns the end.
  char* write_hot(char* out, size_t from, size_t to, char* head);
  // Per group: its data offset and small bytes.
  std::vector<uint64_t, mem::Accounted<uint64_t>> group_data_;
  std::vector<HotTerm, mem::Accounted<HotTerm>> hot_;
  std::vector<char, mem::Accounted<char>> hot_bytes_;
  std::vector<size_t> split_group0_, split_hot0_;  // first group and hot term of each split
  DictEncoder dict_;
};

template <typename Df>
uint64_t hot_df(Df&& df, size_t n) {
  const size_t cap = hot_bound(n);
  constexpr uint32_t kHist = 4096;
  std::vector<uint32_t> hist(kHist + 1, 0);  // [kHist]: kHist or more
  uint64_t most = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t d = df(i);
    if (d >= 2) hist[d < kHist ? d : kHist]++;
    most = d > most ? d : most;
  }
  size_t above = hist[kHist];
  if (above > cap) {
    // More terms this frequent than the share: the threshold among them
    // by bisection, counting a pass each (rare: it takes postings over 64
    // times the terms).
    uint64_t lo = kHist, hi = most + 1;
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      size_t at_least = 0;
      for (size_t i = 0; i < n; i++) at_least += df(i) >= mid;
      (at_least <= cap ? hi : lo) = mid;
    }
    return hi;
  }
  for (uint32_t d = kHist - 1; d >= 2; d--) {
    if (above + hist[d] > cap) return d + 1;
    above += hist[d];
  }
  return 2;
}

}  // namespace scipis
