// Builds collections through the door and checks every search against the
// brute-force scorer, whatever the tuning.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "brute_force.h"
#include "refresh_util.h"
#include "test_util.h"

namespace {

struct Corpus {
  std::string root;
  std::vector<brute::Doc> docs;
  std::vector<std::string> vocab;
};

// Skewed sizes, Zipf-like words, long runs, high bytes and empty files.
Corpus make_corpus(int files, unsigned seed) {
  Corpus c;
  c.root = testutil::scratch_dir();
  std::mt19937 rng(seed);
  for (int i = 0; i < 300; i++) c.vocab.push_back("w" + std::to_string(i));
  c.vocab.push_back("\xC3\xBC" "ber");
  mkdir((c.root + "/a").c_str(), 0755);
  mkdir((c.root + "/a/b").c_str(), 0755);
  for (int f = 0; f < files; f++) {
    std::string content;
    int words = (f % 17 == 0) ? 0 : static_cast<int>(std::pow(2.0, (rng() % 140) / 10.0));
    for (int w = 0; w < words; w++) {
      double u = (rng() % 10000 + 1) / 10001.0;
      size_t idx = static_cast<size_t>(std::pow(u, 3.0) * (c.vocab.size() - 1));
      std::string word = c.vocab[idx];
      if (rng() % 7 == 0) word[0] = 'W';
      content += word;
      content += " .-:\n,"[rng() % 6];
      if (rng() % 500 == 0) content += std::string(300 + rng() % 300, 'z') + " ";
    }
    std::string dir = f % 3 == 0 ? "/a/b/" : f % 3 == 1 ? "/a/" : "/";
    std::string path = c.root + dir + "f" + std::to_string(f) + ".log";
    testutil::write(path, content);
    brute::Doc d;
    d.path = path;
    for (const auto& t : brute::tokenize(content)) {
      d.tf[t]++;
      d.len++;
    }
    c.docs.push_back(d);
  }
  return c;
}

using refresh_util::expect_same;

const char* kQueries[] = {"w0", "w1", "w5 w7", "w100 w2 w3", "W0 w0 w250", "zzzz",
                          "nothere", "\xC3\xBC" "ber w9", "w42 w43 w44 w45"};

void check_all(const std::string& dir, const Corpus& c, const std::string& label) {
  for (const char* q : kQueries)
    for (bool bm25 : {false, true})
      for (bool all : {false, true}) {
        auto want = brute::search(c.docs, q, bm25, all);
        auto got = testutil::search(dir, q, -1, bm25 ? SCIPIS_BM25 : SCIPIS_TFIDF,
                                    all ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY);
        expect_same(got, want, label + " q=" + q);
        auto top = testutil::search(dir, q, 10, bm25 ? SCIPIS_BM25 : SCIPIS_TFIDF,
                                    all ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY);
        if (want.size() > 10) want.resize(10);
        expect_same(top, want, label + " top10 q=" + q);
      }
}

}  // namespace

TEST(BuildSearch, MatchesBruteForceUnderEveryTuning) {
  Corpus c = make_corpus(400, 11);
  struct Tuning {
    const char* name;
    int depth, split, readers, indexers, writers;
    uint64_t tf_size, path_size, block;
  };
  const Tuning tunings[] = {
      {"default", 4, 16, 0, 0, 0, 256ull << 20, 64ull << 20, 1u << 20},
      {"depth1", 1, 1, 1, 1, 1, 1u << 20, 1u << 20, 4096},
      {"depth2-split64", 2, 64, 2, 3, 2, 1u << 20, 1u << 20, 512},
      {"depth8-tiny", 8, 16, 3, 3, 3, 65536, 65536, 512},
  };
  for (const auto& t : tunings) {
    scipis_options o;
    scipis_options_init(&o);
    o.index_depth = t.depth;
    o.split_factor = t.split;
    o.reader_threads = t.readers;
    o.indexer_threads = t.indexers;
    o.writer_threads = t.writers;
    o.tfidf_index_size = t.tf_size;
    o.path_index_size = t.path_size;
    o.block_size = t.block;
    std::string dir = testutil::scratch_dir();
    scipis_build_stats st;
    scipis_error err;
    ASSERT_EQ(testutil::build(dir, c.root, o, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files, c.docs.size()) << t.name;
    if (t.tf_size == 65536) {
      EXPECT_GT(st.segments, 12u) << "tiny index sizes must flush often";
    }
    check_all(dir, c, t.name);
    testutil::rm_rf(dir);
  }
  testutil::rm_rf(c.root);
}

TEST(BuildSearch, RebuildReplacesAndEmptyQueryIsAnError) {
  Corpus c = make_corpus(30, 5);
  std::string dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, c.root, o, &st, &err), 0) << err.message;
  testutil::write(c.root + "/new.log", "w0 w0 w0 fresh");
  ASSERT_EQ(testutil::build(dir, c.root, o, &st, &err), 0) << err.message;
  auto got = testutil::search(dir, "fresh");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, c.root + "/new.log");
  testutil::search(dir, " -- ", 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
  EXPECT_EQ(err.code, SCIPIS_E_INVALID);
  testutil::rm_rf(dir);
  testutil::rm_rf(c.root);
}

TEST(BuildSearch, NotIndexedAndBadOptions) {
  scipis_error err;
  std::string dir = testutil::scratch_dir();
  EXPECT_EQ(scipis_index_open(dir.c_str(), &err), nullptr);
  EXPECT_EQ(err.code, SCIPIS_E_NOT_INDEXED);
  scipis_options o;
  scipis_options_init(&o);
  o.split_factor = 0;
  EXPECT_NE(scipis_options_check(&o, &err), 0);
  EXPECT_NE(std::string(err.message).find("split_factor"), std::string::npos);
  scipis_options_init(&o);
  o.block_size = 100;
  EXPECT_NE(scipis_options_check(&o, &err), 0);
  EXPECT_NE(std::string(err.message).find("block_size"), std::string::npos);
  scipis_options_init(&o);
  EXPECT_EQ(scipis_build_start(dir.c_str(), "relative/path", &o, &err), nullptr);
  EXPECT_EQ(err.code, SCIPIS_E_INVALID);
  EXPECT_EQ(scipis_build_start(dir.c_str(), "/nonexistent/scipis", &o, &err), nullptr);
  EXPECT_EQ(err.code, SCIPIS_E_IO);
  testutil::rm_rf(dir);
}
