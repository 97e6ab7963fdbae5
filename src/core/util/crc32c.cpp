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

__attribute__((target("sse4.2"))) uint32_t crc_hw(const unsigned char* p,
                                                  size_t len, uint32_t crc) {
  uint64_t c = crc;
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
