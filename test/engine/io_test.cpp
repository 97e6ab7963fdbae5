// Reading paths: O_DIRECT gives the same index as buffered reads, and a
// tree that changes during the crawl is indexed without failing.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <set>
#include <thread>

#include "test_util.h"

namespace {

std::string corpus() {
  std::string root = testutil::scratch_dir();
  for (int i = 0; i < 60; i++) {
    std::string text;
    for (int w = 0; w < 3000 + i * 37; w++) text += "k" + std::to_string((w * 31 + i) % 211) + (w % 9 ? " " : "\n");
    testutil::write(root + "/s" + std::to_string(i) + ".log", text);
  }
  return root;
}

}  // namespace

TEST(DirectIo, SameResultsAsBufferedReads) {
  std::string root = corpus();
  std::string a = testutil::scratch_dir(), b = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  o.block_size = 4096;
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(a, root, o, &st, &err), 0) << err.message;
  o.direct_io = 1;
  ASSERT_EQ(testutil::build(b, root, o, &st, &err), 0) << err.message;
  for (const char* q : {"k1", "k7 k9", "k100 k200 k210"}) {
    auto x = testutil::search(a, q, -1), y = testutil::search(b, q, -1);
    ASSERT_EQ(x.size(), y.size()) << q;
    ASSERT_FALSE(x.empty()) << q;
    for (size_t i = 0; i < x.size(); i++) {
      EXPECT_EQ(x[i].path, y[i].path);
      EXPECT_EQ(x[i].score, y[i].score);
    }
  }
  testutil::rm_rf(a);
  testutil::rm_rf(b);
  testutil::rm_rf(root);
}

// Files appear, grow and vanish while the build runs: the build succeeds,
// and the files nobody touched are indexed exactly.
TEST(Crawl, TreeChangingDuringTheBuild) {
  std::string root = corpus();
  mkdir((root + "/churn").c_str(), 0755);
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    for (int i = 0; !stop.load(); i++) {
      std::string p = root + "/churn/c" + std::to_string(i % 50);
      testutil::write(p, std::string(5000, 'x') + " volatile");
      if (i % 3 == 0) unlink((root + "/churn/c" + std::to_string((i + 7) % 50)).c_str());
    }
  });
  std::string dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  o.block_size = 512;
  scipis_build_stats st;
  scipis_error err;
  for (int round = 0; round < 3; round++)
    ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  stop = true;
  churn.join();
  std::string stable = testutil::scratch_dir();
  testutil::rm_rf(root + "/churn");
  ASSERT_EQ(testutil::build(stable, root, o, &st, &err), 0) << err.message;
  // Scores depend on N, which the churn changes: compare the matching sets.
  auto paths = [](const std::vector<testutil::Result>& r) {
    std::set<std::string> s;
    for (const auto& h : r) s.insert(h.path);
    return s;
  };
  EXPECT_EQ(paths(testutil::search(dir, "k5 k6", -1)), paths(testutil::search(stable, "k5 k6", -1)));
  testutil::rm_rf(dir);
  testutil::rm_rf(stable);
  testutil::rm_rf(root);
}
