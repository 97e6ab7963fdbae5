// scipis_build_get_progress: counters that only grow, found >= done, and
// totals that equal what the tree holds once the walk has ended.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace {

struct Tree {
  std::string root = testutil::scratch_dir();
  uint64_t files = 0, bytes = 0;
  Tree(int dirs, int per_dir) {
    for (int d = 0; d < dirs; d++) {
      std::string dir = root + "/d" + std::to_string(d);
      mkdir(dir.c_str(), 0755);
      for (int f = 0; f < per_dir; f++) {
        std::string body;
        for (int i = 0; i < 50 + (d * 7 + f) % 300; i++)
          body += "t" + std::to_string((d * 131 + f * 17 + i) % 5000) + " ";
        testutil::write(dir + "/f" + std::to_string(f), body);
        files++;
        bytes += body.size();
      }
    }
  }
  ~Tree() { testutil::rm_rf(root); }
};

TEST(BuildProgress, GrowsAndEndsAtTheTotals) {
  Tree tree(40, 100);
  std::string dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 1;
  o.tfidf_index_size = 1 << 20;
  scipis_error err;
  scipis_build* b =
      scipis_build_start_ex(dir.c_str(), tree.root.c_str(), &o, SCIPIS_BUILD_COUNT_BYTES, &err);
  ASSERT_NE(b, nullptr) << err.message;
  std::vector<scipis_build_progress> seen;
  do {
    scipis_build_progress p;
    scipis_build_get_progress(b, &p);
    seen.push_back(p);
  } while (!scipis_build_wait(b, 2));
  scipis_build_progress last;
  scipis_build_get_progress(b, &last);
  seen.push_back(last);
  for (size_t i = 0; i < seen.size(); i++) {
    const auto& p = seen[i];
    EXPECT_LE(p.files_done, p.files_found);
    EXPECT_LE(p.bytes_done, p.bytes_found);
    EXPECT_LE(p.files_found, tree.files);
    EXPECT_LE(p.bytes_found, tree.bytes);
    if (i == 0) continue;
    const auto& q = seen[i - 1];
    EXPECT_GE(p.files_done, q.files_done);
    EXPECT_GE(p.bytes_done, q.bytes_done);
    EXPECT_GE(p.files_found, q.files_found);
    EXPECT_GE(p.bytes_found, q.bytes_found);
    EXPECT_GE(p.phase, q.phase);
    EXPECT_GE(p.crawl_done, q.crawl_done);
  }
  EXPECT_EQ(last.crawl_done, 1);
  EXPECT_EQ(last.phase, SCIPIS_PHASE_FLUSHING);
  EXPECT_EQ(last.files_found, tree.files);
  EXPECT_EQ(last.bytes_found, tree.bytes);
  EXPECT_EQ(last.files_done, tree.files);
  EXPECT_EQ(last.bytes_done, tree.bytes);
  scipis_build_stats stats;
  ASSERT_EQ(scipis_build_finish(b, &stats, &err), 0) << err.message;
  EXPECT_EQ(stats.files, tree.files);
  testutil::rm_rf(dir);
}

// Without the flag the walk does not stat: bytes found stay 0.
TEST(BuildProgress, BytesFoundOnlyWhenAsked) {
  Tree tree(2, 10);
  std::string dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  scipis_error err;
  scipis_build* b = scipis_build_start_ex(dir.c_str(), tree.root.c_str(), &o, 0, &err);
  ASSERT_NE(b, nullptr) << err.message;
  while (!scipis_build_wait(b, 100)) {
  }
  scipis_build_progress p;
  scipis_build_get_progress(b, &p);
  EXPECT_EQ(p.bytes_found, 0u);
  EXPECT_EQ(p.files_found, tree.files);
  scipis_build_stats stats;
  ASSERT_EQ(scipis_build_finish(b, &stats, &err), 0) << err.message;
  testutil::rm_rf(dir);
}

}  // namespace
