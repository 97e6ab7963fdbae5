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

void DocReader::path_of(uint64_t seq, std::string& out) {
  if (seq - block_a_ < block_n_) {
    out = path(seq);
    return;
  }
  if (seq - seg_a_ >= seg_n_) locate(seq);
  const size_t rec = static_cast<size_t>(seq - seg_a_);
  c_.files(*ix_.segs[seg_]).path_of(rec / kFileBlock, rec % kFileBlock, out);
}

void DocReader::load(uint64_t seq) {
  if (seq - block_a_ < block_n_) return;
  if (seq - seg_a_ >= seg_n_) locate(seq);
  const FileBlocks& fb = c_.files(*ix_.segs[seg_]);
  const size_t b = static_cast<size_t>((seq - seg_a_) / kFileBlock);
  const uint64_t first = seg_a_ + b * kFileBlock;
  // From the restart before seq's record (a path is front-coded against
  // the one before it, back to the restart) up to it; past what was
  // decoded of the same restart's records, to the next restart, as reads
  // in document order go on through them (a top-k's few hits each decode
  // a part of one restart's records, not of their block).
  const size_t i = static_cast<size_t>(seq - first);
  const size_t from = i / kRestart * kRestart;
  const bool on = block_n_ > 0 && block_a_ == first + from;
  const size_t n = on ? std::min(fb.records_in(b), from + kRestart) : i + 1;
  paths_.clear();
  block_n_ = 0;
  fb.decode_from(b, from, docs_, paths_, ends_, n);
  for (size_t k = from; k < n; k++)
    if (docs_[k - from].seq != first + k) fail_corrupt(fb.path(), "document numbers are not consecutive");
  block_a_ = first + from;
  block_n_ = n - from;
}

}  // namespace scipis
