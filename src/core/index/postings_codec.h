// Format 4 posting lists: a term's postings (of two or more documents) in
// blocks of kBlockPostings, each bit-packed (document gaps, then tf - 1,
// each at the width its largest value needs), behind a skip list that
// gives every block its last document, its size and its score bounds (the
// largest tf and the smallest document length in it), so that a query can
// pass over a block without reading it and skip one that cannot reach the
// top k.
//
// Region: varint df, then per block: varint last_seq gap (from the previous
// block's last, the first from 0), varint payload bytes, varint max_tf,
// varint min_len (0: not known), then u32 crc32c of all that; then the
// payloads, each u8 gap width, u8 tf width, gaps (the first from the
// previous block's last + 1, or from 0), tf - 1, and its u32 crc32c. A
// region of one block has one crc, at its end, over everything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scipis {

constexpr size_t kBlockPostings = 128;

// The most bytes a region of n postings can take.
size_t max_region_bytes(size_t n);

// Writes the region of n postings (seqs ascending); len_of(seq) is a lower
// bound of that document's length, or 0 when unknown. Returns the end.
template <typename LenOf>
char* write_region(char* out, const uint64_t* seqs, const uint32_t* tfs, size_t n, LenOf&& len_of);

struct BlockInfo {
  uint64_t last_seq;
  uint32_t max_tf;
  uint64_t min_len;  // 0: not known
  size_t offset;     // of the payload in the region
  size_t bytes;      // with its crc, if it has one
  uint32_t count;
};

// A region's skip list, parsed and checked against its crc; blocks are
// decoded one by one as a query needs them.
class RegionReader {
 public:
  // region stays owned by the caller; errors name path.
  RegionReader(const std::string& path, std::string_view region, uint64_t expect_df,
               uint64_t seq_limit);
  const std::vector<BlockInfo>& blocks() const { return blocks_; }
  // Decodes block b: seqs and tfs get its count entries.
  void decode(size_t b, uint64_t* seqs, uint32_t* tfs) const;

 private:
  std::string path_;
  std::string_view region_;
  std::vector<BlockInfo> blocks_;
};

// Bit packing of n values at width w (0 to 64), low bits first.
size_t packed_bytes(size_t n, unsigned w);
char* pack_bits(char* out, const uint64_t* v, size_t n, unsigned w);
// false when the values would run past end.
bool unpack_bits(const char*& in, const char* end, uint64_t* v, size_t n, unsigned w);
unsigned bit_width(uint64_t max_value);

}  // namespace scipis

#include "index/postings_codec_inl.h"
