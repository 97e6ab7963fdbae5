// Compaction: merged segments, dropped tombstones and folded chains leave
// every answer equal to the oracle over the tree, and the index smaller.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "pipeline/append.h"
#include "pipeline/compact.h"
#include "refresh_util.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

int compact(const std::string& dir, const scipis_options& o, bool all, scipis_build_stats* st,
            scipis_error* err) {
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, all ? SCIPIS_COMPACT_ALL : 0, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

const std::vector<std::string> kMore = {"w12", "w1 w12", std::string(255, 'q'), "w10 w11"};

}  // namespace

TEST(Compact, MergesKeepEveryAnswer) {
  AppendMin every_size(0);
  std::mt19937 rng(3);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::vector<std::string> files;
  for (int i = 0; i < 12; i++) {
    files.push_back(root + "/f" + std::to_string(i) + ".log");
    testutil::write(files.back(), lines(rng, rng() % 5000));
  }
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  usleep(150 * 1000);
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::string log;
  uint64_t segments = 0;
  for (int step = 0; step < 16; step++) {
    // Appends (chains), rewrites and deletes, each refreshed.
    const std::string& f = files[rng() % files.size()];
    const int op = static_cast<int>(rng() % 4);
    if (!fs::exists(f) || op == 3) {
      testutil::write(f, lines(rng, rng() % 4000));
      log += "write " + f + "\n";
    } else if (op == 2 && step % 5 == 4) {
      fs::remove(f);
      log += "delete " + f + "\n";
    } else {
      std::ofstream(f, std::ios::app) << (rng() % 2 ? "2 " : " ") + lines(rng, rng() % 900) +
                                             std::string(rng() % 300, 'q');
      log += "append " + f + "\n";
    }
    usleep(150 * 1000);
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    segments = std::max<uint64_t>(segments, st.segments);
    if (step % 4 != 2) continue;
    // The tail tiers only: merged when 4 or more pile up.
    const uint64_t before = st.segments, deleted = st.deleted_docs;
    ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
    log += "compact: " + std::to_string(st.segments_merged) + " merged\n";
    EXPECT_LE(st.segments, before) << log;
    if (st.segments_merged > 0) {
      EXPECT_LT(st.segments, before) << log;
    }
    EXPECT_LE(st.deleted_docs, deleted) << log;
    check(dir, root, "tiered, step " + std::to_string(step) + "\n" + log, kMore);
    if (HasFailure()) return;
  }
  EXPECT_GT(segments, 4u);
  // Everything: one run per indexer, no tombstone, no chain left.
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_EQ(st.deleted_docs, 0u);
  EXPECT_EQ(st.chain_links, 0u);
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_LT(st.segments, segments);
  check(dir, root, "all\n" + log, kMore);
  // A refresh after it reads nothing that did not change.
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added + st.files_changed + st.files_appended + st.files_deleted, 0u) << log;
  // And keeps appending to folded files from their new records.
  std::ofstream(files[0], std::ios::app) << " w5 w5";
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended + st.files_added, 1u);
  check(dir, root, "after\n" + log, kMore);
  // Merged until nothing is left to merge (then no new generation).
  int merges = 0;
  do {
    ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
  } while (st.segments_merged > 0 && ++merges < 4);
  EXPECT_EQ(st.segments_merged, 0u);
  EXPECT_FALSE(scipis_compact_needed(dir.c_str()));
  check(dir, root, "merged\n" + log, kMore);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
