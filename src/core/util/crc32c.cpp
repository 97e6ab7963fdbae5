#include "util/crc32c.h"

#include <cstring>
#include <nmmintrin.h>

namespace scipis {
namespace {

struct Table {
  uint32_t t[256];
  Table() {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
  }
};

uint32_t crc_soft(const unsigned char* p, size_t len, uint32_t crc) {
  static const Table table;
  for (size_t i = 0; i < len; i++) crc = table.t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

// Bytes per lane of crc_hw's three: a round is 3 * kLane bytes.
constexpr size_t kLane = 512;

// The CRC register after kLane zero bytes, from register s: linear in s,
// so four tables, one per byte of s.
struct LaneShift {
  uint32_t t[4][256];
  __attribute__((target("sse4.2"))) LaneShift() {
    for (int b = 0; b < 4; b++)
      for (uint32_t v = 0; v < 256; v++) {
        uint64_t c = uint64_t{v} << (8 * b);
        for (size_t i = 0; i < kLane; i += 8) c = _mm_crc32_u64(c, 0);
        t[b][v] = static_cast<uint32_t>(c);
      }
  }
  uint32_t operator()(uint32_t s) const {
    return t[0][s & 0xff] ^ t[1][(s >> 8) & 0xff] ^ t[2][(s >> 16) & 0xff] ^ t[3][s >> 24];
  }
};

// The crc32 instruction takes three cycles and can start every cycle:
// three lanes of a round run side by side, from registers c, 0 and 0,
// and join as the register is linear (the CRC of A then B is B's from 0
// xor A's shifted over B's length). Segment bodies and a merge's inputs
// are megabytes.
__attribute__((target("sse4.2"))) uint32_t crc_hw(const unsigned char* p,
                                                  size_t len, uint32_t crc) {
  uint64_t c = crc;
  if (len >= 3 * kLane) {
    static const LaneShift shift;
    for (; len >= 3 * kLane; p += 3 * kLane, len -= 3 * kLane) {
      uint64_t a = c, b = 0, d = 0;
      for (size_t i = 0; i < kLane; i += 8) {
        uint64_t x, y, z;
        std::memcpy(&x, p + i, 8);
        std::memcpy(&y, p + kLane + i, 8);
        std::memcpy(&z, p + 2 * kLane + i, 8);
        a = _mm_crc32_u64(a, x);
        b = _mm_crc32_u64(b, y);
        d = _mm_crc32_u64(d, z);
      }
      c = shift(shift(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^ static_cast<uint32_t>(d);
    }
  }
  while (len >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    len -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (len--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

bool have_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}

}  // namespace

uint32_t crc32c(const void* data, size_t len, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  crc = have_sse42() ? crc_hw(p, len, crc) : crc_soft(p, len, crc);
  return ~crc;
}

}  // namespace scipis
