// CRC-32C against a bit-at-a-time reference (no table, no instruction):
// every length around the three-lane rounds, every alignment, chained.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "util/crc32c.h"

namespace {

uint32_t reference(const std::string& s, uint32_t crc = 0) {
  crc = ~crc;
  for (unsigned char byte : s) {
    crc ^= byte;
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string random_bytes(size_t n, std::mt19937_64& rng) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

}  // namespace

TEST(Crc32c, KnownValue) {
  // The check value of CRC-32C (RFC 3720, B.4).
  EXPECT_EQ(scipis::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(scipis::crc32c("", 0), 0u);
}

TEST(Crc32c, EveryLengthAroundTheRoundsAndEveryAlignment) {
  std::mt19937_64 rng(3);
  const std::string buf = random_bytes(8 * 1536 + 64, rng);
  for (size_t len = 0; len <= 3 * 1536 + 40; len += len < 64 ? 1 : (len % 1536 < 16 || len % 1536 > 1520 ? 1 : 37)) {
    for (size_t shift : {0, 1, 3, 7}) {
      const std::string s = buf.substr(shift, len);
      ASSERT_EQ(scipis::crc32c(s.data(), s.size()), reference(s)) << "len " << len << " shift " << shift;
    }
  }
  const std::string big = random_bytes(size_t{3} << 20, rng);
  EXPECT_EQ(scipis::crc32c(big.data(), big.size()), reference(big));
}

TEST(Crc32c, ChainedEqualsWhole) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 50; round++) {
    const std::string a = random_bytes(rng() % 6000, rng), b = random_bytes(rng() % 6000, rng);
    const uint32_t first = scipis::crc32c(a.data(), a.size());
    EXPECT_EQ(scipis::crc32c(b.data(), b.size(), first), reference(a + b));
    EXPECT_EQ(reference(b, first), reference(a + b));
  }
}
