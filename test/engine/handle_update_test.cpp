// A handle kept open across refreshes and merges and moved to each new
// manifest with scipis_index_update (as a backend's cached handle is):
// what it keeps of the segments both states name must never show in an
// answer. Every answer is checked against the brute-force oracle.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "refresh_util.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

std::vector<testutil::Result> search_with(scipis_index* ix, const std::string& q, int64_t k, bool bm25, bool all,
                                          scipis_error* err) {
  std::vector<testutil::Result> out;
  scipis_docs docs;
  if (scipis_search(ix, q.data(), q.size(), k, bm25 ? SCIPIS_BM25 : SCIPIS_TFIDF,
                    all ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY, &docs, err) != 0)
    return out;
  for (size_t i = 0; i < docs.n; i++)
    out.push_back({std::string(docs.docs[i].path, docs.docs[i].path_len), docs.docs[i].score, docs.docs[i].tokens});
  scipis_docs_free(&docs);
  return out;
}

// Every query kind through the kept handle, against the oracle on the tree
// as it is; the listing and a lookup of each file through it too.
void check_kept(scipis_index* ix, const std::string& root, const std::string& label) {
  const auto docs = oracle_docs(root);
  scipis_error err;
  for (const std::string q : {"w0", "w1 w2", "w3 w0 w7", "w11", "fresh"})
    for (bool bm25 : {false, true})
      for (bool all : {false, true}) {
        auto want = brute::search(docs, q, bm25, all);
        expect_same(search_with(ix, q, -1, bm25, all, &err), want, label + " q=" + q);
        if (want.size() > 3) want.resize(3);
        expect_same(search_with(ix, q, 3, bm25, all, &err), want, label + " top3 q=" + q);
      }
  scipis_docs listed;
  ASSERT_EQ(scipis_list_files(ix, &listed, &err), 0) << err.message;
  ASSERT_EQ(listed.n, docs.size()) << label;
  for (size_t i = 0; i < docs.size(); i++) {
    EXPECT_EQ(std::string(listed.docs[i].path, listed.docs[i].path_len), docs[i].path) << label;
    EXPECT_EQ(listed.docs[i].tokens, docs[i].len) << label;
  }
  scipis_docs_free(&listed);
  for (const auto& d : docs) {
    scipis_docs found;
    ASSERT_EQ(scipis_lookup(ix, d.path.data(), d.path.size(), &found, &err), 0) << err.message;
    EXPECT_EQ(found.n, 1u) << label << " " << d.path;
    scipis_docs_free(&found);
  }
}

}  // namespace

TEST(HandleUpdate, AKeptHandleAnswersAsTheOracleAfterEveryRefreshAndMerge) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(7);
  for (int i = 0; i < 12; i++) testutil::write(root + "/f" + std::to_string(i) + ".log", lines(rng, 3000));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr) << err.message;
  check_kept(ix, root, "built");
  int next = 100;
  for (int step = 0; step < 16; step++) {
    // Appends (chains), a new file, a rewrite, a delete; a merge of the
    // refreshes' segments now and then, a full one once.
    const std::string f = root + "/f" + std::to_string(rng() % 12) + ".log";
    switch (step % 4) {
      case 0:
        if (fs::exists(f)) std::ofstream(f, std::ios::app) << lines(rng, 600) << "\n";
        break;
      case 1:
        testutil::write(root + "/n" + std::to_string(next++) + ".log", lines(rng, 800) + " fresh");
        break;
      case 2:
        if (fs::exists(f)) testutil::write(f, lines(rng, 1500) + " fresh");
        break;
      case 3:
        fs::remove(f);
        break;
    }
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    if (step % 5 == 4) {
      ASSERT_EQ(compact(dir, o, step == 14, &st, &err), 0) << err.message;
    }
    EXPECT_FALSE(scipis_index_is_current(ix));
    ASSERT_EQ(scipis_index_update(ix, &err), 0) << err.message;
    EXPECT_TRUE(scipis_index_is_current(ix));
    check_kept(ix, root, "step " + std::to_string(step));
    if (HasFailure()) break;
  }
  scipis_index_close(ix);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A collection directory removed and made again holds other files under
// the same generation and segment names: a handle moved to it must read
// them, not keep what it read of the old ones. The copy's segment files
// are damaged, so an answer from anything but them is the old state's.
TEST(HandleUpdate, ADirectoryMadeAgainIsReadAfresh) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(8);
  for (int i = 0; i < 6; i++) testutil::write(root + "/f" + std::to_string(i) + ".log", lines(rng, 3000));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr) << err.message;
  check_kept(ix, root, "built");
  const std::string old = dir + ".old";
  fs::rename(dir, old);
  fs::copy(old, dir, fs::copy_options::recursive);
  int damaged = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename().string().find("seg_") == std::string::npos) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.put('X');
    damaged++;
  }
  ASSERT_GT(damaged, 0);
  // The manifest is whole: the handle moves, and a search reads the
  // damaged files (unless it kept the old ones).
  const int rc = scipis_index_update(ix, &err);
  if (rc == 0) {
    EXPECT_TRUE(search_with(ix, "w1", -1, true, false, &err).empty());
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
  } else {
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
  }
  scipis_index_close(ix);
  testutil::rm_rf(old);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
