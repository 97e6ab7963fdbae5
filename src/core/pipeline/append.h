// Reading only what a log appended. A file's record keeps the checksum of
// its last kTailWindow bytes; a refresh that finds the same inode grown
// reads that window back, and when it is unchanged indexes the file from
// the start of the token piece the old end may have cut (the window says
// where it starts), as a link of the file's chain (index/chains.h), the
// cut piece retracted from the old part.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "index/chains.h"
#include "index/segment_format.h"
#include "index/tokenizer.h"
#include "util/crc32c.h"

namespace scipis {

// Files smaller than this are read again whole when they grow: a chain
// costs every query a little until a compaction, a small file's bytes
// cost less.
constexpr uint64_t kAppendMinBytes = 4 * 1024;
// Tests lower it to see chains of small files.
uint64_t append_min_bytes();
void set_append_min_bytes(uint64_t n);

// The checksum of the last min(size, kTailWindow) bytes of a file of size
// bytes, fed its bytes in order (any before the window ignored).
class TailCrc {
 public:
  explicit TailCrc(uint64_t size)
      : from_(size - std::min<uint64_t>(size, kTailWindow)), next_(from_), size_(size) {}
  void feed(uint64_t off, const unsigned char* p, size_t n) {
    if (broken_ || off + n <= next_ || next_ == size_) return;
    if (off > next_) {
      broken_ = true;  // a gap: the window was not read whole
      return;
    }
    const size_t skip = static_cast<size_t>(next_ - off);
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n - skip, size_ - next_));
    crc_ = crc32c(p + skip, take, crc_);
    next_ += take;
  }
  // FileAttrs::tail: the checksum plus one, or 0 unless the window was read.
  uint64_t value() const { return !broken_ && next_ == size_ ? uint64_t{crc_} + 1 : 0; }

 private:
  uint64_t from_, next_, size_;
  uint32_t crc_ = 0;
  bool broken_ = false;
};

// A grown file's old tail window [start, old_size), read back: where the
// link's reading starts and the piece it retracts. False when the window
// cannot say (a token piece may begin before it).
struct AppendPlan {
  uint64_t start = 0;
  std::string retract;
};
bool plan_append(const Tokenizer& tok, const unsigned char* window, size_t n, uint64_t window_at,
                 AppendPlan& plan);

// What the reader tells the indexer of a link (ReadMsg kBegin).
struct AppendRead {
  uint32_t known = 0;  // the file's entry in the refresh's catalog
  DocId root;
  uint64_t old_size = 0;
  uint64_t chain_tokens = 0;  // the chain's length before this link
  AppendPlan plan;
};

}  // namespace scipis
