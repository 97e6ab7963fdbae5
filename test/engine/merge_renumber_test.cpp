// A merge that renumbers beside refreshes (scipis_compact_garbage_start):
// refreshes commit while it runs, and after its commit every answer equals
// the brute-force oracle on the tree as it now is, with the tombstoned
// documents' records gone.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "index/journal.h"
#include "refresh_util.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

// A tree whose overwritten files leave most records tombstoned.
struct GarbageTree {
  std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng{11};
  scipis_options o = tiny_options();
  GarbageTree() {
    for (int i = 0; i < 24; i++) testutil::write(file(i), lines(rng, 2500));
    scipis_build_stats st;
    scipis_error err;
    settle();
    EXPECT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 20; i++) testutil::write(file(i), lines(rng, 2000) + " fresh");
      settle();
      EXPECT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    }
  }
  ~GarbageTree() {
    testutil::rm_rf(dir);
    testutil::rm_rf(root);
  }
  std::string file(int i) const { return root + "/f" + std::to_string(i) + ".log"; }
  uint64_t deleted() const { return scipis::read_current(dir).m.deleted; }
  // Changes of every kind, each refreshed: appends (chains), rewrites, a
  // delete, a new file.
  void churn(int steps) {
    scipis_build_stats st;
    scipis_error err;
    for (int k = 0; k < steps; k++) {
      const int i = static_cast<int>(rng() % 24);
      switch (k % 4) {
        case 0:
          if (fs::exists(file(i))) append(file(i), lines(rng, 700) + "\n");
          break;
        case 1:
          testutil::write(file(i), lines(rng, 900) + " fresh");
          break;
        case 2:
          fs::remove(file(i));
          break;
        case 3:
          testutil::write(root + "/n" + std::to_string(next++) + ".log", lines(rng, 600));
          break;
      }
      settle();
      ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    }
  }
  int next = 0;
};

int finish_merge(scipis_build* b, scipis_build_stats* st) {
  scipis_error err;
  while (!scipis_build_wait(b, 100)) {
  }
  const int rc = scipis_build_finish(b, st, &err);
  EXPECT_EQ(rc, 0) << err.message;
  return rc;
}

}  // namespace

// Nothing committed meanwhile: the merge itself is published.
TEST(MergeRenumber, AloneItIsPublished) {
  GarbageTree t;
  const uint64_t before = t.deleted();
  ASSERT_GT(before, 0u);
  ASSERT_EQ(scipis_compact_needed(t.dir.c_str(), 0), 1);
  const uint64_t gen = scipis::read_current(t.dir).m.generation;
  scipis_error err;
  scipis_build* b = scipis_compact_garbage_start(t.dir.c_str(), t.root.c_str(), &t.o, &err);
  ASSERT_NE(b, nullptr) << err.message;
  scipis_build_stats st;
  ASSERT_EQ(finish_merge(b, &st), 0);
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_GT(st.docs_dropped, 0u);
  EXPECT_LT(t.deleted(), before);
  EXPECT_EQ(scipis::read_current(t.dir).m.generation, gen + 1);
  check(t.dir, t.root, "merged alone", {"fresh"});
  t.churn(4);
  check(t.dir, t.root, "refreshed after", {"fresh"});
}

// Refreshes of every kind of change commit while it runs: its commit
// refreshes the tree on top of the merge, and answers as the oracle.
TEST(MergeRenumber, RefreshesMeanwhileAreReadAgainOnTopOfIt) {
  for (int steps : {1, 6}) {
    GarbageTree t;
    const uint64_t before = t.deleted();
    scipis_error err;
    scipis_build* b = scipis_compact_garbage_start(t.dir.c_str(), t.root.c_str(), &t.o, &err);
    ASSERT_NE(b, nullptr) << err.message;
    // A second one waits for the first.
    scipis_build* again = scipis_compact_garbage_start(t.dir.c_str(), t.root.c_str(), &t.o, &err);
    EXPECT_EQ(again, nullptr);
    EXPECT_EQ(err.code, SCIPIS_E_INVALID);
    t.churn(steps);
    if (HasFailure()) return;
    const uint64_t gen = scipis::read_current(t.dir).m.generation;
    scipis_build_stats st;
    ASSERT_EQ(finish_merge(b, &st), 0);
    EXPECT_GT(st.docs_dropped, 0u);
    EXPECT_LT(t.deleted(), before);
    // The merged generation, then the refresh on top of it.
    EXPECT_EQ(scipis::read_current(t.dir).m.generation, gen + 2);
    EXPECT_FALSE(fs::exists(t.dir + "/merging"));
    check(t.dir, t.root, std::to_string(steps) + " refreshes meanwhile", {"fresh"});
    t.churn(4);
    check(t.dir, t.root, std::to_string(steps) + " refreshes meanwhile, then more", {"fresh"});
    // Nothing it read again was lost: a fresh build has as many files.
    scipis_build_stats now;
    ASSERT_EQ(refresh(t.dir, t.root, t.o, {}, &now, &err), 0) << err.message;
    EXPECT_EQ(now.files_added + now.files_changed + now.files_deleted, 0u);
  }
}

// Its commit reads again only the paths the refreshes meanwhile touched:
// a file changed on disk that no refresh named is left to the next one
// (the catch-up walks no tree), and what the refreshes committed is all
// there, every way a search reaches it.
TEST(MergeRenumber, TheCatchUpReadsWhatRefreshesTouchedOnly) {
  GarbageTree t;
  scipis_error err;
  scipis_build* b = scipis_compact_garbage_start(t.dir.c_str(), t.root.c_str(), &t.o, &err);
  ASSERT_NE(b, nullptr) << err.message;
  scipis_build_stats st;
  // Named refreshes of a rewrite, an append, a delete and a new file.
  testutil::write(t.file(0), lines(t.rng, 900) + " zebra");
  append(t.file(1), lines(t.rng, 500) + " yak\n");
  fs::remove(t.file(2));
  fs::create_directories(t.root + "/sub");
  testutil::write(t.root + "/sub/new.log", lines(t.rng, 700) + " xenon");
  settle();
  ASSERT_EQ(refresh(t.dir, t.root, t.o, {t.file(0), t.file(1), t.file(2), t.root + "/sub"}, &st, &err), 0)
      << err.message;
  // Changed, but refreshed by no one yet.
  testutil::write(t.file(3), lines(t.rng, 800) + " walrus");
  settle();
  ASSERT_EQ(finish_merge(b, &st), 0);
  for (const char* q : {"zebra", "yak", "xenon"})
    EXPECT_EQ(testutil::search(t.dir, q, -1, SCIPIS_BM25, SCIPIS_MATCH_ANY).size(), 1u) << q;
  EXPECT_TRUE(testutil::search(t.dir, "walrus", -1, SCIPIS_BM25, SCIPIS_MATCH_ANY).empty());
  const auto paths = listed(t.dir);
  EXPECT_EQ(std::count(paths.begin(), paths.end(), t.file(2)), 0);
  // The next refresh of that path brings it, and the index is the tree's.
  ASSERT_EQ(refresh(t.dir, t.root, t.o, {t.file(3)}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_changed, 1u);
  check(t.dir, t.root, "caught up, then the path refreshed", {"fresh", "zebra", "yak", "xenon", "walrus"});
}

// A compaction of every segment under the lock meanwhile (scipis_compact):
// the merge is dropped if it kept any segment that compaction replaced,
// else it commits on top as after refreshes; either way the collection
// answers as the oracle.
TEST(MergeRenumber, AFullCompactionMeanwhile) {
  GarbageTree t;
  scipis_error err;
  scipis_build* b = scipis_compact_garbage_start(t.dir.c_str(), t.root.c_str(), &t.o, &err);
  ASSERT_NE(b, nullptr) << err.message;
  t.churn(2);
  scipis_build_stats st;
  ASSERT_EQ(compact(t.dir, t.o, true, &st, &err), 0) << err.message;
  const uint64_t gen = scipis::read_current(t.dir).m.generation;
  ASSERT_EQ(finish_merge(b, &st), 0);

  if (st.segments_merged == 0) {
    EXPECT_EQ(scipis::read_current(t.dir).m.generation, gen);
  }
  EXPECT_FALSE(fs::exists(t.dir + "/merging"));
  check(t.dir, t.root, "after a full compaction meanwhile", {"fresh"});
}

// Stopped (a watcher's exit) before its commit: nothing it wrote is seen,
// its stage is garbage, and the next one runs.
TEST(MergeRenumber, AbortedLeavesTheCollectionAsItWas) {
  GarbageTree t;
  const uint64_t gen = scipis::read_current(t.dir).m.generation;
  scipis_error err;
  scipis_build* b = scipis_compact_garbage_start(t.dir.c_str(), t.root.c_str(), &t.o, &err);
  ASSERT_NE(b, nullptr) << err.message;
  scipis_build_abort(b);
  EXPECT_EQ(scipis::read_current(t.dir).m.generation, gen);
  check(t.dir, t.root, "aborted", {"fresh"});
  t.churn(2);
  b = scipis_compact_garbage_start(t.dir.c_str(), t.root.c_str(), &t.o, &err);
  ASSERT_NE(b, nullptr) << err.message;
  scipis_build_stats st;
  ASSERT_EQ(finish_merge(b, &st), 0);
  EXPECT_GT(st.docs_dropped, 0u);
  check(t.dir, t.root, "merged after an aborted one", {"fresh"});
}
