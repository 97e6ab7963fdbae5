// The spec's tokenizer: a delimiter table and a lower-case table, applied
// without data-dependent branches per byte; tokens are cut at 255 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scipis {

constexpr size_t kMaxToken = 255;

class Tokenizer {
 public:
  // delimiter[b] != 0 marks byte b as a delimiter.
  explicit Tokenizer(const unsigned char delimiter[256]);

  bool is_token_byte(unsigned char c) const { return is_tok_[c] != 0; }

  // Lower-cases [p, p+n) in place, then calls emit(const char*, size_t) for
  // every token. The block must not start or end inside a token piece.
  // Per byte there is no data-dependent branch: token starts and ends are
  // written to small arrays whose cursors advance by the table's answer.
  template <typename Emit>
  void tokenize_in_place(unsigned char* p, size_t n, Emit&& emit) const {
    constexpr size_t kChunk = 4096;
    uint32_t starts[kChunk / 2 + 2], ends[kChunk / 2 + 2];
    constexpr size_t kNone = SIZE_MAX;
    size_t open = kNone;  // start of a token still running at a chunk end
    unsigned prev = 0;
    auto piece = [&](size_t from, size_t to) {
      const char* s = reinterpret_cast<const char*>(p + from);
      size_t len = to - from;
      while (len > kMaxToken) {
        emit(s, kMaxToken);
        s += kMaxToken;
        len -= kMaxToken;
      }
      emit(s, len);
    };
    for (size_t base = 0; base < n; base += kChunk) {
      const size_t m = n - base < kChunk ? n - base : kChunk;
      unsigned char* q = p + base;
      size_t ns = 0, ne = 0;
      for (size_t i = 0; i < m; i++) {
        const unsigned c = q[i];
        const unsigned t = is_tok_[c];
        q[i] = lower_[c];
        starts[ns] = static_cast<uint32_t>(i);
        ns += t & (prev ^ 1u);
        ends[ne] = static_cast<uint32_t>(i);
        ne += prev & (t ^ 1u);
        prev = t;
      }
      size_t si = 0, ei = 0;
      if (open != kNone) {
        if (ne == 0) continue;  // the token runs through this whole chunk
        piece(open, base + ends[0]);
        open = kNone;
        ei = 1;
      }
      for (; ei < ne; ei++, si++) piece(base + starts[si], base + ends[ei]);
      if (si < ns) open = base + starts[si];
    }
    if (open != kNone) piece(open, n);
  }

  // Where a read block may end: the bytes after the returned offset are a
  // partial token piece (< 255 bytes) to carry into the next block.
  size_t safe_cut(const unsigned char* p, size_t n) const {
    size_t r = n;
    while (r > 0 && is_tok_[p[r - 1]]) r--;
    return r + ((n - r) / kMaxToken) * kMaxToken;
  }

 private:
  unsigned char is_tok_[256];
  unsigned char lower_[256];
};

}  // namespace scipis
