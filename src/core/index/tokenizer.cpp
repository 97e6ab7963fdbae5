#include "index/tokenizer.h"

#include <immintrin.h>

#include <cstring>

namespace scipis {

Tokenizer::Tokenizer(const unsigned char delimiter[256]) {
  std::memset(row_lo_, 0, sizeof row_lo_);
  std::memset(row_hi_, 0, sizeof row_hi_);
  for (int b = 0; b < 256; b++) {
    is_tok_[b] = delimiter[b] ? 0 : 1;
    lower_[b] = (b >= 'A' && b <= 'Z') ? static_cast<unsigned char>(b + 32)
                                       : static_cast<unsigned char>(b);
    if (is_tok_[b]) {
      unsigned char* row = b < 128 ? row_lo_ : row_hi_;
      row[b & 15] |= static_cast<unsigned char>(1u << ((b >> 4) & 7));
    }
  }
  for (int h = 0; h < 16; h++) bit_of_[h] = static_cast<unsigned char>(1u << (h & 7));
  sse_ = __builtin_cpu_supports("sse4.1");
  popcnt_ = __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi");
}

void Tokenizer::classify(unsigned char* p, size_t n, uint64_t* bits) const {
  if (sse_)
    classify_sse(p, n, bits);
  else
    classify_scalar(p, n, bits);
}

void Tokenizer::classify_scalar(unsigned char* p, size_t n, uint64_t* bits) const {
  for (size_t w = 0; w * 64 < n; w++) {
    const size_t m = n - w * 64 < 64 ? n - w * 64 : 64;
    unsigned char* q = p + w * 64;
    uint64_t word = 0;
    for (size_t i = 0; i < m; i++) {
      const unsigned c = q[i];
      word |= static_cast<uint64_t>(is_tok_[c]) << i;
      q[i] = lower_[c];
    }
    bits[w] = word;
  }
}

namespace {

struct SseTables {
  __m128i lo_rows, hi_rows, bit_of;
};

// Lower-cases 16 bytes at q in place; returns their token-byte mask.
__attribute__((target("sse4.1"), always_inline)) inline uint64_t classify16(
    const SseTables& t, unsigned char* q) {
  const __m128i nibble = _mm_set1_epi8(0x0f);
  // 'A'..'Z' + 0x3f lands on -128..-103 as signed bytes.
  const __m128i shift_upper = _mm_set1_epi8(0x3f);
  const __m128i upper_limit = _mm_set1_epi8(-102);
  const __m128i case_bit = _mm_set1_epi8(0x20);
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  __m128i lo = _mm_and_si128(v, nibble);
  __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), nibble);
  __m128i row = _mm_blendv_epi8(_mm_shuffle_epi8(t.lo_rows, lo),
                                _mm_shuffle_epi8(t.hi_rows, lo), v);
  __m128i delim = _mm_cmpeq_epi8(_mm_and_si128(row, _mm_shuffle_epi8(t.bit_of, hi)),
                                 _mm_setzero_si128());
  __m128i upper = _mm_cmpgt_epi8(upper_limit, _mm_add_epi8(v, shift_upper));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q),
                   _mm_or_si128(v, _mm_and_si128(upper, case_bit)));
  return static_cast<uint64_t>(~_mm_movemask_epi8(delim) & 0xffff);
}

__attribute__((target("sse4.1"), always_inline)) inline uint64_t classify64(
    const SseTables& t, unsigned char* q) {
  return classify16(t, q) | classify16(t, q + 16) << 16 |
         classify16(t, q + 32) << 32 | classify16(t, q + 48) << 48;
}

}  // namespace

__attribute__((target("sse4.1"))) void Tokenizer::classify_sse(
    unsigned char* p, size_t n, uint64_t* bits) const {
  const SseTables t{_mm_load_si128(reinterpret_cast<const __m128i*>(row_lo_)),
                    _mm_load_si128(reinterpret_cast<const __m128i*>(row_hi_)),
                    _mm_load_si128(reinterpret_cast<const __m128i*>(bit_of_))};
  size_t w = 0;
  for (; (w + 1) * 64 <= n; w++) bits[w] = classify64(t, p + w * 64);
  const size_t done = w * 64;
  if (done < n) {
    // The tail goes through a local copy: nothing past n is read or written.
    alignas(16) unsigned char tail[64];
    const size_t m = n - done;
    std::memcpy(tail, p + done, m);
    std::memset(tail + m, 0, 64 - m);
    const uint64_t word = classify64(t, tail);
    std::memcpy(p + done, tail, m);
    bits[w] = word & ((uint64_t{1} << m) - 1);
  }
}

}  // namespace scipis

namespace scipis {
namespace {

// simdjson's way: eight (or sixteen) positions are written whether or not
// the word has that many edges, and the pointer advances by the real count,
// so that the loop has no branch that depends on the text.
__attribute__((always_inline)) inline size_t flatten_body(const uint64_t* bits, size_t words,
                                                          uint32_t at, uint64_t& top,
                                                          uint32_t* out) {
  uint32_t* o = out;
  for (size_t w = 0; w < words; w++, at += 64) {
    const uint64_t word = bits[w];
    uint64_t e = word ^ ((word << 1) | top);
    top = word >> 63;
    const int count = __builtin_popcountll(e);
    // Or-ing in bit 63 keeps ctz defined once e runs out; what it yields
    // then lies past the real edges and is overwritten or ignored.
    for (int j = 0; j < 8; j++) {
      o[j] = at + static_cast<uint32_t>(__builtin_ctzll(e | (uint64_t{1} << 63)));
      e &= e - 1;
    }
    if (count > 8) {
      for (int j = 8; j < 16; j++) {
        o[j] = at + static_cast<uint32_t>(__builtin_ctzll(e | (uint64_t{1} << 63)));
        e &= e - 1;
      }
      for (int j = 16; j < count; j++) {
        o[j] = at + static_cast<uint32_t>(__builtin_ctzll(e));
        e &= e - 1;
      }
    }
    o += count;
  }
  return static_cast<size_t>(o - out);
}

__attribute__((target("popcnt,bmi"))) size_t flatten_fast(const uint64_t* bits, size_t words,
                                                          uint32_t at, uint64_t& top,
                                                          uint32_t* out) {
  return flatten_body(bits, words, at, top, out);
}

size_t flatten_plain(const uint64_t* bits, size_t words, uint32_t at, uint64_t& top,
                     uint32_t* out) {
  return flatten_body(bits, words, at, top, out);
}

}  // namespace

size_t Tokenizer::flatten_edges(const uint64_t* bits, size_t words, uint32_t at, uint64_t& top,
                                uint32_t* out) const {
  return popcnt_ ? flatten_fast(bits, words, at, top, out)
                 : flatten_plain(bits, words, at, top, out);
}

}  // namespace scipis
