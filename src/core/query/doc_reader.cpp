#include "query/doc_reader.h"

#include <algorithm>

#include "util/error.h"

namespace scipis {

void DocReader::locate(uint64_t seq) {
  if (seq >= ix_.docs()) fail(SCIPIS_E_INTERNAL, "document %llu of %llu", static_cast<unsigned long long>(seq),
                              static_cast<unsigned long long>(ix_.docs()));
  // The last segment starting at or before seq (empty ones skipped),
  // unless seq is in the one found last.
  if (seq - seg_a_ >= seg_n_) {
    seg_ = static_cast<size_t>(std::upper_bound(ix_.first.begin(), ix_.first.end(), seq) -
                               ix_.first.begin()) - 1;
    seg_a_ = ix_.first[seg_];
    seg_n_ = ix_.first[seg_ + 1] - seg_a_;
  }
  const FileBlocks& fb = c_.files(*ix_.segs[seg_]);
  // The window len() reads without a check: seq's chunk of lengths.
  const size_t c = static_cast<size_t>((seq - seg_a_) / kLenChunk);
  a_ = seg_a_ + c * kLenChunk;
  n_ = std::min<uint64_t>(kLenChunk, seg_n_ - c * kLenChunk);
  lens_ = fb.len_chunk(c);
}

void DocReader::load(uint64_t seq) {
  if (seq - block_a_ < block_n_) return;
  if (seq - seg_a_ >= seg_n_) locate(seq);
  // A record of the block decoded last, past what was decoded: the block
  // whole, as reads in document order go on through it.
  const bool whole = seq - block_a_ < kFileBlock && block_n_ > 0;
  const FileBlocks& fb = c_.files(*ix_.segs[seg_]);
  const size_t b = static_cast<size_t>((seq - seg_a_) / kFileBlock);
  paths_.clear();
  block_n_ = 0;
  const uint64_t first = seg_a_ + b * kFileBlock;
  // Records up to seq's: a path is front-coded against the one before it.
  const size_t n = whole && first == block_a_ ? fb.records_in(b) : static_cast<size_t>(seq - first) + 1;
  fb.decode(b, docs_, paths_, ends_, n);
  for (size_t i = 0; i < n; i++)
    if (docs_[i].seq != first + i) fail_corrupt(fb.path(), "document numbers are not consecutive");
  block_a_ = first;
  block_n_ = n;
}

}  // namespace scipis
