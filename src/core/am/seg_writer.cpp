#include "am/seg_writer.h"

#include <algorithm>

#include "index/postings_codec.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis::am {

SegmentWriter::SegmentWriter(std::vector<DocEntry> docs, size_t expect_bytes, const Vals* vals)
    : docs_(std::move(docs)) {
  const uint32_t nvals = vals ? vals->ncols : 0;
  if (nvals > kMaxVals || (nvals && vals->rows() != docs_.size()))
    fail(SCIPIS_E_INTERNAL, "segment filter values disagree with its rows");
  out_.reserve(expect_bytes);
  uint32_t wlog = 0;
  bool ascend = true;
  for (size_t i = 0; i < docs_.size(); i++) {
    if (i > 0 && docs_[i].tid <= docs_[i - 1].tid) ascend = false;
    const uint32_t len = docs_[i].len;
    if (len != kLenNull && len > 0) {
      f_.counted++;
      f_.tokens += len;
      wlog = std::max(wlog, len_width_log2(len));
    }
  }
  f_.ndocs = docs_.size();
  f_.flags = (ascend ? kSegFlagTidsAscend : 0u) | (wlog << kSegLenShift) | (nvals << kSegValsShift);
  const uint32_t w = f_.len_bytes();
  out_.resize(docs_.size() * w);
  std::vector<uint64_t> keys(docs_.size());
  lens_.resize(docs_.size());
  for (size_t i = 0; i < docs_.size(); i++) {
    put_len(out_.data() + i * w, docs_[i].len, w);
    keys[i] = docs_[i].tid;
    lens_[i] = docs_[i].len == kLenNull ? 0 : docs_[i].len;
  }
  out_ += encode_tids(keys.data(), keys.size());
  for (uint32_t c = 0; c < nvals; c++)
    out_ += encode_vals(vals->v.data() + c, vals->nulls.data() + c, docs_.size(), nvals);
  std::vector<DocEntry>().swap(docs_);
  if (std::all_of(lens_.begin(), lens_.end(), [](uint32_t l) { return l <= UINT16_MAX; })) {
    // Half the bytes to fetch from: two merges of 5 M rows each in the
    // same last-level cache.
    lens16_.assign(lens_.begin(), lens_.end());
    std::vector<uint32_t>().swap(lens_);
  }
}

template <typename Len>
void SegmentWriter::gather(const Len* lens, const uint32_t* ords, size_t n, uint32_t* out) {
  constexpr size_t kAhead = 64;
  for (size_t i = 0; i < n; i++) {
    if (i + kAhead < n) __builtin_prefetch(&lens[ords[i + kAhead]]);
    out[i] = lens[ords[i]];
  }
}

void SegmentWriter::term(std::string_view term, const uint32_t* ords, const uint32_t* tfs,
                         size_t n) {
  if (n == 0) return;
  if (term.empty() || term.size() > 255 || (f_.nterms > 0 && term <= std::string_view(prev_)))
    fail(SCIPIS_E_INTERNAL, "segment terms out of order");
  if (in_group_ == 0) first_.assign(term);
  size_t shared = 0;
  if (in_group_ > 0)
    while (shared < prev_.size() && shared < term.size() && prev_[shared] == term[shared]) shared++;
  dict_.push_back(static_cast<char>(shared));
  dict_.push_back(static_cast<char>(term.size() - shared));
  dict_.append(term.substr(shared));
  put_varint(dict_, n);
  if (n == 1) {
    put_varint(dict_, ords[0]);
    put_varint(dict_, tfs[0]);
  } else {
    seqs_.assign(ords, ords + n);
    const size_t at = regions_.size();
    regions_.resize(at + max_region_bytes(n));
    char* end;
    if (n > kSmallRegion) {
      // The rows' lengths gathered first, fetched ahead: a term's rows lie
      // far apart, and one cache miss after another was most of a build's
      // time in write_region.
      term_lens_.resize(n);
      if (lens16_.empty())
        gather(lens_.data(), ords, n, term_lens_.data());
      else
        gather(lens16_.data(), ords, n, term_lens_.data());
      size_t next = 0;
      end = write_region(regions_.data() + at, seqs_.data(), tfs, n, 0,
                         [&](uint64_t) -> uint64_t { return term_lens_[next++]; });
      if (next != n) fail(SCIPIS_E_INTERNAL, "region lengths read out of order");
    } else
      end = write_small_region(regions_.data() + at, seqs_.data(), tfs, n, 0);
    regions_.resize(static_cast<size_t>(end - regions_.data()));
    put_varint(dict_, regions_.size() - at);
  }
  prev_.assign(term);
  f_.nterms++;
  if (++in_group_ == kGroupTerms) flush_group();
}

void SegmentWriter::flush_group() {
  if (in_group_ == 0) return;
  std::string head;
  put_varint(head, in_group_);
  const uint64_t off = out_.size();
  put_u64(index_, term_key(first_));
  put_u64(index_, off);
  put_u32(index_, static_cast<uint32_t>(head.size() + dict_.size()));
  put_u32(index_, static_cast<uint32_t>(head.size() + dict_.size() + regions_.size()));
  if (head.size() + dict_.size() + regions_.size() > UINT32_MAX)
    fail(SCIPIS_E_INTERNAL, "dictionary group too large");
  out_ += head;
  out_ += dict_;
  out_ += regions_;
  dict_.clear();
  regions_.clear();
  in_group_ = 0;
  f_.groups++;
}

std::string SegmentWriter::finish() {
  flush_group();
  f_.index_off = out_.size();
  out_ += index_;
  out_ += encode_footer(f_);
  return std::move(out_);
}

}  // namespace scipis::am
