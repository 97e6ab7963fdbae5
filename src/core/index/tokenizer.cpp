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
  avx2_ = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
}

void Tokenizer::classify(unsigned char* p, size_t n, uint64_t* bits) const {
  if (avx2_)
    classify_avx2(p, n, bits);
  else if (sse_)
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

// classify16 on 32 bytes: the tables in both lanes.
struct AvxTables {
  __m256i lo_rows, hi_rows, bit_of;
};

__attribute__((target("avx2"), always_inline)) inline uint64_t classify32(
    const AvxTables& t, unsigned char* q) {
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i shift_upper = _mm256_set1_epi8(0x3f);
  const __m256i upper_limit = _mm256_set1_epi8(-102);
  const __m256i case_bit = _mm256_set1_epi8(0x20);
  __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  __m256i lo = _mm256_and_si256(v, nibble);
  __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
  __m256i row = _mm256_blendv_epi8(_mm256_shuffle_epi8(t.lo_rows, lo),
                                   _mm256_shuffle_epi8(t.hi_rows, lo), v);
  __m256i delim = _mm256_cmpeq_epi8(_mm256_and_si256(row, _mm256_shuffle_epi8(t.bit_of, hi)),
                                    _mm256_setzero_si256());
  __m256i upper = _mm256_cmpgt_epi8(upper_limit, _mm256_add_epi8(v, shift_upper));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                      _mm256_or_si256(v, _mm256_and_si256(upper, case_bit)));
  return static_cast<uint32_t>(~_mm256_movemask_epi8(delim));
}

__attribute__((target("avx2"), always_inline)) inline uint64_t classify64(
    const AvxTables& t, unsigned char* q) {
  return classify32(t, q) | classify32(t, q + 32) << 32;
}

}  // namespace

__attribute__((target("avx2"))) void Tokenizer::classify_avx2(
    unsigned char* p, size_t n, uint64_t* bits) const {
  const AvxTables t{
      _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(row_lo_))),
      _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(row_hi_))),
      _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(bit_of_)))};
  size_t w = 0;
  for (; (w + 1) * 64 <= n; w++) bits[w] = classify64(t, p + w * 64);
  const size_t done = w * 64;
  if (done < n) {
    // The tail goes through a local copy: nothing past n is read or written.
    alignas(32) unsigned char tail[64];
    const size_t m = n - done;
    std::memcpy(tail, p + done, m);
    std::memset(tail + m, 0, 64 - m);
    const uint64_t word = classify64(t, tail);
    std::memcpy(p + done, tail, m);
    bits[w] = word & ((uint64_t{1} << m) - 1);
  }
}

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

// The positions of the set bits of each byte value, for flatten_avx2.
struct EdgeTable {
  alignas(64) unsigned char pos[256][8];
};
constexpr EdgeTable make_edge_table() {
  EdgeTable t{};
  for (int b = 0; b < 256; b++) {
    int n = 0;
    for (int i = 0; i < 8; i++)
      if (b >> i & 1) t.pos[b][n++] = static_cast<unsigned char>(i);
  }
  return t;
}
constexpr EdgeTable kEdgeTable = make_edge_table();

// Log text has an edge every few bytes, so a word's edge count is often
// above sixteen and varies, and flatten_body's last loop mispredicts: this
// writes eight positions per byte of the word from a table, without
// branches, and advances by the byte's popcount.
__attribute__((target("avx2,popcnt"))) size_t flatten_avx2(const uint64_t* bits, size_t words,
                                                           uint32_t at, uint64_t& top,
                                                           uint32_t* out) {
  uint32_t* o = out;
  const __m256i eight = _mm256_set1_epi32(8);
  uint64_t carry = top;
  for (size_t w = 0; w < words; w++, at += 64) {
    const uint64_t word = bits[w];
    const uint64_t e = word ^ ((word << 1) | carry);
    carry = word >> 63;
    __m256i base = _mm256_set1_epi32(static_cast<int>(at));
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
      const unsigned b = static_cast<unsigned>(e >> (8 * j)) & 0xff;
      const __m256i v = _mm256_cvtepu8_epi32(
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kEdgeTable.pos[b])));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), _mm256_add_epi32(v, base));
      o += __builtin_popcount(b);
      base = _mm256_add_epi32(base, eight);
    }
  }
  top = carry;
  return static_cast<size_t>(o - out);
}

size_t flatten_plain(const uint64_t* bits, size_t words, uint32_t at, uint64_t& top,
                     uint32_t* out) {
  return flatten_body(bits, words, at, top, out);
}

}  // namespace

size_t Tokenizer::flatten_edges(const uint64_t* bits, size_t words, uint32_t at, uint64_t& top,
                                uint32_t* out) const {
  if (avx2_) return flatten_avx2(bits, words, at, top, out);
  return popcnt_ ? flatten_fast(bits, words, at, top, out)
                 : flatten_plain(bits, words, at, top, out);
}

namespace {

// kPrefixMask[n]: the bytes of an n-byte token's first word.
struct PrefixMasks {
  uint64_t m[kMaxToken + 1];
};
constexpr PrefixMasks make_prefix_masks() {
  PrefixMasks t{};
  for (size_t n = 1; n <= kMaxToken; n++)
    t.m[n] = n >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
  return t;
}
constexpr PrefixMasks kPrefixMask = make_prefix_masks();

}  // namespace

// The prefix is loaded whole and masked by a table lookup. (Masking the
// tail likewise instead of branching on len > 8 measured slower: the token
// stream repeats templates, so the branch predicts well.)
size_t Tokenizer::build_tokens(const char* base, size_t readable, const uint32_t* e, size_t pairs,
                               BlockToken* out) const {
  // Offsets grow: only the last few tokens of a block can start too near
  // its end, and those are left to the caller.
  const uint64_t last = readable < 8 ? 0 : readable - 8;
  while (pairs > 0 && (readable < 8 || e[2 * (pairs - 1)] > last)) pairs--;
  size_t k = 0;
  for (; k < pairs; k++) {
    const uint32_t off = e[2 * k];
    const uint32_t len = e[2 * k + 1] - off;
    if (__builtin_expect(len > kMaxToken, 0)) break;
    const char* t = base + off;
    const uint64_t pre = load_u64(t) & kPrefixMask.m[len];
    const uint64_t tail = len > 8 ? load_u64(t + len - 8) : 0;
    BlockToken& o = out[k];
    o.off = off;
    o.len = len;
    o.prefix = pre;
    o.tail = tail;
    o.hash = short_token_hash(t, len, pre, tail);
  }
  return k;
}

}  // namespace scipis
