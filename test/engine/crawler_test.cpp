// Crawler edge cases: symlinks and their loops, special files that must
// never be opened, odd path bytes, globs.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "test_util.h"

namespace {

std::set<std::string> indexed_paths(const std::string& dir) {
  std::set<std::string> out;
  scipis_error err;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  EXPECT_NE(ix, nullptr) << err.message;
  if (!ix) return out;
  scipis_docs docs;
  EXPECT_EQ(scipis_list_files(ix, &docs, &err), 0) << err.message;
  for (size_t i = 0; i < docs.n; i++) out.insert(std::string(docs.docs[i].path, docs.docs[i].path_len));
  scipis_docs_free(&docs);
  scipis_index_close(ix);
  return out;
}

}  // namespace

TEST(Crawler, SpecialFilesSymlinksAndOddNames) {
  std::string root = testutil::scratch_dir();
  mkdir((root + "/sub").c_str(), 0755);
  testutil::write(root + "/plain.log", "alpha beta");
  testutil::write(root + "/with space.log", "alpha");
  testutil::write(root + "/new\nline.log", "alpha");
  testutil::write(root + "/bad\xff\xfe.log", "alpha gamma");
  testutil::write(root + "/empty.log", "");
  testutil::write(root + "/sub/inner.txt", "alpha");
  ASSERT_EQ(mkfifo((root + "/fifo").c_str(), 0644), 0);
  ASSERT_EQ(symlink(root.c_str(), (root + "/sub/loop").c_str()), 0);
  ASSERT_EQ(symlink((root + "/plain.log").c_str(), (root + "/link.log").c_str()), 0);
  ASSERT_EQ(symlink("/nonexistent/x", (root + "/dangling").c_str()), 0);

  std::string dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  scipis_build_stats st;
  scipis_error err;
  // A FIFO that were opened for reading would block this build forever.
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::set<std::string> want = {root + "/plain.log", root + "/with space.log",
                                root + "/new\nline.log", root + "/bad\xff\xfe.log",
                                root + "/empty.log", root + "/sub/inner.txt"};
  EXPECT_EQ(indexed_paths(dir), want);
  auto hits = testutil::search(dir, "gamma");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].path, root + "/bad\xff\xfe.log");
  EXPECT_EQ(testutil::search(dir, "alpha").size(), 5u) << "the empty file never matches";

  // Following symlinks: the loop is visited once, the file link is indexed.
  o.follow_symlinks = 1;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  auto paths = indexed_paths(dir);
  EXPECT_TRUE(paths.count(root + "/link.log"));
  EXPECT_EQ(paths.size(), want.size() + 1);

  // Globs: a name glob, and an exclude that prunes a directory.
  scipis_options_init(&o);
  const char* inc[] = {"*.log"};
  const char* exc[] = {"sub", "empty*"};
  o.include = inc;
  o.n_include = 1;
  o.exclude = exc;
  o.n_exclude = 2;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(indexed_paths(dir),
            (std::set<std::string>{root + "/plain.log", root + "/with space.log",
                                   root + "/new\nline.log", root + "/bad\xff\xfe.log"}));
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Crawler, UnreadableEntriesAreSkipped) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads everything; covered by the SQL tests";
  std::string root = testutil::scratch_dir();
  mkdir((root + "/closed").c_str(), 0000);
  testutil::write(root + "/secret.log", "hidden");
  chmod((root + "/secret.log").c_str(), 0000);
  testutil::write(root + "/open.log", "visible");
  std::string dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files, 1u);
  EXPECT_EQ(st.skipped, 2u);
  chmod((root + "/closed").c_str(), 0755);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Crawler, LookupFindsExactPathOnly) {
  std::string root = testutil::scratch_dir();
  for (int i = 0; i < 50; i++) testutil::write(root + "/f" + std::to_string(i), "x y z");
  std::string dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  o.path_index_size = 65536;
  o.split_factor = 8;
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr);
  for (int i = 0; i < 50; i++) {
    std::string p = root + "/f" + std::to_string(i);
    scipis_docs docs;
    ASSERT_EQ(scipis_lookup(ix, p.data(), p.size(), &docs, &err), 0) << err.message;
    ASSERT_EQ(docs.n, 1u);
    EXPECT_EQ(std::string(docs.docs[0].path, docs.docs[0].path_len), p);
    EXPECT_EQ(docs.docs[0].tokens, 3u);
    EXPECT_EQ(docs.docs[0].size, 5u);
    scipis_docs_free(&docs);
  }
  std::string missing = root + "/f";
  scipis_docs docs;
  ASSERT_EQ(scipis_lookup(ix, missing.data(), missing.size(), &docs, &err), 0);
  EXPECT_EQ(docs.n, 0u);
  scipis_docs_free(&docs);
  scipis_index_close(ix);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
