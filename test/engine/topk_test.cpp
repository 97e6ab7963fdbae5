// Top-k queries that skip blocks (topk_search) return exactly what scoring
// every posting returns (full_search): same documents, same order, same
// score bits, over thousands of random queries on a collection with terms
// of thousands of postings, documents split over flushes, and ties at the
// k-th score.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "query/collection.h"
#include "query/score.h"
#include "query/search.h"
#include "query/topk.h"
#include "test_util.h"

namespace {

// Zipf-like vocabulary: term r appears with weight 1/(r+1); a tenth of the
// files are copies of one another (equal scores, ordered by path); a few
// are long enough to be cut by the tiny index budget mid-document.
std::string make_tree(std::mt19937_64& rng) {
  std::string root = testutil::scratch_dir();
  std::vector<double> cdf;
  double sum = 0;
  for (int r = 0; r < 400; r++) cdf.push_back(sum += 1.0 / (r + 1));
  auto word = [&] {
    const double x = std::uniform_real_distribution<double>(0, sum)(rng);
    return "t" + std::to_string(std::lower_bound(cdf.begin(), cdf.end(), x) - cdf.begin());
  };
  std::string twin;
  for (int i = 0; i < 60; i++) twin += word() + " ";
  for (int f = 0; f < 3000; f++) {
    std::string text;
    if (f % 10 == 0) {
      text = twin;
    } else {
      const int n = f % 150 == 7 ? 40000 : 5 + static_cast<int>(rng() % 150);
      for (int i = 0; i < n; i++) text += word() + (i % 12 ? " " : "\n");
    }
    testutil::write(root + "/f" + std::to_string(f), text);
  }
  return root;
}

// Runs random queries of up to five terms t<n> (n below vocab, mostly
// below common) through both paths; every answer must match to the bit.
// Returns how many were not empty.
int compare_paths(scipis::Collection& c, std::mt19937_64& rng, int queries, int common, int vocab,
                  scipis::TopkStats& stats) {
  int nonempty = 0;
  for (int q = 0; q < queries; q++) {
    const int nterms = 1 + static_cast<int>(rng() % 5);
    std::string text;
    for (int i = 0; i < nterms; i++)
      text += "t" + std::to_string(rng() % 3 ? rng() % common : rng() % vocab) + " ";
    const auto terms = scipis::parse_query(c.tokenizer(), text);
    const int64_t k = std::vector<int64_t>{1, 3, 10, 50}[rng() % 4];
    const auto ranking = rng() % 2 ? SCIPIS_BM25 : SCIPIS_TFIDF;
    const auto match = rng() % 4 == 0 ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY;
    const auto want = scipis::full_search(c, terms, k, ranking, match);
    const auto got = scipis::topk_search(c, terms, k, ranking, match, &stats);
    EXPECT_EQ(got.size(), want.size()) << text << " k=" << k;
    if (got.size() != want.size()) return -1;
    for (size_t i = 0; i < got.size(); i++) {
      EXPECT_EQ(got[i].indexer, want[i].indexer) << text << " k=" << k << " at " << i;
      EXPECT_EQ(got[i].seq, want[i].seq) << text << " k=" << k << " at " << i;
      EXPECT_EQ(got[i].score, want[i].score) << text << " k=" << k << " at " << i;
      if (got[i].seq != want[i].seq || got[i].score != want[i].score) return -1;
    }
    nonempty += !got.empty();
  }
  return nonempty;
}

// files files of one to six words, a thousand a directory: t0 in every
// one, t1 in about half, t2 .. t<rare+1> in the rest.
std::string long_lists_tree(std::mt19937_64& rng, int files, int rare) {
  const std::string root = testutil::scratch_dir();
  for (int d = 0; d < files / 1000; d++) {
    const std::string dir = root + "/d" + std::to_string(d);
    ::mkdir(dir.c_str(), 0755);
    for (int f = 0; f < 1000; f++) {
      std::string text = "t0 ";
      const int n = 1 + static_cast<int>(rng() % 6);
      for (int i = 1; i < n; i++)
        text += "t" + std::to_string(rng() % 2 ? 1 : 2 + rng() % static_cast<uint64_t>(rare)) + " ";
      testutil::write(dir + "/f" + std::to_string(f), text);
    }
  }
  return root;
}

// The long-lists tree, built by two indexers with a term table of
// table_bytes; false, with the failure reported, when the build fails.
bool build_long_lists(std::mt19937_64& rng, int files, int rare, uint64_t table_bytes, std::string& root,
                      std::string& dir, scipis_build_stats& st) {
  root = long_lists_tree(rng, files, rare);
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  o.tfidf_index_size = table_bytes;
  dir = testutil::scratch_dir();
  scipis_error err;
  if (testutil::build(dir, root, o, &st, &err) != 0) {
    ADD_FAILURE() << err.message;
    return false;
  }
  EXPECT_EQ(st.files, static_cast<uint64_t>(files));
  return st.files == static_cast<uint64_t>(files);
}

void print_stats(const scipis::TopkStats& stats) {
  std::printf("windows %llu, skipped %llu, blocks decoded %llu, MaxScore windows %llu, postings passed over %llu\n",
              static_cast<unsigned long long>(stats.windows), static_cast<unsigned long long>(stats.skipped),
              static_cast<unsigned long long>(stats.blocks_decoded),
              static_cast<unsigned long long>(stats.maxscore_windows),
              static_cast<unsigned long long>(stats.passed_over));
}

}  // namespace

TEST(TopK, SkippingNeverChangesAnAnswer) {
  std::mt19937_64 rng(20261122);
  const std::string root = make_tree(rng);
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  o.tfidf_index_size = 256 << 10;
  o.block_size = 4096;
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_GT(st.segments, 6u) << "several flushes per indexer";

  scipis::Collection c(dir);
  scipis::TopkStats stats;
  // Fewer queries under the sanitizer, where each costs a few times more;
  // the plain run asks all 2,500.
  const int queries = testutil::kSanitized ? 1000 : 2500;
  EXPECT_GT(compare_paths(c, rng, queries, 40, 450, stats), queries * 4 / 5);
  // The test means something only if blocks were skipped, often.
  EXPECT_GT(stats.skipped * 50, stats.windows) << stats.skipped << " of " << stats.windows << " windows skipped";
  // And only if terms were left out of the candidates (MaxScore) too.
  EXPECT_GT(stats.maxscore_windows * 50, stats.windows);
  EXPECT_GT(stats.passed_over, 1000u);
  print_stats(stats);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// Terms in up to 30,000 documents: posting regions of dozens of
// blocks in each flush, and ties everywhere (documents of
// few words share their scores).
TEST(TopK, SkippingNeverChangesAnAnswerOnLongPostingLists) {
  std::mt19937_64 rng(20261123);
  // Under the sanitizer a third of the files (with about a third of the
  // table: as many flushes) and half the queries, each a few times dearer
  // there; the plain run covers the full size.
  const bool small = testutil::kSanitized;
  const int files = small ? 10000 : 30000, queries = small ? 150 : 300;
  std::string root, dir;
  scipis_build_stats st;
  ASSERT_TRUE(build_long_lists(rng, files, 48, small ? 96 << 10 : 256 << 10, root, dir, st));
  // Six segments here; more than two means an indexer flushed again.
  ASSERT_GT(st.segments, 2u) << "several flushes";
  scipis::Collection c(dir);
  scipis::TopkStats stats;
  EXPECT_GT(compare_paths(c, rng, queries, 3, 50, stats), queries * 5 / 6);
  EXPECT_GT(stats.skipped, 0u);
  print_stats(stats);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A million documents: t0's posting list holds every one of them (about
// 8,000 blocks), t1's half; ties everywhere. Minutes of work, so only when
// SCIPIS_LONG_TESTS is set (scripts/long-tests.sh).
TEST(TopK, SkippingNeverChangesAnAnswerOnAMillionPostings) {
  if (!std::getenv("SCIPIS_LONG_TESTS")) GTEST_SKIP() << "set SCIPIS_LONG_TESTS=1 (scripts/long-tests.sh)";
  std::mt19937_64 rng(20261124);
  const int files = 1000000;
  std::string root, dir;
  scipis_build_stats st;
  ASSERT_TRUE(build_long_lists(rng, files, 198, 16 << 20, root, dir, st));
  scipis::Collection c(dir);
  uint64_t longest = 0;
  for (uint32_t i = 0; i < c.manifest().indexers; i++) longest += c.indexer(i).docs();
  ASSERT_EQ(longest, static_cast<uint64_t>(files));
  scipis::TopkStats stats;
  EXPECT_GT(compare_paths(c, rng, 400, 3, 200, stats), 350);
  EXPECT_GT(stats.skipped, 0u);
  print_stats(stats);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A row's counts score the bits term_score gives, table or not.
TEST(TopK, CountsScoreTheBitsOfTheFormula) {
  for (scipis_ranking r : {SCIPIS_TFIDF, SCIPIS_BM25}) {
    const scipis::Scorer s{r, 2.718281828459045, 3, 17.25};
    for (uint32_t tf = 1; tf < 40; tf++)
      for (uint32_t len : {1u, 2u, 3u, 7u, 100u, 254u, 255u, 256u, 257u, 1000u, 70000u}) {
        const double want = scipis::term_score(r, 3, 2.718281828459045, tf, len, 17.25);
        EXPECT_EQ(s.counts(tf, len), want) << tf << " " << len;
      }
  }
}

// A thread keeps its lists and windows from one query to the next
// (topk.cpp's Scratch): whatever ran before, each answer must be the full
// merge's. Terms of one block (pair, in two files) and of several (mid,
// common) in every order, one indexer and one segment, so that a list's
// first block is block 0 in every query.
TEST(TopK, QueriesInAnyOrderAnswerAlike) {
  std::mt19937_64 rng(20261129);
  const std::string root = testutil::scratch_dir();
  for (int f = 0; f < 400; f++) {
    std::string text;
    for (int i = 0; i < 1 + f % 7; i++) text += "common ";
    if (f % 3 == 0) text += "mid mid ";
    if (f == 17 || f == 301) text += "pair ";
    for (int i = 0; i < 5 + static_cast<int>(rng() % 20); i++) text += "w" + std::to_string(rng() % 50) + " ";
    testutil::write(root + "/f" + std::to_string(f), text);
  }
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 1;
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  scipis::Collection c(dir);
  const std::vector<std::string> texts = {"pair", "common", "mid", "pair common", "mid pair",
                                          "common mid pair", "absent common", "w3 pair", "w7 w9 mid"};
  for (int q = 0; q < 600; q++) {
    const std::string& text = texts[rng() % texts.size()];
    const auto terms = scipis::parse_query(c.tokenizer(), text);
    const int64_t k = std::vector<int64_t>{1, 3, 10, 500}[rng() % 4];
    const auto ranking = rng() % 2 ? SCIPIS_BM25 : SCIPIS_TFIDF;
    const auto match = rng() % 4 == 0 ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY;
    const auto want = scipis::full_search(c, terms, k, ranking, match);
    const auto got = scipis::topk_search(c, terms, k, ranking, match);
    ASSERT_EQ(got.size(), want.size()) << text << " k=" << k << " query " << q;
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(got[i].seq, want[i].seq) << text << " k=" << k << " query " << q << " at " << i;
      ASSERT_EQ(got[i].score, want[i].score) << text << " k=" << k << " query " << q << " at " << i;
    }
  }
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
