// The cache of checked byte ranges: a range is known only as it was added
// (same start and length), and one pushed out by another is not.
#include <gtest/gtest.h>

#include <vector>

#include "util/verified_bytes.h"

TEST(VerifiedBytes, KnownOnlyAsAdded) {
  std::vector<char> buf(1 << 20);
  scipis::VerifiedBytes v;
  EXPECT_FALSE(v.has(buf.data(), 100));
  v.add(buf.data(), 100);
  EXPECT_TRUE(v.has(buf.data(), 100));
  EXPECT_FALSE(v.has(buf.data(), 101));
  EXPECT_FALSE(v.has(buf.data() + 1, 100));
  // Thousands of ranges through 512 slots: each is either known as added
  // or not known, never known with another length.
  for (size_t i = 0; i < 5000; i++) v.add(buf.data() + 64 * i, 64 + i % 7);
  size_t known = 0;
  for (size_t i = 0; i < 5000; i++) {
    const char* p = buf.data() + 64 * i;
    EXPECT_FALSE(v.has(p, 64 + (i + 1) % 7));
    known += v.has(p, 64 + i % 7);
  }
  EXPECT_GT(known, 0u);
  EXPECT_LE(known, 512u);
}
