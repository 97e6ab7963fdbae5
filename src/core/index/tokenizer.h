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

  // Lower-cases [p, p+n) in place and sets bit i%64 of bits[i/64] when byte
  // i is a token byte (bits past n are 0). Sixteen bytes per step with
  // SSE4.1 where the CPU has it, one table lookup per byte otherwise.
  void classify(unsigned char* p, size_t n, uint64_t* bits) const;

  // Lower-cases [p, p+n) in place, then calls emit(const char*, size_t) for
  // every token. The block must not start or end inside a token piece.
  // Token edges are the set bits of mask ^ (mask << 1): one iteration per
  // edge, none per byte.
  template <typename Emit>
  void tokenize_in_place(unsigned char* p, size_t n, Emit&& emit) const {
    constexpr size_t kChunk = 4096;
    uint64_t bits[kChunk / 64];
    bool in = false;  // a token runs into the next word
    size_t start = 0;
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
      classify(p + base, m, bits);
      const size_t words = (m + 63) / 64;
      for (size_t w = 0; w < words; w++) {
        const uint64_t word = bits[w];
        uint64_t edges = word ^ ((word << 1) | (in ? 1u : 0u));
        const size_t at = base + w * 64;
        while (edges) {
          const size_t pos = at + static_cast<size_t>(__builtin_ctzll(edges));
          edges &= edges - 1;
          if (in) piece(start, pos);
          start = pos;
          in = !in;
        }
      }
    }
    if (in) piece(start, n);
  }

  // Where a read block may end: the bytes after the returned offset are a
  // partial token piece (< 255 bytes) to carry into the next block.
  size_t safe_cut(const unsigned char* p, size_t n) const {
    size_t r = n;
    while (r > 0 && is_tok_[p[r - 1]]) r--;
    return r + ((n - r) / kMaxToken) * kMaxToken;
  }

 private:
  void classify_scalar(unsigned char* p, size_t n, uint64_t* bits) const;
  void classify_sse(unsigned char* p, size_t n, uint64_t* bits) const;

  unsigned char is_tok_[256];
  unsigned char lower_[256];
  // For SSE: row_lo_[l] / row_hi_[l] hold bit (h & 7) for byte h*16+l with
  // h < 8 / h >= 8; bit_of_[h] selects that bit.
  alignas(16) unsigned char row_lo_[16];
  alignas(16) unsigned char row_hi_[16];
  alignas(16) unsigned char bit_of_[16];
  bool sse_;
};

}  // namespace scipis
