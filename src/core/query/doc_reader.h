// One indexer's documents as a query reads them: lengths from the mapped
// length arrays, records and paths by decoding the block that holds them
// (kept until the next block is needed), nothing decoded ahead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "index/path_index.h"
#include "query/collection.h"
#include "util/bytes.h"

namespace scipis {

class DocReader {
 public:
  DocReader(Collection& c, uint32_t indexer) : c_(c), ix_(c.indexer(indexer)) {}
  uint64_t docs() const { return ix_.docs(); }
  // Document seq's length as the formulas take it.
  double len(uint64_t seq) {
    if (seq - a_ >= n_) locate(seq);
    const uint32_t v = get_u32(lens_ + 4 * (seq - a_));
    return v != kLenInRecord ? static_cast<double>(v) : static_cast<double>(doc(seq).tokens);
  }
  // Its record and path; both valid until another block is read.
  const DocInfo& doc(uint64_t seq) {
    load(seq);
    return docs_[seq - block_a_];
  }
  // Its path alone, into out (nothing else decoded or kept).
  void path_of(uint64_t seq, std::string& out);
  std::string_view path(uint64_t seq) {
    load(seq);
    const size_t i = static_cast<size_t>(seq - block_a_);
    const size_t at = i ? ends_[i - 1] : 0;
    return std::string_view(paths_).substr(at, ends_[i] - at);
  }

 private:
  void locate(uint64_t seq);
  void load(uint64_t seq);
  Collection& c_;
  IndexerState& ix_;
  // The chunk of lengths len() reads: seqs [a_, a_ + n_), checked; in the
  // segment of seqs [seg_a_, seg_a_ + seg_n_).
  uint64_t a_ = 0, n_ = 0, seg_a_ = 0, seg_n_ = 0;
  size_t seg_ = 0;  // in the indexer's segments
  const unsigned char* lens_ = nullptr;
  // The decoded block: seqs [block_a_, block_a_ + block_n_).
  uint64_t block_a_ = 0, block_n_ = 0;
  DocInfo docs_[kFileBlock];
  size_t ends_[kFileBlock];
  std::string paths_;
};

}  // namespace scipis
