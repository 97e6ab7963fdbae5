// Writes one segment (am_format.h) to a string: the rows first, then terms
// in ascending order with their postings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "am/am_format.h"

namespace scipis::am {

class SegmentWriter {
 public:
  // expect_bytes: about how large the segment will be (0: unknown), so
  // that it is not copied as it grows. vals: the rows' filter values (one
  // row each per doc), when the index has filter columns.
  explicit SegmentWriter(std::vector<DocEntry> docs, size_t expect_bytes = 0,
                         const Vals* vals = nullptr);
  // Terms strictly ascending; ords ascending, below the row count.
  void term(std::string_view term, const uint32_t* ords, const uint32_t* tfs, size_t n);
  // The whole stream, footer included.
  std::string finish();
  const Footer& stats() const { return f_; }

 private:
  void flush_group();
  template <typename Len>
  static void gather(const Len* lens, const uint32_t* ords, size_t n, uint32_t* out);
  std::vector<DocEntry> docs_;  // until the rows are written
  // Rows' lengths, 0 for NULL: 16 bits each when every one fits.
  std::vector<uint32_t> lens_;
  std::vector<uint16_t> lens16_;
  std::vector<uint32_t> term_lens_;
  std::string out_, dict_, regions_, index_;
  std::string prev_, first_;
  size_t in_group_ = 0;
  Footer f_;
  std::vector<uint64_t> seqs_;
};

}  // namespace scipis::am
