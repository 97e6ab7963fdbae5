// The on-disk integers read back: Cursor::varint's word-at-a-time path
// against a byte-at-a-time reference written here, at every length, cut
// short at every byte, and at every distance from the buffer's end.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "util/bytes.h"

namespace {

// LEB128 as the format defines it, one byte at a time: the value, the
// bytes it took, or 0 when the bytes end first or it runs past ten.
uint64_t reference(const std::string& s, size_t at, size_t& used) {
  uint64_t v = 0;
  for (size_t i = 0; i < 10; i++) {
    if (at + i >= s.size()) break;
    const unsigned char b = static_cast<unsigned char>(s[at + i]);
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      used = i + 1;
      return v;
    }
  }
  used = 0;
  return 0;
}

std::vector<uint64_t> edge_values() {
  std::vector<uint64_t> v = {0, 1, 0x7f, UINT64_MAX, UINT64_MAX - 1};
  for (int bits = 7; bits < 64; bits += 7) {
    v.push_back((uint64_t{1} << bits) - 1);
    v.push_back(uint64_t{1} << bits);
    v.push_back((uint64_t{1} << bits) + 1);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; i++) v.push_back(rng() >> (rng() % 64));
  return v;
}

}  // namespace

TEST(Bytes, VarintsOfEveryLengthReadBackAtEveryDistanceFromTheEnd) {
  for (uint64_t x : edge_values()) {
    std::string enc;
    scipis::put_varint(enc, x);
    // Followed by 0..12 bytes (some with stop bits clear, some set), so
    // that both the word and the byte path see it.
    for (size_t after = 0; after <= 12; after++) {
      const std::string s = enc + std::string(after, after % 2 ? '\x81' : '\x03');
      scipis::Cursor c(s.data(), s.size());
      ASSERT_EQ(c.varint(), x) << after;
      ASSERT_TRUE(c.ok());
      ASSERT_EQ(c.left(), after);
    }
  }
}

TEST(Bytes, VarintsCutShortOrTooLongAreErrors) {
  for (uint64_t x : edge_values()) {
    std::string enc;
    scipis::put_varint(enc, x);
    for (size_t cut = 0; cut < enc.size(); cut++) {
      scipis::Cursor c(enc.data(), cut);
      c.varint();
      ASSERT_FALSE(c.ok()) << x << " cut at " << cut;
    }
  }
  for (size_t n = 10; n <= 14; n++) {
    const std::string s = std::string(n, '\x80') + "\x01" + std::string(8, '\x00');
    scipis::Cursor c(s.data(), s.size());
    c.varint();
    EXPECT_FALSE(c.ok()) << n;
  }
}

TEST(Bytes, RandomByteStringsReadAsTheReferenceReadsThem) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20000; round++) {
    std::string s(rng() % 24, '\0');
    // Mostly continuation bytes, so that long and unterminated runs occur.
    for (char& ch : s) ch = static_cast<char>((rng() % 4 ? 0x80 : 0) | (rng() & 0x7f));
    scipis::Cursor c(s.data(), s.size());
    size_t at = 0;
    while (true) {
      size_t used = 0;
      const uint64_t want = reference(s, at, used);
      const uint64_t got = c.varint();
      if (used == 0) {
        ASSERT_FALSE(c.ok()) << round;
        break;
      }
      ASSERT_TRUE(c.ok()) << round;
      ASSERT_EQ(got, want) << round << " at " << at;
      at += used;
      ASSERT_EQ(c.left(), s.size() - at);
      if (at == s.size()) break;
    }
  }
}

TEST(Bytes, FixedWidthIntegersAreLittleEndian) {
  const unsigned char b[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88};
  EXPECT_EQ(scipis::get_u32(b), 0x04030201u);
  EXPECT_EQ(scipis::get_u64(b), 0x8807060504030201ull);
  std::string s;
  scipis::put_u32(s, 0xdeadbeef);
  scipis::put_u64(s, 0x0123456789abcdefull);
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  EXPECT_EQ(scipis::get_u32(p), 0xdeadbeefu);
  EXPECT_EQ(scipis::get_u64(p + 4), 0x0123456789abcdefull);
}
