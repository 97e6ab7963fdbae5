// Little-endian fixed-width and varint encoding for the on-disk formats.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace scipis {

inline void put_u32(std::string& out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; i++) b[i] = static_cast<char>(v >> (8 * i));
  out.append(b, 4);
}
inline void put_u64(std::string& out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; i++) b[i] = static_cast<char>(v >> (8 * i));
  out.append(b, 8);
}
inline void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
// The same into a buffer with room (10 bytes at most); returns the end.
inline char* write_varint(char* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}
inline char* write_u32(char* out, uint32_t v) {
  for (int i = 0; i < 4; i++) *out++ = static_cast<char>(v >> (8 * i));
  return out;
}
inline char* write_u64(char* out, uint64_t v) {
  for (int i = 0; i < 8; i++) *out++ = static_cast<char>(v >> (8 * i));
  return out;
}
// One load each (a byte loop was not merged into one by the compiler: a
// twentieth of a top-10 query's instructions once).
inline uint32_t get_u32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}
inline uint64_t get_u64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

// Bounds-checked reader over a verified buffer; ok() turns false instead of
// reading past the end, so a damaged length never walks off the buffer.
class Cursor {
 public:
  Cursor(const void* p, size_t n)
      : p_(static_cast<const unsigned char*>(p)), end_(p_ + n) {}
  bool ok() const { return ok_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  const unsigned char* pos() const { return p_; }
  uint64_t varint() {
    if (p_ < end_ && *p_ < 0x80) return *p_++;
    // Eight bytes ahead: a varint of up to eight bytes is found by its
    // stop bit and its 7-bit groups gathered in three steps, not a byte
    // at a time (a record's mtime, size and inode take four to six).
    if (end_ - p_ >= 8) {
      uint64_t x;
      std::memcpy(&x, p_, 8);
      if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
      const uint64_t stops = ~x & 0x8080808080808080ull;
      if (stops) {
        const int bits = __builtin_ctzll(stops) + 1;  // through the last byte's stop bit
        p_ += bits / 8;
        if (bits < 64) x &= (uint64_t{1} << bits) - 1;
        x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
        x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
        return ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
      }
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return bad();
      unsigned char b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return bad();
  }
  uint32_t u32() {
    if (left() < 4) return static_cast<uint32_t>(bad());
    uint32_t v = get_u32(p_);
    p_ += 4;
    return v;
  }
  uint64_t u64() {
    if (left() < 8) return bad();
    uint64_t v = get_u64(p_);
    p_ += 8;
    return v;
  }
  std::string_view bytes(size_t n) {
    if (left() < n) {
      bad();
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  uint64_t bad() {
    ok_ = false;
    p_ = end_;
    return 0;
  }
  const unsigned char* p_;
  const unsigned char* end_;
  bool ok_ = true;
};

inline uint64_t load_u64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// A token's first min(n, 8) bytes as a little-endian word, zero-padded.
// Reads only [p, p+n).
inline uint64_t token_prefix(const char* p, size_t n) {
  if (n >= 8) return load_u64(p);
  uint64_t v = 0;
  std::memcpy(&v, p, n);
  return v;
}
// The same when 8 bytes from p are readable, whatever n.
inline uint64_t token_prefix_unsafe(const char* p, size_t n) {
  const uint64_t v = load_u64(p);
  return n >= 8 ? v : v & ((uint64_t{1} << (8 * n)) - 1);
}

// Bytes [8, n) of two tokens of equal length n > 8 (their first words
// already compared equal): a word at a time, the last one overlapping,
// inline (a call to memcmp cost more than the compare of most ids).
inline bool same_tail(const char* a, const char* b, size_t n) {
  for (size_t i = 8; i + 8 < n; i += 8)
    if (load_u64(a + i) != load_u64(b + i)) return false;
  return load_u64(a + n - 8) == load_u64(b + n - 8);
}

// 64x64 -> 128-bit multiply, folded: the mixing step of wyhash.
inline uint64_t mul_fold(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// wyhash's constants, shared by the token hashes.
inline constexpr uint64_t kHashK0 = 0xa0761d6478bd642full, kHashK1 = 0xe7037ed1a0b428dbull,
                          kHashK2 = 0x8ebc6af09c88c6e3ull;

// An in-memory hash for short keys (tokens), one folded multiply per word
// as in wyhash; prefix is token_prefix of the same bytes. Not stored on
// disk.
inline uint64_t token_hash(const char* p, size_t n, uint64_t prefix) {
  uint64_t h = n * kHashK2;
  if (n > 8) {
    size_t i = 8;
    for (; i + 8 < n; i += 8) h = mul_fold(h ^ load_u64(p + i) ^ kHashK0, kHashK1);
    h ^= load_u64(p + n - 8);  // the last word, overlapping
  }
  return mul_fold(prefix ^ kHashK0, h ^ kHashK1);
}
// The same hash of a token whose last word is known (tail: load_u64(p + n
// - 8) when n > 8, else 0, as BlockToken's): a token of up to 16 bytes is
// not read again, which the block counter's drain, long after the token
// was scanned, found waiting on its bytes.
inline uint64_t token_hash(const char* p, size_t n, uint64_t prefix, uint64_t tail) {
  if (n > 16) return token_hash(p, n, prefix);
  return mul_fold(prefix ^ kHashK0, (n * kHashK2 ^ tail) ^ kHashK1);
}
inline uint64_t token_hash(const char* p, size_t n) {
  return token_hash(p, n, token_prefix(p, n));
}

// A hash of a token from its first word (token_prefix) and its last 8
// bytes (0 when n <= 8): one multiply for the tokens of up to 16 bytes,
// nearly all log tokens; token_hash for longer ones.
inline uint64_t short_token_hash(const char* p, size_t n, uint64_t prefix, uint64_t tail) {
  if (__builtin_expect(n > 16, 0)) return token_hash(p, n, prefix);
  return mul_fold(prefix ^ kHashK0 ^ (static_cast<uint64_t>(n) << 56), tail ^ kHashK1);
}

// FNV-1a: a fixed hash that picks a key's metadata split; part of the format.
inline uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace scipis
