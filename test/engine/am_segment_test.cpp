// The access method's segments through the door: rows built by indexer
// threads or merged come back with exactly the postings a brute-force count
// gives, ranked searches resumed from any cursor list the same rows, dead
// rows leave merges, and damaged or truncated pages are errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "am/am_merge.h"
#include "am_test_pages.h"
#include "scipis_engine.h"
#include "test_util.h"
#include "util/bytes.h"
#include "util/error.h"
#include "util/crc32c.h"

namespace {

constexpr uint32_t kPayload = 512;  // small pages: many boundaries crossed

using Pages = scipis::test::AmPages<kPayload>;
using Index = scipis::test::AmIndex<kPayload>;
using scipis::test::take_blob;

struct Row {
  uint64_t tid;
  std::string text;
  bool null;
};

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || u >= 0x80) {
      cur.push_back(static_cast<char>(std::tolower(u)));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<Row> random_rows(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Row> rows;
  for (size_t i = 0; i < n; i++) {
    Row r{(static_cast<uint64_t>(i / 7 + 1) << 16) | (i % 7 + 1), "", rng() % 29 == 0};
    const size_t len = rng() % 40;
    for (size_t w = 0; w < len; w++) {
      // Zipf-ish: small word numbers much more often.
      const uint32_t x = static_cast<uint32_t>(std::pow(rng() % 1000 + 1, 1.6)) % 5000;
      r.text += "w" + std::to_string(x) + (rng() % 3 ? " " : ", ");
    }
    rows.push_back(r);
  }
  return rows;
}

// Brute force: score of every row for the query, per the spec's TF-IDF.
std::map<uint64_t, double> oracle(const std::vector<Row>& rows, const std::string& query,
                                  bool all) {
  std::map<std::string, uint32_t> qf;
  for (auto& w : words(query)) qf[w]++;
  std::map<std::string, double> df;
  double N = 0;
  for (auto& r : rows) {
    if (r.null) continue;
    auto ws = words(r.text);
    if (ws.empty()) continue;
    N++;
    std::map<std::string, int> seen;
    for (auto& w : ws) seen[w] = 1;
    for (auto& [w, one] : seen) df[w] += one;
  }
  std::map<uint64_t, double> out;
  for (auto& r : rows) {
    if (r.null) continue;
    auto ws = words(r.text);
    std::map<std::string, double> tf;
    for (auto& w : ws) tf[w]++;
    double s = 0;
    size_t have = 0;
    for (auto& [t, q] : qf) {
      if (!tf.count(t)) continue;
      have++;
      s += q * std::sqrt(tf[t]) * (1 + std::log((N + 1) / (df[t] + 1))) / std::sqrt(ws.size());
    }
    if (have > 0 && (!all || have == qf.size())) out[r.tid] = s;
  }
  return out;
}

std::vector<std::string> build(const std::vector<Row>& rows, int threads, uint64_t memory,
                               uint64_t* flushes = nullptr) {
  return scipis::test::build_segments(
      rows.size(), threads, memory, 0,
      [&](scipis_am_build* b, size_t i, scipis_error* err) {
        const Row& r = rows[i];
        return scipis_am_build_add(b, r.tid, r.text.data(), r.text.size(), r.null, nullptr, err);
      },
      flushes);
}

// Every match in rank order, fetched in rounds of `round` from the cursor.
std::vector<scipis_am_hit> ranked_in_rounds(Index& ix, const std::string& q, bool all, size_t round,
                                            size_t limit = SIZE_MAX, size_t growth = 1) {
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  scipis_am_query* qq = scipis_am_query_new(q.data(), q.size(), delim, SCIPIS_TFIDF,
                                            all ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY, &err);
  EXPECT_NE(qq, nullptr) << err.message;
  std::vector<scipis_am_hit> out;
  auto rd = ix.pages.reader();
  auto v = ix.view();
  for (;;) {
    const scipis_am_hit* h;
    size_t n;
    const bool after = !out.empty();
    EXPECT_EQ(scipis_am_query_ranked(qq, &v, &rd, round, after, after ? out.back().score : 0,
                                     after ? out.back().tid : 0, &h, &n, &err),
              0)
        << err.message;
    out.insert(out.end(), h, h + n);
    if (n < round || out.size() >= limit) break;
    round *= growth;
  }
  scipis_am_query_free(qq);
  return out;
}

// Rows [from, end) of rows as the index's pending entries.
void add_pending(Index& ix, const std::vector<Row>& rows, size_t from) {
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  for (size_t i = from; i < rows.size(); i++) {
    scipis_am_blob* e = scipis_am_entry_encode(rows[i].tid, rows[i].text.data(), rows[i].text.size(),
                                               rows[i].null, nullptr, delim, &err);
    ASSERT_NE(e, nullptr) << err.message;
    ix.pending.push_back(take_blob(e));
  }
}

void expect_matches_oracle(Index& ix, const std::vector<Row>& live, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int i = 0; i < 60; i++) {
    std::string q = "w" + std::to_string(static_cast<uint32_t>(std::pow(rng() % 1000 + 1, 1.6)) % 5000);
    if (i % 2) q += " W" + std::to_string(rng() % 40);
    const bool all = i % 3 == 0;
    if (i % 4 == 1) q += " w" + std::to_string(rng() % 60) + " w" + std::to_string(rng() % 9);
    // Rounds of 1 to 7 rows, or growing as an index scan's do.
    const bool growing = i % 5 == 4;
    const size_t round = growing ? 10 : 1 + rng() % 7;
    // Every 7th query under the sanitizer, where the brute force is most of
    // the time; the plain run checks all 60. 7 is prime to the 2, 3, 4 and
    // 5 above, and the + 5 takes i = 9 (all, growing): every kind still runs.
    if (!testutil::sampled(i + 5, 7)) continue;
    auto want = oracle(live, q, all);
    auto got = growing ? ranked_in_rounds(ix, q, all, round, SIZE_MAX, 8) : ranked_in_rounds(ix, q, all, round);
    ASSERT_EQ(got.size(), want.size()) << q;
    for (size_t j = 0; j < got.size(); j++) {
      ASSERT_TRUE(want.count(got[j].tid)) << q;
      EXPECT_NEAR(got[j].score, want[got[j].tid], 1e-9 * want[got[j].tid]) << q;
      if (j > 0) {  // score descending, then tid ascending
        EXPECT_TRUE(got[j - 1].score > got[j].score ||
                    (got[j - 1].score == got[j].score && got[j - 1].tid < got[j].tid));
      }
    }
  }
}

TEST(AmSegment, BuildRanksLikeTheOracleAcrossSegmentsAndRounds) {
  auto rows = random_rows(3000, 7);
  Index ix;
  // Little memory: several segments per indexer.
  for (auto& s : build(rows, 2, 1)) ix.segs.push_back(ix.pages.add(s));
  EXPECT_GT(ix.segs.size(), 1u);
  expect_matches_oracle(ix, rows, 11);
}

// An indexer holds its flushes back and merges them into one segment while
// they fit in its share of the memory (a query visits every segment), and
// past that hands out merged segments of about that size: with one
// indexer the same rows come out as one segment at a memory where they
// took several flushes, as several at the least memory, ranked alike.
TEST(AmSegment, BuildMergesItsFlushesWhileMemoryAllows) {
  auto rows = random_rows(6000, 11);
  for (int i = 0; i < 2000; i++) rows.push_back({rows.back().tid + 1, "wide row " + std::to_string(i), false});
  uint64_t flushes = 0;
  // 512 KiB: 256 KiB of postings in memory, 153 KiB of segments held.
  auto one = build(rows, 1, 512 << 10, &flushes);
  EXPECT_GE(flushes, 3u);
  ASSERT_EQ(one.size(), 1u);
  Index ix;
  ix.segs.push_back(ix.pages.add(one[0]));
  expect_matches_oracle(ix, rows, 5);
  // The least memory: more flushes than the held ones can take.
  auto many = build(rows, 1, 1, &flushes);
  EXPECT_GT(many.size(), 1u);
  EXPECT_GT(flushes, many.size());
  Index ix2;
  for (auto& s : many) ix2.segs.push_back(ix2.pages.add(s));
  expect_matches_oracle(ix2, rows, 5);
  // Ample memory: one write, one segment, byte for byte the merge's.
  auto whole = build(rows, 1, uint64_t{1} << 30, &flushes);
  EXPECT_EQ(flushes, 1u);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0], one[0]);
}

// A build's last merge runs for seconds on indexer threads: once the
// build is stopped (a cancel, another indexer's error) it gives up within
// a few hundred terms instead of finishing; unstopped, the same merge is
// whole.
TEST(AmSegment, StoppedMergeGivesUp) {
  auto rows = random_rows(6000, 13);
  auto many = build(rows, 1, 1);
  ASSERT_GT(many.size(), 1u);
  std::atomic<bool> stop{true};
  try {
    scipis::am::merge_segments(many, nullptr, &stop);
    ADD_FAILURE() << "a stopped merge finished";
  } catch (const scipis::Error& e) {
    EXPECT_EQ(e.code(), SCIPIS_E_CANCELED);
  }
  stop = false;
  Index ix;
  ix.segs.push_back(ix.pages.add(scipis::am::merge_segments(many, nullptr, &stop)));
  expect_matches_oracle(ix, rows, 5);
}

// A one-term scan makes its blocks' ranges a batch at a time, best first:
// a term of hundreds of blocks with bounds of every kind (and ties between
// blocks across a batch's edge) lists every row in order, in rounds of
// any size, as the brute force does.
TEST(AmSegment, OneTermBlocksComeInBatchesInOrder) {
  std::vector<Row> rows;
  std::mt19937 rng(41);
  for (size_t i = 0; i < 60000; i++) {
    Row r{(static_cast<uint64_t>(i / 9 + 1) << 16) | (i % 9 + 1), "", false};
    const size_t tf = i % 3 == 0 ? 1 + rng() % 6 : 1, len = rng() % (i % 5 == 0 ? 3 : 60);
    for (size_t w = 0; w < tf; w++) r.text += "t ";
    for (size_t w = 0; w < len; w++) r.text += "f" + std::to_string(rng() % 50) + " ";
    rows.push_back(r);
  }
  Index ix;
  for (auto& seg : build(rows, 1, 256 << 20)) ix.segs.push_back(ix.pages.add(seg));
  ASSERT_EQ(ix.segs.size(), 1u);
  const auto want = oracle(rows, "t", false);
  ASSERT_EQ(want.size(), rows.size());
  for (size_t round : {1u, 7u, 40u}) {
    auto got = ranked_in_rounds(ix, "t", false, round, round == 40 ? SIZE_MAX : 3000, round == 40 ? 4 : 1);
    if (round == 40)
      ASSERT_EQ(got.size(), want.size());
    else
      ASSERT_GE(got.size(), 3000u);
    for (size_t j = 0; j < got.size(); j++) {
      ASSERT_TRUE(want.count(got[j].tid));
      EXPECT_NEAR(got[j].score, want.at(got[j].tid), 1e-9 * want.at(got[j].tid));
      if (j > 0) {
        ASSERT_TRUE(got[j - 1].score > got[j].score ||
                    (got[j - 1].score == got[j].score && got[j - 1].tid < got[j].tid))
            << j;
      }
    }
    if (round != 40) continue;
    std::vector<uint64_t> seen;
    for (auto& h : got) seen.push_back(h.tid);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
  }
}

// A term of a few blocks cuts a multi-term query's ranges by its rows: with
// frequent terms, any and all, in rounds of every size and with pending
// entries beside the segments, every row comes in order, as the brute
// force says.
TEST(AmSegment, RareTermsCutRangesByTheirRows) {
  std::vector<Row> rows;
  std::mt19937 rng(43);
  for (size_t i = 0; i < 30000; i++) {
    Row r{(static_cast<uint64_t>(i / 11 + 1) << 16) | (i % 11 + 1), "", i % 31 == 0};
    r.text = "f " + std::string(rng() % 3 ? "g " : "") + "x" + std::to_string(rng() % 40);
    if (rng() % 100 < 2) r.text += " r";         // about 600 rows: a few blocks
    if (rng() % 1000 < 3) r.text += " s s";      // about 90: one block
    if (i == 777 || i == 29999) r.text += " u";  // two rows far apart
    rows.push_back(r);
  }
  Index ix;
  std::vector<Row> built(rows.begin(), rows.begin() + 28000);
  for (auto& seg : build(built, 1, 256 << 20)) ix.segs.push_back(ix.pages.add(seg));
  add_pending(ix, rows, 28000);
  for (const char* q : {"r f", "s f g", "u f", "r s u", "g r x3"}) {
    for (bool all : {false, true}) {
      const auto want = oracle(rows, q, all);
      for (size_t round : {1u, 10u}) {
        auto got = ranked_in_rounds(ix, q, all, round, round == 1 ? 200 : SIZE_MAX, 4);
        if (round != 1) {
          ASSERT_EQ(got.size(), want.size()) << q;
        }
        for (size_t j = 0; j < got.size(); j++) {
          ASSERT_TRUE(want.count(got[j].tid)) << q;
          EXPECT_NEAR(got[j].score, want.at(got[j].tid), 1e-9 * want.at(got[j].tid)) << q;
          if (j > 0) {
            ASSERT_TRUE(got[j - 1].score > got[j].score ||
                        (got[j - 1].score == got[j].score && got[j - 1].tid < got[j].tid))
                << q << " " << j;
          }
        }
      }
    }
  }
}

// Log lines tie by the thousand at the top score: a top-k stops at the
// first ranges of the tie (identifiers ascend with ordinals in a built
// segment), yet resumed rounds list every row, rows of equal tf / length
// (1/5 and 2/10) scoring equal bits.
TEST(AmSegment, TiesAtTheKthScoreArePrunedYetNeverLost) {
  std::vector<Row> rows;
  std::mt19937 rng(21);
  for (size_t i = 0; i < 40000; i++) {
    Row r{(static_cast<uint64_t>(i / 5 + 1) << 16) | (i % 5 + 1), "", false};
    switch (rng() % 4) {
      case 0: r.text = "x a b c d"; break;
      case 1: r.text = "x x a b c d e f g h"; break;
      case 2: r.text = "x a b c d e f g h i j " + std::to_string(rng() % 1000); break;
      default: r.text = "a b c " + std::to_string(rng() % 100); break;
    }
    if (i % 997 == 0) r.text += " zz";
    rows.push_back(r);
  }
  Index ix;
  for (auto& seg : build(rows, 1, 64 << 20)) ix.segs.push_back(ix.pages.add(seg));
  ASSERT_EQ(ix.segs.size(), 1u);
  uint64_t pages = 0;
  for (auto& seg : ix.segs) pages += seg.npages;

  {
    unsigned char delim[256];
    scipis_tokenizer_named("word", delim);
    scipis_error err;
    scipis_am_query* qq = scipis_am_query_new("x", 1, delim, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
    auto rd = ix.pages.reader();
    auto v = ix.view();
    const scipis_am_hit* h;
    size_t n;
    ix.pages.reads = 0;
    ASSERT_EQ(scipis_am_query_ranked(qq, &v, &rd, 10, 0, 0, 0, &h, &n, &err), 0) << err.message;
    EXPECT_EQ(n, 10u);
    EXPECT_LT(ix.pages.reads, static_cast<int>(pages / 20)) << "a top-10 read most of the segment";
    std::vector<scipis_am_hit> first(h, h + n);
    // Resumed rounds, then the query from the start again: the same rows.
    for (int round = 0; round < 3; round++)
      ASSERT_EQ(scipis_am_query_ranked(qq, &v, &rd, 50, 1, first.back().score, first.back().tid, &h, &n, &err), 0);
    ASSERT_EQ(scipis_am_query_ranked(qq, &v, &rd, 10, 0, 0, 0, &h, &n, &err), 0) << err.message;
    ASSERT_EQ(n, 10u);
    for (size_t i = 0; i < n; i++) EXPECT_EQ(h[i].tid, first[i].tid);
    scipis_am_query_free(qq);
  }

  // A rare term with a frequent one: the frequent term's rows are skipped
  // by MaxScore once the rare term's fill the top k, and come back in the
  // later rounds.
  {
    const auto want = oracle(rows, "zz x", false);
    auto got = ranked_in_rounds(ix, "zz x", false, 10, SIZE_MAX, 8);
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < got.size(); j++) {
      ASSERT_TRUE(want.count(got[j].tid));
      EXPECT_NEAR(got[j].score, want.at(got[j].tid), 1e-9 * want.at(got[j].tid));
    }
  }
  const auto want = oracle(rows, "x", false);
  for (size_t round : {997u, 3u}) {
    // Small rounds: the first 60 rows only (each round runs the query again).
    auto got = ranked_in_rounds(ix, "x", false, round, round == 3 ? 60 : SIZE_MAX);
    if (round != 3) {
      ASSERT_EQ(got.size(), want.size());
    }
    std::vector<uint64_t> seen;
    for (size_t j = 0; j < got.size(); j++) {
      ASSERT_TRUE(want.count(got[j].tid));
      EXPECT_NEAR(got[j].score, want.at(got[j].tid), 1e-9 * want.at(got[j].tid));
      if (j > 0) {
        ASSERT_TRUE(got[j - 1].score > got[j].score ||
                    (got[j - 1].score == got[j].score && got[j - 1].tid < got[j].tid));
      }
      seen.push_back(got[j].tid);
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
  }
}

// Pages read and checked once come from the process's cache afterwards;
// other files' pages are not taken for them; the cache keeps its bound,
// and a bound of 0 turns it off.
TEST(AmSegment, PageCacheServesCheckedPagesWithinItsBound) {
  auto rows = random_rows(3000, 31);
  auto segs = build(rows, 1, 64 << 20);
  ASSERT_EQ(segs.size(), 1u);
  Index a, b;
  a.segs.push_back(a.pages.add(segs[0]));
  b.segs.push_back(b.pages.add(segs[0]));
  a.pages.rel[0] = b.pages.rel[0] = 7;
  a.pages.rel[2] = 100;
  b.pages.rel[2] = 101;
  const auto want = ranked_in_rounds(a, "w1 w7", false, 1000);
  ASSERT_FALSE(want.empty());

  scipis_am_cache_configure(1 << 20);
  a.pages.reads = 0;
  EXPECT_EQ(ranked_in_rounds(a, "w1 w7", false, 1000).size(), want.size());
  EXPECT_GT(a.pages.reads, 0);
  a.pages.reads = 0;
  auto again = ranked_in_rounds(a, "w1 w7", false, 1000);
  EXPECT_EQ(a.pages.reads, 0) << "every page was cached";
  ASSERT_EQ(again.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(again[i].tid, want[i].tid);
  b.pages.reads = 0;
  ranked_in_rounds(b, "w1 w7", false, 1000);
  EXPECT_GT(b.pages.reads, 0) << "another file's pages were taken from the cache";

  scipis_am_cache_configure(4 * kPayload);
  EXPECT_EQ(scipis_am_cache_pages(), 0u) << "shrinking empties the cache";
  ranked_in_rounds(a, "w1 w7 w3", false, 1000);
  EXPECT_LE(scipis_am_cache_pages(), 4u);
  scipis_am_cache_configure(0);
  a.pages.reads = 0;
  EXPECT_EQ(ranked_in_rounds(a, "w1 w7", false, 1000).size(), want.size());
  EXPECT_GT(a.pages.reads, 0);
  EXPECT_EQ(scipis_am_cache_pages(), 0u);
}

// A scan pins the cached pages it holds across its rounds: a cache smaller
// than what it holds keeps its bound (the rest are the scan's own), and a
// shrink between rounds waits for the scan to let its pages go, which it
// reads on unharmed.
TEST(AmSegment, PageCachePinsWhatAScanHolds) {
  auto rows = random_rows(3000, 35);
  auto segs = build(rows, 1, 64 << 20);
  ASSERT_EQ(segs.size(), 1u);
  Index ix;
  ix.segs.push_back(ix.pages.add(segs[0]));
  ix.pages.rel[0] = ix.pages.rel[1] = ix.pages.rel[2] = 11;
  const auto want = ranked_in_rounds(ix, "w1 w2 w7", false, 1000000);
  ASSERT_GT(want.size(), 40u);
  for (size_t bound : {size_t{2}, size_t{64}}) {
    scipis_am_cache_configure(bound * kPayload);
    unsigned char delim[256];
    scipis_tokenizer_named("word", delim);
    scipis_error err;
    const std::string q = "w1 w2 w7";
    scipis_am_query* qq = scipis_am_query_new(q.data(), q.size(), delim, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
    ASSERT_NE(qq, nullptr) << err.message;
    auto rd = ix.pages.reader();
    auto v = ix.view();
    std::vector<scipis_am_hit> got;
    for (int round = 0; got.size() < want.size(); round++) {
      const scipis_am_hit* h;
      size_t n;
      const bool after = !got.empty();
      ASSERT_EQ(scipis_am_query_ranked(qq, &v, &rd, 7, after, after ? got.back().score : 0,
                                       after ? got.back().tid : 0, &h, &n, &err),
                0)
          << err.message;
      ASSERT_GT(n, 0u);
      got.insert(got.end(), h, h + n);
      EXPECT_LE(scipis_am_cache_pages(), bound);
      if (round == 1) {
        scipis_am_cache_configure(kPayload);
        EXPECT_GT(scipis_am_cache_pages(), 0u) << "pinned pages were dropped under a scan";
      }
    }
    scipis_am_query_free(qq);
    EXPECT_EQ(scipis_am_cache_pages(), 0u) << "the shrink waited for the scan's end";
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++) {
      EXPECT_EQ(got[i].tid, want[i].tid);
      EXPECT_EQ(got[i].score, want[i].score);
    }
  }
  scipis_am_cache_configure(0);
}

// With the page cache on, a segment's second opening takes its footer and
// every 64th dictionary index key from the backend: each term is still
// found (the first and last of a chunk, those between).
TEST(AmSegment, CachedSegmentOpeningsFindEveryTerm) {
  auto rows = random_rows(2000, 33);
  for (size_t i = 0; i < rows.size(); i++)
    for (int u = 0; u < 4; u++) rows[i].text += " u" + std::to_string((4 * i + u) * 7919 % 100000);
  auto segs = build(rows, 1, 256 << 20);
  ASSERT_EQ(segs.size(), 1u);
  Index ix;
  ix.segs.push_back(ix.pages.add(segs[0]));
  ix.pages.rel[0] = ix.pages.rel[1] = ix.pages.rel[2] = 9;
  scipis_am_cache_configure(32 << 20);
  // The first query opens the segment and keeps what it read.
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) expect_matches_oracle(ix, rows, 34);
    for (size_t i = 0; i < rows.size(); i += 37) {
      if (rows[i].null) continue;
      const std::string q = "u" + std::to_string(4 * i * 7919 % 100000);
      auto got = ranked_in_rounds(ix, q, false, 10);
      ASSERT_EQ(got.size(), 1u) << q;
      EXPECT_EQ(got[0].tid, rows[i].tid) << q;
    }
    EXPECT_TRUE(ranked_in_rounds(ix, "u100001", false, 10).empty());
    EXPECT_TRUE(ranked_in_rounds(ix, "zzzzzzzzzzzz", false, 10).empty());
    EXPECT_TRUE(ranked_in_rounds(ix, "0", false, 10).empty());
  }
  scipis_am_cache_configure(0);
}

TEST(AmSegment, PendingEntriesAndMergeWithDeadRows) {
  auto rows = random_rows(2000, 8);
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  Index ix;
  std::vector<Row> first(rows.begin(), rows.begin() + 1200);
  for (auto& s : build(first, 1, 64 << 20)) ix.segs.push_back(ix.pages.add(s));
  add_pending(ix, rows, 1200);
  scipis_error err;
  expect_matches_oracle(ix, rows, 12);

  // Every third row dies; the merge keeps the rest, and answers as before.
  std::vector<uint64_t> dead;
  std::vector<Row> live;
  for (size_t i = 0; i < rows.size(); i++) (i % 3 == 0 ? dead.push_back(rows[i].tid) : live.push_back(rows[i]));
  std::sort(dead.begin(), dead.end());
  auto rd = ix.pages.reader();
  auto v = ix.view();
  scipis_am_blob* merged;
  scipis_am_stats st;
  ASSERT_EQ(scipis_am_merge(&v, &rd, dead.data(), dead.size(), &merged, &st, &err), 0) << err.message;
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(st.entries, live.size());
  Index m;
  m.segs.push_back(m.pages.add(take_blob(merged)));
  expect_matches_oracle(m, live, 13);

  uint64_t* tids;
  size_t n;
  auto mrd = m.pages.reader();
  ASSERT_EQ(scipis_am_segment_tids(&mrd, &m.segs[0], &tids, &n, &err), 0);
  std::vector<uint64_t> got(tids, tids + n), want;
  free(tids);
  for (auto& r : live) want.push_back(r.tid);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

TEST(AmSegment, RestListsEveryNonMatchingRowNullsLast) {
  auto rows = random_rows(500, 9);
  Index ix;
  for (auto& s : build(rows, 1, 64 << 20)) ix.segs.push_back(ix.pages.add(s));
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  const std::string q = "w1";
  auto want = oracle(rows, q, false);
  scipis_am_query* qq = scipis_am_query_new(q.data(), q.size(), delim, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
  auto rd = ix.pages.reader();
  auto v = ix.view();
  std::vector<scipis_am_hit> rest;
  for (;;) {
    const scipis_am_hit* h;
    size_t n;
    const bool after = !rest.empty();
    ASSERT_EQ(scipis_am_query_rest(qq, &v, &rd, 13, after, after ? rest.back().is_null : 0,
                                   after ? rest.back().tid : 0, &h, &n, &err),
              0);
    rest.insert(rest.end(), h, h + n);
    if (n < 13) break;
  }
  scipis_am_query_free(qq);
  EXPECT_EQ(rest.size() + want.size(), rows.size());
  for (size_t i = 1; i < rest.size(); i++) EXPECT_LE(rest[i - 1].is_null, rest[i].is_null);
  for (auto& h : rest) EXPECT_FALSE(want.count(h.tid));
}

// A format 3 segment rewritten in format 2's layout (rows as 10-byte
// records of identifier and u32 length), as an index built before format 3
// holds it: the same bytes otherwise, offsets moved by the difference.
std::string as_format2(const std::string& v3) {
  const auto* f = reinterpret_cast<const unsigned char*>(v3.data() + v3.size() - 64);
  const uint64_t ndocs = scipis::get_u64(f + 8), index_off = scipis::get_u64(f + 40),
                 groups = scipis::get_u64(f + 48);
  const uint32_t flags = scipis::get_u32(f + 56), w = 1u << ((flags >> 8) & 3);
  // The rows end where the first dictionary group starts.
  const uint64_t docs3 = scipis::get_u64(reinterpret_cast<const unsigned char*>(v3.data() + index_off + 8));
  const uint64_t docs2 = ndocs * 10, delta = docs2 - docs3;
  Pages pages;
  scipis_am_segment seg = pages.add(v3);
  auto rd = pages.reader();
  uint64_t* tids;
  size_t n;
  scipis_error err;
  EXPECT_EQ(scipis_am_segment_tids(&rd, &seg, &tids, &n, &err), 0) << err.message;
  EXPECT_EQ(n, ndocs);
  std::string out;
  for (uint64_t i = 0; i < ndocs; i++) {
    for (int b = 0; b < 6; b++) out.push_back(static_cast<char>(tids[i] >> (8 * b)));
    uint32_t len = 0;
    for (uint32_t b = 0; b < w; b++) len |= static_cast<uint32_t>(static_cast<unsigned char>(v3[i * w + b])) << (8 * b);
    if (w < 4 && len == (1u << (8 * w)) - 1) len = UINT32_MAX;
    scipis::put_u32(out, len);
  }
  free(tids);
  out.append(v3, docs3, index_off - docs3);
  for (uint64_t g = 0; g < groups; g++) {
    const auto* e = reinterpret_cast<const unsigned char*>(v3.data() + index_off + g * 24);
    scipis::put_u64(out, scipis::get_u64(e));
    scipis::put_u64(out, scipis::get_u64(e + 8) + delta);
    out.append(reinterpret_cast<const char*>(e + 16), 8);
  }
  std::string foot(reinterpret_cast<const char*>(f), 40);
  foot[4] = 2;
  scipis::put_u64(foot, index_off + delta);
  scipis::put_u64(foot, groups);
  scipis::put_u32(foot, flags & 1);
  scipis::put_u32(foot, scipis::crc32c(foot.data(), foot.size()));
  foot.resize(64, '\0');
  return out + foot;
}

uint32_t len_width(const std::string& seg) {
  return 1u << ((scipis::get_u32(reinterpret_cast<const unsigned char*>(seg.data() + seg.size() - 8)) >> 8) & 3);
}

TEST(AmSegment, LengthsOfEveryWidthAndFormat2ReadAlike) {
  auto rows = random_rows(700, 14);
  for (auto& r : rows)
    if (r.tid % 5 == 0) r.text = ", ; --";  // values without a token
  auto long_row = [&](size_t tokens) {
    Row r{(static_cast<uint64_t>(rows.size() + 1000) << 16) | 1, "", false};
    for (size_t i = 0; i < tokens; i++) r.text += "w" + std::to_string(i % 9) + " ";
    return r;
  };
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  // Widths 1, 2 and 4: lengths up to 254, 65534 and beyond.
  for (size_t extra : {size_t{0}, size_t{255}, size_t{70000}}) {
    std::vector<Row> rs = rows;
    if (extra) rs.push_back(long_row(extra));
    auto segs = build(rs, 1, 256 << 20);
    ASSERT_EQ(segs.size(), 1u);
    EXPECT_EQ(len_width(segs[0]), extra == 0 ? 1u : extra < 65535 ? 2u : 4u);
    Index v3, v2;
    v3.segs.push_back(v3.pages.add(segs[0]));
    v2.segs.push_back(v2.pages.add(as_format2(segs[0])));
    expect_matches_oracle(v3, rs, 21);
    expect_matches_oracle(v2, rs, 21);
    for (const char* q : {"w1", "w3 w8", "w2 w4000"}) {
      auto a = ranked_in_rounds(v3, q, false, 7), b = ranked_in_rounds(v2, q, false, 7);
      ASSERT_EQ(a.size(), b.size()) << q;
      for (size_t i = 0; i < a.size(); i++) {
        EXPECT_EQ(a[i].tid, b[i].tid) << q;
        EXPECT_EQ(a[i].score, b[i].score) << q;
      }
    }
    // NULL values stay NULL at every width (the rest of an ordered scan).
    for (Index* ix : {&v3, &v2}) {
      scipis_error err;
      scipis_am_query* qq = scipis_am_query_new("w1", 2, delim, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
      auto rd = ix->pages.reader();
      auto v = ix->view();
      const scipis_am_hit* h;
      size_t n;
      ASSERT_EQ(scipis_am_query_rest(qq, &v, &rd, rs.size(), 0, 0, 0, &h, &n, &err), 0) << err.message;
      size_t nulls = 0, want_nulls = 0;
      for (size_t i = 0; i < n; i++) nulls += h[i].is_null;
      for (auto& r : rs) want_nulls += r.null;
      EXPECT_EQ(nulls, want_nulls);
      scipis_am_query_free(qq);
    }
  }
  // A width the format does not have is damage, not a guess.
  auto segs = build(rows, 1, 64 << 20);
  std::string bad = segs[0];
  auto* foot = reinterpret_cast<unsigned char*>(bad.data() + bad.size() - 64);
  foot[57] |= 3;
  const uint32_t crc = scipis::crc32c(foot, 60);
  std::memcpy(foot + 60, &crc, 4);
  Index ix;
  ix.segs.push_back(ix.pages.add(bad));
  auto rd = ix.pages.reader();
  auto v = ix.view();
  scipis_error err;
  scipis_am_query* qq = scipis_am_query_new("w1", 2, delim, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
  const scipis_am_hit* h;
  size_t n;
  EXPECT_NE(scipis_am_query_ranked(qq, &v, &rd, 10, 0, 0, 0, &h, &n, &err), 0);
  EXPECT_EQ(err.code, SCIPIS_E_CORRUPT);
  EXPECT_NE(std::string(err.message).find("flags"), std::string::npos) << err.message;
  scipis_am_query_free(qq);
}

// Identifiers in any order and at the ends of their 48 bits (block
// 2^32 - 1, offset 65535, both 0) come back as they went in.
TEST(AmSegment, RowIdentifiersRoundTripAtTheirEdges) {
  std::mt19937_64 rng(15);
  for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}}) {
    auto rows = random_rows(n, static_cast<uint32_t>(n));
    for (size_t i = 0; i < n; i++) {
      const uint64_t block = i % 4 == 0 ? 0xffffffffull - i : i % 4 == 1 ? i : rng() >> 32;
      const uint64_t off = i % 3 == 0 ? 0xffff : i % 3 == 1 ? 0 : rng() % 300;
      rows[i].tid = (block << 16) | off;
    }
    // Distinct, in no order.
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.tid < b.tid; });
    rows.erase(std::unique(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.tid == b.tid; }),
               rows.end());
    std::shuffle(rows.begin(), rows.end(), rng);
    auto segs = build(rows, 1, 64 << 20);
    ASSERT_EQ(segs.size(), 1u);
    Index ix;
    ix.segs.push_back(ix.pages.add(segs[0]));
    auto rd = ix.pages.reader();
    uint64_t* tids;
    size_t got;
    scipis_error err;
    ASSERT_EQ(scipis_am_segment_tids(&rd, &ix.segs[0], &tids, &got, &err), 0) << err.message;
    ASSERT_EQ(got, rows.size());
    for (size_t i = 0; i < got; i++) EXPECT_EQ(tids[i], rows[i].tid) << i;
    free(tids);
    expect_matches_oracle(ix, rows, static_cast<uint32_t>(n));
  }
}

TEST(AmSegment, DamagedBytesAreErrorsNotCrashes) {
  auto rows = random_rows(800, 10);
  auto segs = build(rows, 1, 64 << 20);
  ASSERT_EQ(segs.size(), 1u);
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  std::mt19937 rng(5);
  int errors = 0;
  for (int trial = 0; trial < 400; trial++) {
    std::string bad = segs[0];
    if (trial % 10 == 0)
      bad.resize(rng() % bad.size());
    else
      for (int k = 0; k < 3; k++) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    Index ix;
    if (bad.empty()) continue;
    ix.segs.push_back(ix.pages.add(bad));
    auto rd = ix.pages.reader();
    auto v = ix.view();
    scipis_error err;
    scipis_am_query* qq = scipis_am_query_new("w1 w2 w300", 10, delim, SCIPIS_BM25, SCIPIS_MATCH_ANY, &err);
    const scipis_am_hit* h;
    size_t n;
    const uint64_t* tids;
    if (scipis_am_query_ranked(qq, &v, &rd, 10, 0, 0, 0, &h, &n, &err) != 0) {
      EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
      errors++;
    }
    scipis_am_query_matches(qq, &v, &rd, &tids, &n, &err);
    scipis_am_query_free(qq);
    scipis_am_blob* out = nullptr;
    scipis_am_stats st;
    if (scipis_am_merge(&v, &rd, nullptr, 0, &out, &st, &err) == 0 && out) scipis_am_blob_free(out);
  }
  // The page crc on the C side catches the rest; most damage is seen here too.
  EXPECT_GT(errors, 50);
}

// The in-memory postings (a build's and the pending entries') at their
// edges: a term once, in rows far apart (gaps of several varint bytes),
// with a tf past 2^16, and repeated within rows as a value's tokens come.
TEST(AmSegment, InMemoryPostingsRoundTripAtTheirEdges) {
  std::vector<Row> rows;
  const size_t n = 200000;
  for (size_t i = 0; i < n; i++) {
    Row r{(static_cast<uint64_t>(i / 7 + 1) << 16) | (i % 7 + 1), "w" + std::to_string(i % 5), false};
    if (i == 0 || i == n - 1) r.text += " rare";
    if (i % 70000 == 3) r.text += " mid w1 mid";
    if (i == 5) {
      r.text.reserve(70001 * 4);
      for (int k = 0; k < 70001; k++) r.text += " big";
    }
    if (i == 6) r.text = "once";
    rows.push_back(std::move(r));
  }
  const std::vector<std::string> queries = {"rare", "mid", "big", "once", "w1", "big rare mid"};
  Index ix;
  for (auto& seg : build(rows, 1, uint64_t{1} << 30)) ix.segs.push_back(ix.pages.add(seg));
  ASSERT_EQ(ix.segs.size(), 1u);
  // The same rows far apart as pending entries too (their own ordinals).
  Index pend;
  std::vector<Row> some;
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  for (size_t i = 0; i < n; i += (i < 10 || i + 10 > n) ? 1 : 9973) {
    some.push_back(rows[i]);
    scipis_am_blob* e = scipis_am_entry_encode(rows[i].tid, rows[i].text.data(), rows[i].text.size(),
                                               0, nullptr, delim, &err);
    ASSERT_NE(e, nullptr) << err.message;
    pend.pending.push_back(take_blob(e));
  }
  for (auto* c : {&ix, &pend}) {
    const std::vector<Row>& live = c == &ix ? rows : some;
    for (const std::string& q : queries) {
      auto want = oracle(live, q, false);
      auto got = ranked_in_rounds(*c, q, false, 1000);
      ASSERT_EQ(got.size(), want.size()) << q;
      for (auto& h : got) {
        ASSERT_TRUE(want.count(h.tid)) << q;
        EXPECT_NEAR(h.score, want[h.tid], 1e-9 * want[h.tid]) << q;
      }
    }
  }
}

TEST(AmSegment, HostileEntriesAreRefused) {
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  scipis_am_blob* e = scipis_am_entry_encode(5, "a b a", 5, 0, nullptr, delim, &err);
  std::string good = take_blob(e);
  uint64_t tid;
  ASSERT_EQ(scipis_am_entry_tid(reinterpret_cast<const unsigned char*>(good.data()), good.size(), &tid, &err), 0);
  EXPECT_EQ(tid, 5u);
  for (size_t i = 0; i < good.size(); i++)
    for (int bit = 0; bit < 8; bit++) {
      std::string bad = good;
      bad[i] ^= static_cast<char>(1 << bit);
      int rc = scipis_am_entry_tid(reinterpret_cast<const unsigned char*>(bad.data()), bad.size(), &tid, &err);
      if (rc != 0) {
        EXPECT_EQ(err.code, SCIPIS_E_CORRUPT);
      }
    }
  EXPECT_NE(scipis_am_entry_tid(reinterpret_cast<const unsigned char*>(good.data()), good.size() - 1, &tid, &err), 0);
  EXPECT_EQ(scipis_am_query_new("---", 3, delim, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err), nullptr);
  EXPECT_EQ(err.code, SCIPIS_E_INVALID);
}

}  // namespace
