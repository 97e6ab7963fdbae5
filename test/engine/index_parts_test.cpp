// The in-memory index's parts checked against plain standard-library
// equivalents: the TF-IDF index and the block counter against std::maps,
// the token hash's prefix against its bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "index/block_counter.h"
#include "index/segment_format.h"
#include "index/segment_reader.h"
#include "index/tfidf_index.h"
#include "test_util.h"
#include "util/bytes.h"
#include "util/error.h"

// Random terms (short and long, many sharing their first words) in random
// documents, through budgets small enough for dozens of flushes, checking
// full() as often as the pipeline does: every flush's dictionary must be in
// order, each term in its split and found by TfMeta::find, and the union
// of the flushes' postings must equal a map's.
TEST(TfIdfIndex, FlushesMatchAMapOfPostings) {
  std::mt19937_64 rng(11);
  std::vector<std::string> vocab;
  for (int i = 0; i < 3000; i++) {
    const size_t len = i % 10 == 0 ? 1 + rng() % 255 : 1 + rng() % 24;
    std::string t(len, 'a');
    // NUL bytes too: the whitespace tokenizer keeps them, and a term
    // padded with zeros must still sort after its prefix.
    for (size_t j = 0; j < len; j++) t[j] = std::string("abc0_\x81\0", 7)[rng() % 7];
    if (i % 5 == 0 && len > 8) t.replace(0, 8, "commonpf");
    if (i % 7 == 0 && len > 16) t.replace(0, 16, "commonpfcommonp_");
    vocab.push_back(t);
  }
  // Every prefix of one long term: ties on one, two, ... words, ended at
  // each byte.
  const std::string chain = "commonpfcommonp_commonpfcommonpfab0_\x81\x81z";
  for (size_t n = 1; n <= chain.size(); n++) vocab.push_back(chain.substr(0, n));
  // The same, followed by NUL bytes: equal to their prefix in every
  // zero-padded word.
  for (size_t n : {1, 7, 8, 9, 16, 17, 30})
    for (size_t z : {1, 2, 8, 9}) vocab.push_back(chain.substr(0, n) + std::string(z, '\0'));
  size_t grid = 0;
  for (uint64_t budget : {uint64_t{65536}, uint64_t{1} << 18, uint64_t{4} << 20}) {
    for (int depth : {1, 3, 8, 300}) {
      for (int sf : {1, 7, 16}) {
        if (!testutil::sampled(grid++, 3)) continue;
        scipis::TfIdfIndex tf(budget, depth);
        std::map<std::string, std::map<uint64_t, uint32_t>> want, got;
        scipis::OutBuffer data;
        std::vector<scipis::OutBuffer> metas;
        int flushes = 0;
        auto flush = [&] {
          tf.serialise(sf, data, metas);
          tf.clear();
          flushes++;
          ASSERT_EQ(metas.size(), static_cast<size_t>(sf));
          // Every split carries the flush's one code; each opens sharing
          // the first split's decoding tables.
          std::unique_ptr<scipis::TfMeta> first_meta;
          for (int s = 0; s < sf; s++) {
            ASSERT_EQ(metas[s].view().substr(scipis::kHeaderSize + scipis::kTfMetaHead, scipis::kCodeTableBytes),
                      metas[0].view().substr(scipis::kHeaderSize + scipis::kTfMetaHead, scipis::kCodeTableBytes))
                << "split " << s;
            scipis::TfMeta meta("meta", std::string(metas[s].view()), first_meta.get());
            if (!first_meta) first_meta = std::make_unique<scipis::TfMeta>("meta", std::string(metas[s].view()));
            const auto all = meta.all();
            ASSERT_EQ(all.size(), meta.size());
            for (size_t i = 0; i < all.size(); i++) {
              const std::string& t = all[i].first;
              const uint64_t h = scipis::dict_hash(t);
              ASSERT_EQ(scipis::dict_split(h, static_cast<uint32_t>(sf)), static_cast<uint32_t>(s));
              if (i) {
                ASSERT_LT(all[i - 1].first, t) << "out of order at " << i;
              }
              auto ref = meta.find(t);
              ASSERT_TRUE(ref.has_value()) << t;
              ASSERT_EQ(ref->offset, all[i].second.offset);
              std::vector<scipis::Posting> postings;
              if (ref->len == 0) {
                ASSERT_EQ(ref->df, 1u);
                postings.push_back({ref->seq, ref->tf});
              } else {
                ASSERT_GT(ref->df, 1u);
                const std::string_view read =
                    data.view().substr(ref->read_offset(), ref->read_len());
                scipis::decode_postings("data", scipis::region_in("data", read, *ref), *ref,
                                        UINT64_MAX, postings);
              }
              for (const auto& p : postings) {
                ASSERT_EQ(got[t].count(p.seq), 0u);
                got[t][p.seq] = p.tf;
              }
            }
          }
        };
        uint32_t since = 0;
        for (uint64_t doc = 0; doc < 400; doc++) {
          const size_t distinct = 1 + rng() % 120;
          std::map<std::string, uint32_t> counts;
          for (size_t i = 0; i < distinct; i++) counts[vocab[rng() % vocab.size()]] += 1 + rng() % 3;
          // Terms of every document fill TF arrays up to their largest.
          counts["every"]++;
          counts[chain] += 2;
          for (const auto& [t, c] : counts) {
            tf.add(scipis::TermKey::of(t), doc, c);
            want[t][doc] += c;
            if (++since % scipis::TfIdfIndex::kAddsPerFullCheck == 0 && tf.full()) flush();
          }
        }
        if (!tf.empty()) flush();
        EXPECT_EQ(got, want) << "budget " << budget << " depth " << depth << " sf " << sf;
        if (budget == 65536) {
          EXPECT_GT(flushes, 10);
        }
      }
    }
  }
}

// A flush of many terms, as a build's holds (millions): random terms, a
// third of them sharing their first word and some of those their first
// three (runs of thousands tied on one, two and three words, as a source
// tree's register names make), some starting with the bytes at either end
// of a byte's range (NUL, 0xff), must come out in byte order, each once.
TEST(TfIdfIndex, AFlushOfManyTermsIsInOrder) {
  std::mt19937_64 rng(29);
  std::set<std::string> terms;
  while (terms.size() < 150000) {
    const size_t len = 1 + rng() % 40;
    std::string t(len, 'a');
    for (size_t j = 0; j < len; j++) t[j] = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 'a' + rng() % 26);
    if (terms.size() % 3 == 0 && len > 8) t.replace(0, 8, "prefix__");
    if (terms.size() % 12 == 0 && len > 24) t.replace(0, 24, std::string("prefix__second\0_third___", 24));
    if (terms.size() % 11 == 0) t[0] = terms.size() % 2 ? '\0' : '\xff';
    terms.insert(t);
  }
  for (int sf : {1, 7}) {
    scipis::TfIdfIndex tf(uint64_t{64} << 20, 4);
    uint64_t doc = 0;
    for (const std::string& t : terms) tf.add(scipis::TermKey::of(t), doc++ / 50, 1);
    ASSERT_EQ(tf.terms(), terms.size()) << "one flush holds them all";
    scipis::OutBuffer data;
    std::vector<scipis::OutBuffer> metas;
    tf.serialise(sf, data, metas);
    size_t seen = 0;
    for (int s = 0; s < sf; s++) {
      const scipis::TfMeta meta("meta", std::string(metas[s].view()));
      const auto all = meta.all();
      for (size_t i = 0; i < all.size(); i++) {
        ASSERT_TRUE(terms.count(all[i].first)) << "split " << s << " entry " << i;
        if (i) {
          ASSERT_LT(all[i - 1].first, all[i].first) << "split " << s << " entry " << i;
        }
      }
      seen += all.size();
    }
    EXPECT_EQ(seen, terms.size()) << "sf " << sf;
  }
}

// With one split the flush sorts in the table's own memory: the index is
// refused until cleared, and cleared it flushes the same adds to the same
// bytes as a fresh one.
TEST(TfIdfIndex, AFlushedIndexIsRefusedUntilCleared) {
  for (int sf : {1, 7}) {
    std::mt19937_64 rng(41);
    std::vector<std::pair<std::string, uint64_t>> adds;
    for (uint64_t doc = 0; doc < 300; doc++)
      for (int w = 0; w < 40; w++) {
        const uint64_t r = rng();
        adds.emplace_back(r % 5 ? "w" + std::to_string(r % 3000) : "long_identifier_" + std::to_string(r), doc);
      }
    auto fill = [&](scipis::TfIdfIndex& tf) {
      for (const auto& [t, doc] : adds) tf.add(scipis::TermKey::of(t), doc, 1);
    };
    scipis::TfIdfIndex fresh(uint64_t{4} << 20, 4);
    fill(fresh);
    scipis::OutBuffer want_data, got_data;
    std::vector<scipis::OutBuffer> want_metas, got_metas;
    fresh.serialise(sf, want_data, want_metas);

    scipis::TfIdfIndex tf(uint64_t{4} << 20, 4);
    fill(tf);
    tf.serialise(sf, got_data, got_metas);
    EXPECT_THROW(tf.add(scipis::TermKey::of("after"), 400, 1), scipis::Error) << sf;
    EXPECT_THROW(tf.serialise(sf, got_data, got_metas), scipis::Error) << sf;
    tf.clear();
    fill(tf);
    tf.serialise(sf, got_data, got_metas);
    EXPECT_EQ(got_data.view(), want_data.view()) << sf;
    ASSERT_EQ(got_metas.size(), want_metas.size());
    for (size_t i = 0; i < want_metas.size(); i++) EXPECT_EQ(got_metas[i].view(), want_metas[i].view()) << sf << " " << i;
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
      counter.drain(base, [&](const char* p, size_t n, uint64_t prefix, uint64_t tail, uint64_t hash,
                              uint32_t count) {
        EXPECT_EQ(prefix, scipis::token_prefix(p, n));
        EXPECT_EQ(tail, n > 8 && n <= 16 ? scipis::load_u64(p + n - 8) : 0);
        EXPECT_EQ(hash, scipis::token_hash(p, n));
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

// The hash from a token's first and last words is the one from its bytes,
// at every length (NUL bytes included, past 16 bytes read whole).
TEST(TokenHash, FromItsLastWordIsTheHashOfItsBytes) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; round++) {
    std::string s(48, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng());
    for (size_t n = 0; n + 8 <= s.size(); n++) {
      const uint64_t pre = scipis::token_prefix(s.data(), n);
      const uint64_t tail = n > 8 ? scipis::load_u64(s.data() + n - 8) : 0;
      ASSERT_EQ(scipis::token_hash(s.data(), n, pre, tail), scipis::token_hash(s.data(), n, pre)) << n;
    }
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

namespace {
// Adds (term, doc, count) with every term's 64-bit hash forced equal (next
// to impossible in practice), documents in ascending order; each term
// must keep its own postings.
void check_apart(const std::vector<std::tuple<std::string, uint64_t, uint32_t>>& adds) {
  scipis::TfIdfIndex tf(1 << 20, 2);
  auto key = [](const std::string& t) {
    scipis::TermKey k = scipis::TermKey::of(t);
    k.hash = 42;
    return k;
  };
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
  EXPECT_EQ(meta.size(), want.size());
  for (const auto& [t, postings] : want) {
    auto ref = meta.find(t);
    ASSERT_TRUE(ref.has_value()) << t;
    std::vector<scipis::Posting> got;
    const std::string_view read = data.view().substr(ref->read_offset(), ref->read_len());
    scipis::decode_postings("data", scipis::region_in("data", read, *ref), *ref, 100, got);
    std::map<uint64_t, uint32_t> got_map;
    for (const auto& p : got) got_map[p.seq] = p.tf;
    EXPECT_EQ(got_map, postings) << t;
  }
}
}  // namespace

TEST(TfIdfIndex, TermsSharingAHashStayApart) {
  const std::string alpha = "alpha", beta = "beta", gamma = "gamma_longer_than_16";
  check_apart({{alpha, 0, 2}, {beta, 0, 1}, {alpha, 0, 1}, {gamma, 1, 1}, {alpha, 1, 1},
               {beta, 2, 3},  {alpha, 3, 1}, {alpha, 4, 5}, {gamma, 4, 1}});
}

// Terms of 9 to 16 bytes are told apart by their first and last words
// (TermKey::tail), longer ones by their bytes: pairs of one length that
// share the hash and the first word and differ in one byte past it.
TEST(TfIdfIndex, TermsSharingAHashAndFirstWordStayApart) {
  std::vector<std::tuple<std::string, uint64_t, uint32_t>> adds;
  for (size_t n = 9; n <= 24; n++) {
    const uint64_t doc = 2 * (n - 9);
    const std::string a = "firstwrd" + std::string(n - 8, 'q');
    adds.push_back({a, doc, 1});
    for (size_t at = 8; at < n; at++) {
      std::string b = a;
      b[at] = 'r';
      adds.push_back({b, doc, 2});
      adds.push_back({b, doc + 1, 3});
    }
    adds.push_back({a, doc + 1, 4});
  }
  check_apart(adds);
}
