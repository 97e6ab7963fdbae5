// The spec's tokenizer, and the reader's block cuts that must never split
// or join a token.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "brute_force.h"
#include "index/tokenizer.h"
#include "scipis_engine.h"

using scipis::Tokenizer;

static std::vector<std::string> tokens(const std::string& in, const char* name = "word") {
  unsigned char delim[256];
  scipis_tokenizer_named(name, delim);
  Tokenizer t(delim);
  std::string buf = in;
  std::vector<std::string> out;
  t.tokenize_in_place(reinterpret_cast<unsigned char*>(buf.data()), buf.size(),
                      [&](const char* s, size_t n) { out.emplace_back(s, n); });
  return out;
}

TEST(Tokenizer, SpecExample) {
  auto got = tokens("2015-10-18 ERROR [main] blk_-1608 10.251.42.84:50010 \xC3\x9C" "berlauf");
  std::vector<std::string> want = {"2015", "10", "18", "error", "main", "blk_", "1608",
                                   "10", "251", "42", "84", "50010", "\xC3\x9C" "berlauf"};
  EXPECT_EQ(got, want);
}

TEST(Tokenizer, HighBytesKeptAndNotLowercased) {
  auto got = tokens("\xC3\x9C\xC3\xA4 ABC\xFF");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "\xC3\x9C\xC3\xA4");
  EXPECT_EQ(got[1], "abc\xFF");
}

TEST(Tokenizer, NulBytesAreDelimiters) {
  std::string in("ab\0cd\0\0", 7);
  EXPECT_EQ(tokens(in), (std::vector<std::string>{"ab", "cd"}));
}

TEST(Tokenizer, EmptyAndDelimiterOnly) {
  EXPECT_TRUE(tokens("").empty());
  EXPECT_TRUE(tokens(" -- ..\n\t!!").empty());
}

TEST(Tokenizer, LongRunsCutAt255) {
  for (size_t len : {254u, 255u, 256u, 510u, 511u, 1000u}) {
    auto got = tokens(" " + std::string(len, 'A') + " x");
    size_t pieces = (len + 254) / 255;
    ASSERT_EQ(got.size(), pieces + 1) << len;
    for (size_t i = 0; i + 1 < pieces; i++) EXPECT_EQ(got[i].size(), 255u);
    EXPECT_EQ(got[pieces - 1].size(), len - 255 * (pieces - 1));
    EXPECT_EQ(got[0][0], 'a');
    EXPECT_EQ(got.back(), "x");
  }
}

TEST(Tokenizer, Whitespace) {
  auto got = tokens("a-b\tC.d\r\ne", "whitespace");
  EXPECT_EQ(got, (std::vector<std::string>{"a-b", "c.d", "e"}));
}

// Cutting a stream where safe_cut says, with the remainder carried into the
// next block, gives exactly the tokens of the whole stream.
TEST(Tokenizer, SafeCutNeverSplitsTokens) {
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  Tokenizer t(delim);
  std::string stream;
  unsigned seed = 7;
  for (int i = 0; i < 20000; i++) {
    seed = seed * 1103515245 + 12345;
    unsigned r = (seed >> 16) % 100;
    if (r < 5)
      stream += std::string(200 + (seed >> 8) % 400, 'q');
    else if (r < 60)
      stream += static_cast<char>('a' + (seed >> 4) % 26);
    else if (r < 65)
      stream += static_cast<char>(0x80 + (seed >> 4) % 128);
    else
      stream += " .-:\n"[(seed >> 4) % 5];
  }
  auto whole = tokens(stream);
  for (size_t block : {1u, 7u, 64u, 255u, 256u, 1000u}) {
    std::vector<std::string> got;
    std::string carry;
    size_t off = 0;
    while (off < stream.size()) {
      size_t n = std::min(block, stream.size() - off);
      std::string buf = carry + stream.substr(off, n);
      off += n;
      bool eof = off == stream.size();
      size_t cut = eof ? buf.size()
                       : t.safe_cut(reinterpret_cast<unsigned char*>(buf.data()), buf.size());
      carry = buf.substr(cut);
      ASSERT_LT(carry.size(), 255u);
      std::string part = buf.substr(0, cut);
      t.tokenize_in_place(reinterpret_cast<unsigned char*>(part.data()), part.size(),
                          [&](const char* s, size_t len) { got.emplace_back(s, len); });
    }
    EXPECT_EQ(got, whole) << "block " << block;
  }
}

// Random bytes under random delimiter tables, every length up to a few
// chunks, against the tests' byte-at-a-time reading of the spec.
TEST(Tokenizer, MatchesAByteAtATimeReference) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; round++) {
    unsigned char delim[256];
    const unsigned density = static_cast<unsigned>(rng() % 100);
    for (int b = 0; b < 256; b++) delim[b] = rng() % 100 < density ? 1 : 0;
    Tokenizer t(delim);
    const size_t n = rng() % 9000;
    std::string in(n, '\0');
    for (auto& c : in) c = static_cast<char>(round % 2 ? rng() : "aB \n\x80\xff"[rng() % 6]);
    const std::vector<std::string> want = brute::tokenize(in, delim);
    std::string buf = in;
    std::vector<std::string> got;
    t.tokenize_in_place(reinterpret_cast<unsigned char*>(buf.data()), buf.size(),
                        [&](const char* s, size_t len) { got.emplace_back(s, len); });
    ASSERT_EQ(got, want) << "round " << round;
  }
}

// The indexers' bulk scan against the same reference: random bytes under
// random delimiter tables, lengths across several 16 KiB chunks, runs far
// longer than 255 bytes that cross chunk edges, and nothing readable past
// the block (the first and last words must then be loaded with care).
TEST(Tokenizer, BlockScanMatchesTheReference) {
  std::mt19937_64 rng(12);
  auto scratch = std::make_unique<scipis::ScanScratch>();
  for (int round = 0; round < 120; round++) {
    unsigned char delim[256];
    const unsigned density = static_cast<unsigned>(rng() % 100);
    for (int b = 0; b < 256; b++) delim[b] = rng() % 100 < density ? 1 : 0;
    delim[' '] = 1;
    delim['a'] = 0;
    Tokenizer t(delim);
    // The AVX2, SSE4.1 and scalar paths in turn.
    const int level = round % 3;
    t.limit_instruction_sets(level);
    const size_t n = round < 4 ? static_cast<size_t>(round) : rng() % 60000;
    std::string in;
    while (in.size() < n) {
      const unsigned r = static_cast<unsigned>(rng() % 100);
      if (r < 2)
        in.append(1 + rng() % 40000, 'a');  // a run over chunk edges
      else if (r < 50)
        in.push_back(static_cast<char>(rng()));
      else
        in.push_back(" aB\n\x80\xff"[rng() % 6]);
    }
    in.resize(n);
    const std::vector<std::string> want = brute::tokenize(in, delim);
    const size_t slack = round % 2 ? 8 : 0;  // readable bytes after the block
    std::string buf = in + std::string(slack, 'a');
    std::vector<std::string> got;
    const char* base = buf.data();
    t.tokenize_block(reinterpret_cast<unsigned char*>(buf.data()), n, n + slack, *scratch,
                     [&](scipis::BlockToken* tok, size_t count) {
                       for (size_t i = 0; i < count; i++) {
                         const char* p = base + tok[i].off;
                         const size_t len = tok[i].len;
                         ASSERT_EQ(tok[i].prefix, scipis::token_prefix(p, len));
                         ASSERT_EQ(tok[i].tail, len > 8 ? scipis::load_u64(p + len - 8) : 0);
                         got.emplace_back(p, len);
                       }
                     });
    ASSERT_EQ(got, want) << "round " << round << " n " << n << " level " << level;
  }
}
