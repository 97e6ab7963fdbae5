// The spec's tokenizer: a delimiter table and a lower-case table, applied
// without data-dependent branches per byte; tokens are cut at 255 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/bytes.h"

namespace scipis {

constexpr size_t kMaxToken = 255;

// A token as the bulk scan (Tokenizer::tokenize_block) reports it.
struct BlockToken {
  uint32_t off;     // from the start of the block
  uint32_t len;     // 1..kMaxToken
  uint64_t prefix;  // token_prefix
  uint64_t tail;    // the last 8 bytes when len > 8, else 0
  uint64_t hash;    // short_token_hash
};

// Working memory of tokenize_block, a few hundred KiB: one per thread.
struct ScanScratch {
  static constexpr size_t kChunk = 16384;  // bytes classified at a time
  static constexpr size_t kTokens = kChunk / 2 + 64;
  uint64_t bits[kChunk / 64];
  // Edges of a chunk plus one carried in; flattening writes up to 16
  // entries past the last edge.
  uint32_t edges[kChunk + 64];
  BlockToken toks[kTokens];
};

class Tokenizer {
 public:
  // delimiter[b] != 0 marks byte b as a delimiter.
  explicit Tokenizer(const unsigned char delimiter[256]);

  bool is_token_byte(unsigned char c) const { return is_tok_[c] != 0; }

  // For tests: use no more than the scalar code (0), SSE4.1/POPCNT/BMI (1)
  // or whatever the CPU has (2), so that every fallback can be checked on
  // a machine that has more.
  void limit_instruction_sets(int level) {
    if (level < 2) avx2_ = false;
    if (level < 1) sse_ = popcnt_ = false;
  }

  // Lower-cases [p, p+n) in place and sets bit i%64 of bits[i/64] when byte
  // i is a token byte (bits past n are 0). 32 or 16 bytes per step with
  // AVX2 or SSE4.1 where the CPU has it, one table lookup per byte
  // otherwise.
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

  // The bulk form of tokenize_in_place for the indexers: lower-cases
  // [p, p+n) in place and calls sink(BlockToken*, size_t) with the
  // block's tokens in order, a chunk at a time. The block must not start
  // or end inside a token piece, n < 2^32, and bytes up to p+readable
  // (readable >= n) may be read. Edge positions are flattened into an
  // array without a branch per edge, then each pair of edges becomes a
  // token with its first and last words loaded.
  template <typename Sink>
  void tokenize_block(unsigned char* p, size_t n, size_t readable, ScanScratch& s,
                      Sink&& sink) const {
    const char* const base = reinterpret_cast<const char*>(p);
    uint64_t top = 0;    // the last byte of the previous chunk was a token byte
    size_t carried = 0;  // edges[0] is the start of a token still open
    size_t nt = 0;
    auto put = [&](uint32_t off, uint32_t len) {
      if (nt == ScanScratch::kTokens) {
        sink(s.toks, nt);
        nt = 0;
      }
      const char* t = base + off;
      const uint64_t pre = __builtin_expect(off + 8 <= readable, 1) ? token_prefix_unsafe(t, len)
                                                                     : token_prefix(t, len);
      const uint64_t tail = len > 8 ? load_u64(t + len - 8) : 0;
      s.toks[nt++] = BlockToken{off, len, pre, tail, short_token_hash(t, len, pre, tail)};
    };
    for (size_t at = 0; at < n; at += ScanScratch::kChunk) {
      const size_t m = n - at < ScanScratch::kChunk ? n - at : ScanScratch::kChunk;
      classify(p + at, m, s.bits);
      size_t ne = carried + flatten_edges(s.bits, (m + 63) / 64, static_cast<uint32_t>(at),
                                          top, s.edges + carried);
      if (at + m == n && (ne & 1)) s.edges[ne++] = static_cast<uint32_t>(n);
      const size_t pairs = ne / 2;
      for (size_t k = 0; k < pairs;) {
        if (nt == ScanScratch::kTokens) {
          sink(s.toks, nt);
          nt = 0;
        }
        const size_t room = ScanScratch::kTokens - nt;
        const size_t d = build_tokens(base, readable, s.edges + 2 * k,
                                      pairs - k < room ? pairs - k : room, s.toks + nt);
        nt += d;
        k += d;
        if (k == pairs || d == room) continue;
        // build_tokens stopped at a token too long or too near the end.
        uint32_t off = s.edges[2 * k];
        uint32_t len = s.edges[2 * k + 1] - off;
        while (len > kMaxToken) {
          put(off, static_cast<uint32_t>(kMaxToken));
          off += kMaxToken;
          len -= kMaxToken;
        }
        put(off, len);
        k++;
      }
      carried = ne & 1;
      if (carried) s.edges[0] = s.edges[ne - 1];
      if (nt) sink(s.toks, nt);
      nt = 0;
    }
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
  void classify_avx2(unsigned char* p, size_t n, uint64_t* bits) const;
  // The tokens of the edge pairs e[0..2*pairs) into out, in order, while
  // they are at most kMaxToken long and 8 bytes from their start are
  // readable; returns how many pairs were done.
  size_t build_tokens(const char* base, size_t readable, const uint32_t* e, size_t pairs,
                      BlockToken* out) const;
  // Writes the positions (at + bit index) of the token edges of words
  // bits[0..words) to out, top carrying the last bit of the word before;
  // returns how many.
  size_t flatten_edges(const uint64_t* bits, size_t words, uint32_t at, uint64_t& top,
                       uint32_t* out) const;

  unsigned char is_tok_[256];
  unsigned char lower_[256];
  // For SSE: row_lo_[l] / row_hi_[l] hold bit (h & 7) for byte h*16+l with
  // h < 8 / h >= 8; bit_of_[h] selects that bit.
  alignas(16) unsigned char row_lo_[16];
  alignas(16) unsigned char row_hi_[16];
  alignas(16) unsigned char bit_of_[16];
  bool sse_;
  bool popcnt_;
  bool avx2_;
};

}  // namespace scipis
