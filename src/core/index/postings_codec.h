// Format 6 posting lists: a term's postings (of two or more documents) in
// blocks of kBlockPostings, each bit-packed (document gaps, then tf - 1,
// each at the width its largest value needs), behind a skip list that
// gives every block its last document, its size and its score bounds (the
// largest tf, the smallest document length and the largest tf / length
// in it), so that a query can
// pass over a block without reading it and skip one that cannot reach the
// top k.
//
// Seqs are stored from `base`, the flush's first document.
//
// A region of more than kSmallRegion postings: varint df, then per block:
// varint last_seq gap (from the previous block's last, the first from
// base), varint payload bytes, varint max_tf, varint min_len (0: not
// known), varint best_tf and best_len (the posting whose tf / length is
// the block's largest; both 0 when min_len is), then u32 crc32c of all
// that; then the payloads, each u8 gap
// width, u8 tf width, gaps (the first from the previous block's last + 1,
// or from base), tf - 1, and its u32 crc32c.
//
// A small region (2 to kSmallRegion postings, most terms of a corpus):
// varint (first seq - base), u8 gap width, u8 tf width, the df - 1 gaps
// minus one, tf - 1. Its df is the dictionary's; no skip entry and no
// crc of its own: the small regions of a dictionary group lie together
// in the data file, followed by one crc32c over them (a "group span").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "util/verified_bytes.h"

namespace scipis {

constexpr size_t kBlockPostings = 128;
constexpr size_t kSmallRegion = kBlockPostings;

// The most bytes a region of n postings can take.
size_t max_region_bytes(size_t n);

// Writes the region of n > kSmallRegion postings (seqs ascending, none
// below base); len_of(seq) is a lower bound of that document's length, or
// 0 when unknown. Returns the end.
template <typename LenOf>
char* write_region(char* out, const uint64_t* seqs, const uint32_t* tfs, size_t n, uint64_t base,
                   LenOf&& len_of);
// Writes a small region, 2 <= n <= kSmallRegion.
char* write_small_region(char* out, const uint64_t* seqs, const uint32_t* tfs, size_t n,
                         uint64_t base);

struct BlockInfo {
  uint64_t last_seq;
  uint32_t max_tf;
  uint64_t min_len;  // 0: not known
  size_t offset;     // of the payload in the region
  size_t bytes;      // with its crc, if it has one
  uint32_t count;
  // The largest tf / length of the block's postings (0/0 when min_len is
  // 0, and for a small region): TF-IDF's exact block maximum, and with
  // max_tf and min_len a tighter bound for BM25.
  uint64_t best_tf, best_len;
};

// A region's blocks, in storage the thread keeps for the next region when
// this one is done: a query parses the skip list of each of its terms in
// every segment (thousands of entries for a frequent term), and fresh
// memory for them, cleared and then faulted in page by page, cost more
// than the parse. Entries are not cleared: the parse sets every field. A
// thread keeps at most 16 arrays and 2^18 entries (16 MiB) between uses.
// Frees the arrays (and region readers) the calling thread keeps (the end
// of a task on a kept engine thread, util/engine_thread.h).
void drop_kept_block_lists();

class BlockList {
 public:
  BlockList() = default;
  ~BlockList();
  BlockList(const BlockList&) = delete;
  BlockList& operator=(const BlockList&) = delete;
  void resize(size_t n);
  size_t size() const { return n_; }
  BlockInfo& operator[](size_t i) { return data_[i]; }
  const BlockInfo& operator[](size_t i) const { return data_[i]; }
  BlockInfo* begin() { return data_; }
  BlockInfo* end() { return data_ + n_; }

 private:
  BlockInfo one_;  // a small region's one block: no storage at all
  BlockInfo* data_ = &one_;
  size_t n_ = 0;
  std::unique_ptr<BlockInfo[]> heap_;
  size_t cap_ = 0;  // of heap_
};

// A region's skip list, parsed and checked against its crc; blocks are
// decoded one by one as a query needs them. A small region is one block,
// decoded at once (its crc is its group span's, checked by the caller).
class RegionReader {
 public:
  // region stays owned by the caller; errors name path. Seqs lie in
  // [base, seq_limit).
  RegionReader(const std::string& path, std::string_view region, uint64_t expect_df,
               uint64_t base, uint64_t seq_limit);
  // A large region (expect_df > kSmallRegion) read in pieces, for readers
  // whose bytes are not all at hand: prefix is its first bytes, region_size
  // its length. nullptr when the prefix ends inside the skip list (ask
  // again with more); then blocks decode with decode_payload from the
  // bytes at blocks()[b].offset.
  static std::unique_ptr<RegionReader> from_prefix(const std::string& path, std::string_view prefix,
                                                   uint64_t region_size, uint64_t expect_df,
                                                   uint64_t base, uint64_t seq_limit);
  // The same, from a reader this thread kept (keep) when there is one.
  // verified, when given, remembers the blocks checked (and is asked
  // first); it outlives the reader.
  static std::unique_ptr<RegionReader> make(const std::string& path, std::string_view region,
                                            uint64_t expect_df, uint64_t base, uint64_t seq_limit,
                                            VerifiedBytes* verified = nullptr);
  // Keeps r for this thread's next make (up to 32; drop_kept_block_lists
  // frees them).
  static void keep(std::unique_ptr<RegionReader> r);
  const BlockList& blocks() const { return blocks_; }
  // Decodes block b: seqs and tfs get its count entries.
  void decode(size_t b, uint64_t* seqs, uint32_t* tfs) const;
  // The same from block b's blocks()[b].bytes bytes.
  void decode_payload(size_t b, const char* payload, uint64_t* seqs, uint32_t* tfs) const;

 private:
  RegionReader(const std::string& path, uint64_t base) : path_(path), base_(base) {}
  void open(const std::string& path, std::string_view region, uint64_t expect_df, uint64_t base,
            uint64_t seq_limit);
  // false when data (the region's first bytes) ends inside the skip list.
  bool parse_skip(std::string_view data, uint64_t region_size, uint64_t expect_df, uint64_t seq_limit);
  void read_small(uint64_t df, uint64_t base, uint64_t seq_limit);
  std::string path_;
  std::string_view region_;
  BlockList blocks_;
  uint64_t base_ = 0;
  VerifiedBytes* verified_ = nullptr;
  uint32_t small_n_ = 0;  // a small region, decoded
  uint64_t small_seqs_[kSmallRegion];
  uint32_t small_tfs_[kSmallRegion];
};

// Bit packing of n values at width w (0 to 64), low bits first.
size_t packed_bytes(size_t n, unsigned w);
char* pack_bits(char* out, const uint64_t* v, size_t n, unsigned w);
// false when the values would run past end.
bool unpack_bits(const char*& in, const char* end, uint64_t* v, size_t n, unsigned w);
unsigned bit_width(uint64_t max_value);

}  // namespace scipis

#include "index/postings_codec_inl.h"
