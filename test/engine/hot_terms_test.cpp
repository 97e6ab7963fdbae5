// The dictionary's hot terms (segment_format.h): which terms a flush lists
// (checked against a count of the dictionary's own dfs), that a lookup
// through them gives what the term's group gives, and that damage to them
// is an error or a right answer, never a wrong one.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "index/segment_format.h"
#include "index/segment_reader.h"
#include "index/tfidf_index.h"
#include "util/bytes.h"
#include "util/error.h"

namespace {

// terms terms over docs documents, term i in the first df_of(i) of them
// (at most docs), with tfs of up to 70,000.
template <typename DfOf>
std::vector<scipis::OutBuffer> hot_flush(int sf, size_t terms, uint64_t docs, scipis::OutBuffer& data,
                                         DfOf&& df_of) {
  std::mt19937_64 rng(7);
  scipis::TfIdfIndex tf(uint64_t{64} << 20, 3);
  std::vector<std::string> vocab;
  std::vector<uint64_t> dfs;
  for (size_t i = 0; i < terms; i++) {
    // Short and long terms, some sharing a first word.
    std::string t = (i % 3 ? "t" : "sharedpf_") + std::to_string(i * 2654435761u % 1000003);
    if (i % 11 == 0) t += std::string(20 + i % 200, 'x');
    vocab.push_back(t);
    dfs.push_back(std::min<uint64_t>(docs, df_of(i)));
  }
  for (uint64_t doc = 0; doc < docs; doc++)
    for (size_t i = 0; i < terms; i++)
      if (doc < dfs[i]) tf.add(scipis::TermKey::of(vocab[i]), doc, static_cast<uint32_t>(1 + rng() % 70000 % (i + 2)));
  std::vector<scipis::OutBuffer> metas;
  tf.serialise(sf, data, metas);
  return metas;
}

// Zipf-like: a few terms in most documents, most in one.
std::vector<scipis::OutBuffer> zipf_flush(int sf, size_t terms, uint64_t docs, scipis::OutBuffer& data) {
  return hot_flush(sf, terms, docs, data, [&](size_t i) { return std::max<uint64_t>(1, docs / (i + 1)); });
}

struct HotSection {
  size_t n = 0, at = 0, dir = 0;  // entries, where they and the directory start
  std::vector<std::string> terms;
};

// Read from the layout as documented, apart from the reader's code.
HotSection hot_of(const std::string& m) {
  const auto* p = reinterpret_cast<const unsigned char*>(m.data());
  HotSection h;
  h.n = scipis::get_u32(p + scipis::kHeaderSize + 20);
  const size_t bytes = scipis::get_u32(p + scipis::kHeaderSize + 24);
  const size_t chunks = (h.n + scipis::kIndexChunk - 1) / scipis::kIndexChunk;
  // Then the directory: a u32 per bucket, the count, a crc.
  const size_t dir = h.n ? 4 * (scipis::hot_buckets(h.n) + 1) + 4 : 0;
  h.at = m.size() - dir - bytes - 4 * chunks - h.n * scipis::kHotEntry;
  const size_t terms_at = m.size() - dir - bytes;
  h.dir = m.size() - dir;
  for (size_t i = 0; i < h.n; i++) {
    const size_t a = scipis::get_u32(p + h.at + i * scipis::kHotEntry + 24);
    const size_t b = i + 1 < h.n ? scipis::get_u32(p + h.at + (i + 1) * scipis::kHotEntry + 24) : bytes;
    h.terms.push_back(m.substr(terms_at + a, b - a));
  }
  return h;
}

void expect_same(const scipis::TermRef& a, const scipis::TermRef& b, const std::string& t) {
  EXPECT_EQ(a.offset, b.offset) << t;
  EXPECT_EQ(a.len, b.len) << t;
  EXPECT_EQ(a.df, b.df) << t;
  EXPECT_EQ(a.base, b.base) << t;
  EXPECT_EQ(a.read_offset(), b.read_offset()) << t;
  EXPECT_EQ(a.read_len(), b.read_len()) << t;
  if (a.len == 0) {
    EXPECT_EQ(a.seq, b.seq) << t;
    EXPECT_EQ(a.tf, b.tf) << t;
  }
}

}  // namespace

// Zipf-like dfs, and dfs of a few values each held by many terms (the
// share's bound falls inside a run of ties).
TEST(HotTerms, TheMostFrequentWithinTheShare) {
  for (int sf : {1, 3})
    for (bool ties : {false, true}) {
      scipis::OutBuffer data;
      const auto metas = ties ? hot_flush(sf, 6000, 60, data, [](size_t i) { return 1 + i % 23 + (i % 97 == 0) * 30; })
                              : zipf_flush(sf, 3000, 1500, data);
      size_t hot_total = 0;
      for (int s = 0; s < sf; s++) {
        const std::string m(metas[s].view());
        const scipis::TfMeta meta("meta", m);
        const auto all = meta.all();
        // The share's rule from the groups' own dfs: the least df >= 2
        // that leaves at most count / kHotShare terms at or above it.
        const size_t cap = all.size() / scipis::kHotShare;
        uint64_t from = 2;
        auto at_least = [&](uint64_t d) {
          size_t n = 0;
          for (const auto& e : all) n += e.second.df >= d;
          return n;
        };
        while (at_least(from) > cap) from++;
        std::set<std::string> want;
        for (const auto& e : all)
          if (e.second.df >= from && e.second.len > 0) want.insert(e.first);
        const HotSection h = hot_of(m);
        EXPECT_EQ(std::set<std::string>(h.terms.begin(), h.terms.end()), want) << "split " << s;
        EXPECT_LE(h.n, cap);
        hot_total += h.n;
        // The directory: bucket k starts at the first entry whose hash's
      // top bits are k or more.
      if (h.n) {
        const auto* p = reinterpret_cast<const unsigned char*>(m.data());
        const size_t buckets = scipis::hot_buckets(h.n);
        EXPECT_GE(buckets * 8, h.n);
        EXPECT_LE(buckets * 4, std::max<size_t>(h.n, 4));
        const unsigned bits = scipis::hot_bucket_bits(buckets);
        for (size_t k = 0; k <= buckets; k++) {
          size_t first = 0;
          while (first < h.n && k > 0 &&
                 (bits ? (scipis::dict_hash(h.terms[first]) >> 32) >> (32 - bits) : 0) < k)
            first++;
          if (k == buckets) first = h.n;
          EXPECT_EQ(scipis::get_u32(p + h.dir + 4 * k), first) << "bucket " << k;
        }
      }
      // Each found as its group gives it; ordered by hash.
        for (size_t i = 0; i < h.terms.size(); i++) {
          if (i) {
            EXPECT_LE(scipis::dict_hash(h.terms[i - 1]) >> 32, scipis::dict_hash(h.terms[i]) >> 32);
          }
        }
        for (const auto& [t, ref] : all) {
          const auto got = meta.find(t);
          ASSERT_TRUE(got.has_value()) << t;
          expect_same(*got, ref, t);
        }
        // Terms absent: not found, hot or not.
        for (const auto& [t, ref] : all) {
          EXPECT_FALSE(meta.find(t + "~").has_value()) << t;
        }
      }
      EXPECT_GT(hot_total, 10u) << "sf " << sf;
    }
}

TEST(HotTerms, NoneInASplitOfFewTerms) {
  scipis::OutBuffer data;
  const auto metas = zipf_flush(1, 100, 50, data);
  const std::string m(metas[0].view());
  EXPECT_EQ(hot_of(m).n, 0u);  // 100 terms: a share of none
  const scipis::TfMeta meta("meta", m);
  for (const auto& [t, ref] : meta.all()) {
    const auto got = meta.find(t);
    ASSERT_TRUE(got.has_value()) << t;
    expect_same(*got, ref, t);
  }
}

// Every byte of the hot section flipped in turn: every term's lookup is
// then a corruption error naming the file, or what the undamaged file
// answers.
TEST(HotTermsDamage, FlippedBytesAreErrorsOrRightAnswers) {
  scipis::OutBuffer data;
  const auto metas = zipf_flush(1, 3000, 1500, data);
  const std::string m(metas[0].view());
  const scipis::TfMeta good("meta", m);
  const auto all = good.all();
  const HotSection h = hot_of(m);
  ASSERT_GT(h.n, 0u);
  std::vector<std::string> probe(h.terms);
  for (size_t i = 0; i < all.size(); i += 97) probe.push_back(all[i].first);
  probe.push_back(h.terms[0] + "~");
  size_t errors = 0;
  for (size_t at = h.at; at < m.size(); at += (at - h.at) % 7 == 0 ? 1 : 5) {
    std::string c = m;
    c[at] = static_cast<char>(c[at] ^ 0x5a);
    const scipis::TfMeta bad("meta.damaged", c);
    for (const std::string& t : probe) {
      try {
        const auto got = bad.find(t);
        const auto want = good.find(t);
        ASSERT_EQ(got.has_value(), want.has_value()) << t << " byte " << at;
        if (got) expect_same(*got, *want, t);
      } catch (const scipis::Error& e) {
        EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << e.what();
        EXPECT_NE(std::string(e.what()).find("meta.damaged"), std::string::npos) << e.what();
        errors++;
      }
    }
  }
  EXPECT_GT(errors, 0u);
}
