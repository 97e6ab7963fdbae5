// Top-k queries that skip blocks (topk_search) return exactly what scoring
// every posting returns (full_search): same documents, same order, same
// score bits, over thousands of random queries on a collection with terms
// of thousands of postings, documents split over flushes, and ties at the
// k-th score.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "query/collection.h"
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
  int compared = 0, nonempty = 0;
  scipis::TopkStats stats;
  for (int q = 0; q < 2500; q++) {
    const int nterms = 1 + static_cast<int>(rng() % 5);
    std::string text;
    for (int i = 0; i < nterms; i++)
      text += "t" + std::to_string(rng() % 3 ? rng() % 40 : rng() % 450) + " ";
    const auto terms = scipis::parse_query(c.tokenizer(), text);
    const int64_t k = std::vector<int64_t>{1, 3, 10, 50}[rng() % 4];
    const auto ranking = rng() % 2 ? SCIPIS_BM25 : SCIPIS_TFIDF;
    const auto match = rng() % 4 == 0 ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY;
    const auto want = scipis::full_search(c, terms, k, ranking, match);
    const auto got = scipis::topk_search(c, terms, k, ranking, match, &stats);
    ASSERT_EQ(got.size(), want.size()) << text << " k=" << k;
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(got[i].indexer, want[i].indexer) << text << " k=" << k << " at " << i;
      ASSERT_EQ(got[i].seq, want[i].seq) << text << " k=" << k << " at " << i;
      ASSERT_EQ(got[i].score, want[i].score) << text << " k=" << k << " at " << i;
    }
    compared++;
    nonempty += !got.empty();
  }
  EXPECT_EQ(compared, 2500);
  EXPECT_GT(nonempty, 2000);
  // The test means something only if blocks were skipped, often.
  EXPECT_GT(stats.skipped * 50, stats.windows) << stats.skipped << " of " << stats.windows << " windows skipped";
  std::printf("windows %llu, skipped %llu, blocks decoded %llu\n",
              static_cast<unsigned long long>(stats.windows), static_cast<unsigned long long>(stats.skipped),
              static_cast<unsigned long long>(stats.blocks_decoded));
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
