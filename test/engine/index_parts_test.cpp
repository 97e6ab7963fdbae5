// The in-memory index's parts checked against plain standard-library
// equivalents: the radix sort against std::sort, the block counter against
// a std::map of token counts, the token hash's prefix against its bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "index/block_counter.h"
#include "index/radix_sort.h"
#include "index/segment_reader.h"
#include "index/tfidf_index.h"
#include "util/bytes.h"

using scipis::KeyIndex;

TEST(RadixSort, OrdersLikeStdSort) {
  std::mt19937_64 rng(7);
  for (size_t n : {0, 1, 2, 3, 100, 4096, 70000}) {
    std::vector<KeyIndex> v(n), scratch(n);
    for (size_t i = 0; i < n; i++) {
      uint64_t k = rng();
      // Many keys share their top half, some share everything.
      if (i % 3 == 0) k = (k & 0xffffffffull) | 0x1234567800000000ull;
      if (i % 7 == 0) k = 42;
      v[i] = KeyIndex{k, i};
    }
    std::vector<KeyIndex> want = v;
    std::stable_sort(want.begin(), want.end(),
                     [](const KeyIndex& a, const KeyIndex& b) { return a.key < b.key; });
    scipis::radix_sort(v.data(), n, scratch.data());
    ASSERT_EQ(v.size(), want.size());
    for (size_t i = 0; i < n; i++) ASSERT_EQ(v[i].key, want[i].key) << "n=" << n << " i=" << i;
  }
}

namespace {

// Tokens of random lengths 1..255 over a small alphabet (many repeats, some
// equal prefixes with different tails), laid out in one block.
struct Block {
  std::string bytes;
  std::vector<std::pair<size_t, size_t>> tokens;  // offset, length
};

Block make_block(uint64_t seed, size_t count) {
  std::mt19937_64 rng(seed);
  Block b;
  std::vector<std::string> vocab;
  for (int i = 0; i < 3000; i++) {
    size_t len = 1 + rng() % (i % 10 == 0 ? 255 : 20);
    std::string t;
    for (size_t j = 0; j < len; j++) t.push_back(static_cast<char>('a' + rng() % 3));
    vocab.push_back(t);
  }
  for (size_t i = 0; i < count; i++) {
    const std::string& t = vocab[rng() % vocab.size()];
    b.tokens.push_back({b.bytes.size(), t.size()});
    b.bytes += t;
    b.bytes.push_back(' ');
  }
  b.bytes.append(8, ' ');  // readable slack, as the read buffers have
  return b;
}

}  // namespace

TEST(BlockCounter, CountsLikeAMap) {
  for (int bits : {6, 10, 14}) {
    Block b = make_block(static_cast<uint64_t>(bits), 50000);
    std::map<std::string, uint64_t> want, got;
    scipis::BlockCounter counter(bits);
    const char* base = b.bytes.data();
    auto drain = [&] {
      counter.drain(base, [&](const char* p, size_t n, uint64_t prefix, uint32_t count) {
        EXPECT_EQ(prefix, scipis::token_prefix(p, n));
        got[std::string(p, n)] += count;
      });
    };
    for (auto [off, len] : b.tokens) {
      const char* p = base + off;
      want[std::string(p, len)]++;
      const uint64_t pre = scipis::token_prefix(p, len);
      const uint64_t tail = len > 8 ? scipis::load_u64(p + len - 8) : 0;
      counter.add(base, static_cast<uint32_t>(off), len, pre, tail,
                  scipis::short_token_hash(p, len, pre, tail));
      if (counter.full()) drain();
    }
    drain();
    EXPECT_TRUE(counter.empty());
    EXPECT_EQ(got, want) << "bits=" << bits;
  }
}

TEST(TokenHash, DependsOnEveryByteAndTheLength) {
  std::string s(40, 'x');
  const uint64_t h = scipis::token_hash(s.data(), s.size());
  for (size_t n = 1; n < s.size(); n++)
    EXPECT_NE(scipis::token_hash(s.data(), n), h) << n;
  for (size_t i = 0; i < s.size(); i++) {
    std::string t = s;
    t[i] = 'y';
    EXPECT_NE(scipis::token_hash(t.data(), t.size()), h) << i;
  }
}

// Distinct terms whose 64-bit hashes are equal (forced here; next to
// impossible in practice) keep their own postings.
TEST(TfIdfIndex, TermsSharingAHashStayApart) {
  scipis::TfIdfIndex tf(1 << 20, 2);
  auto key = [](const std::string& t) {
    scipis::TermKey k = scipis::TermKey::of(t);
    k.hash = 42;
    return k;
  };
  const std::string alpha = "alpha", beta = "beta", gamma = "gamma_longer_than_16";
  // (term, doc, count), documents in ascending order.
  const std::vector<std::tuple<std::string, uint64_t, uint32_t>> adds = {
      {alpha, 0, 2}, {beta, 0, 1}, {alpha, 0, 1}, {gamma, 1, 1}, {alpha, 1, 1},
      {beta, 2, 3},  {alpha, 3, 1}, {alpha, 4, 5}, {gamma, 4, 1}};
  std::map<std::string, std::map<uint64_t, uint32_t>> want;
  for (const auto& [t, doc, count] : adds) {
    tf.add(key(t), doc, count);
    want[t][doc] += count;
  }
  scipis::OutBuffer data;
  std::vector<scipis::OutBuffer> metas;
  tf.serialise(1, data, metas);
  ASSERT_EQ(metas.size(), 1u);
  scipis::TfMeta meta("meta", std::string(metas[0].view()));
  EXPECT_EQ(meta.size(), 3u);
  for (const auto& [t, postings] : want) {
    auto ref = meta.find(t);
    ASSERT_TRUE(ref.has_value()) << t;
    std::vector<scipis::Posting> got;
    scipis::decode_postings("data", data.view().substr(ref->offset, ref->len),
                            ref->df, 100, got);
    std::map<uint64_t, uint32_t> got_map;
    for (const auto& p : got) got_map[p.seq] = p.tf;
    EXPECT_EQ(got_map, postings) << t;
  }
}
