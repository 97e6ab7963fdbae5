// A merge in step (index/tf_merge.h) against the table merge it replaces
// for runs that keep every document: the same bytes, one segment per
// indexer whatever the table's size, every answer the oracle's; a damaged
// input is an error naming its file, and the collection stays as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <fstream>
#include <random>

#include "pipeline/compact.h"
#include "query/collection.h"
#include "util/fileio.h"
#include "refresh_util.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

// Logs of up to 60 KiB (a tiny table's flushes cut them), numbers (terms
// of one document), words shared by all, terms of 255 bytes.
std::string tree(std::mt19937& rng, int files = 80) {
  const std::string root = testutil::scratch_dir();
  for (int d = 0; d < 3; d++) fs::create_directories(root + "/d" + std::to_string(d));
  for (int f = 0; f < files; f++) {
    std::string text = lines(rng, rng() % 60000);
    for (int n = 0; n < 400; n++) text += " " + std::to_string(rng() % 1000000);
    if (f % 7 == 0) text += " " + std::string(255, static_cast<char>('a' + f % 26));
    testutil::write(root + "/d" + std::to_string(f % 3) + "/f" + std::to_string(f) + ".log", text);
  }
  return root;
}

// The segment files of dir's current generation, by name.
std::map<std::string, std::string> segment_files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    // seg_N.* in an indexer's directory, or packed: <dir>.seg_N.pack.
    const bool packed = name.find(".seg_") != std::string::npos;
    if (!e.is_regular_file() || (name.rfind("seg_", 0) != 0 && !packed)) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out[packed ? name : e.path().parent_path().filename().string() + "/" + name] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

uint64_t segments_of(const std::string& dir) {
  scipis::Collection c(dir);
  return c.manifest().segments.size();
}

}  // namespace

TEST(TfMerge, InStepWritesWhatABigEnoughTableWrites) {
  std::mt19937 rng(48);
  const std::string root = tree(rng);
  scipis_options o = tiny_options();
  o.path_index_size = 16 << 20;  // every record of a run in one path index
  const std::string built = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(built, root, o, &st, &err), 0) << err.message;
  ASSERT_GT(st.segments, 6u) << "several flushes per indexer, documents cut";
  const std::string in_step = testutil::scratch_dir(), by_table = testutil::scratch_dir();
  fs::copy(built, in_step, fs::copy_options::recursive);
  fs::copy(built, by_table, fs::copy_options::recursive);

  // In step: one segment per indexer, whatever the table (1 MiB: the
  // build's 64 KiB held a few thousand terms).
  scipis_options one_mib = o;
  one_mib.tfidf_index_size = 1 << 20;
  ASSERT_EQ(compact(in_step, one_mib, true, &st, &err), 0) << err.message;
  EXPECT_EQ(segments_of(in_step), 2u);
  check(in_step, root, "in step", {"w1 w12", "w3", std::string(255, 'a')});

  // Through a table that holds every term: the same one segment each.
  scipis::set_merge_in_step(false);
  scipis_options big = o;
  big.tfidf_index_size = 256 << 20;
  const int rc = compact(by_table, big, true, &st, &err);
  scipis::set_merge_in_step(true);
  ASSERT_EQ(rc, 0) << err.message;
  ASSERT_EQ(segments_of(by_table), 2u);
  const auto a = segment_files(in_step), b = segment_files(by_table);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, bytes] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_TRUE(bytes == b.at(name)) << name << ": " << bytes.size() << " bytes against " << b.at(name).size();
  }
  EXPECT_GE(a.size(), 2u) << "a file or more per indexer";

  // The table at the build's size cuts the merge into several again.
  scipis::set_merge_in_step(false);
  const std::string cut = testutil::scratch_dir();
  fs::copy(built, cut, fs::copy_options::recursive);
  const int rc2 = compact(cut, one_mib, true, &st, &err);
  scipis::set_merge_in_step(true);
  ASSERT_EQ(rc2, 0) << err.message;
  EXPECT_GT(segments_of(cut), 2u);
  // And so does a run past what a merge in step may hold (48 bytes a
  // term of its inputs, 8 tables of 64 KiB: 10,922 terms).
  const std::string bounded = testutil::scratch_dir();
  fs::copy(built, bounded, fs::copy_options::recursive);
  ASSERT_EQ(compact(bounded, o, true, &st, &err), 0) << err.message;
  EXPECT_GT(segments_of(bounded), 2u);
  check(bounded, root, "bounded", {"w1 w12"});
  for (const std::string& d : {built, in_step, by_table, cut, bounded}) testutil::rm_rf(d);
  testutil::rm_rf(root);
}

// Records that do not fit one path index (3,000 files, 64 KiB): the merge
// goes through the table and its flushes instead (more than a segment per
// indexer), with the same answers.
TEST(TfMerge, RunsPastAPathIndexMergeByTable) {
  std::mt19937 rng(49);
  const std::string root = testutil::scratch_dir();
  for (int d = 0; d < 10; d++) fs::create_directories(root + "/d" + std::to_string(d));
  for (int f = 0; f < 3000; f++)
    testutil::write(root + "/d" + std::to_string(f % 10) + "/f" + std::to_string(f) + ".log",
                    lines(rng, 50 + rng() % 400) + " " + std::to_string(rng() % 100000));
  const scipis_options o = tiny_options();  // 64 KiB of path index
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_GT(segments_of(dir), 2u) << "cut where the path index filled";
  check(dir, root, "by table", {"w1 w12", "w3"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A byte of an input's postings flipped: the merge fails naming the file,
// and the collection answers from the generation it had.
TEST(TfMerge, DamagedInputIsAnErrorNamingIt) {
  std::mt19937 rng(50);
  const std::string root = tree(rng);
  scipis_options o = tiny_options();
  o.path_index_size = 16 << 20;
  o.indexer_threads = 1;
  o.split_factor = 1;
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::string data;
  uint64_t largest = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && p.find("tfidf_index_0/seg_") != std::string::npos && p.size() > 5 &&
        p.compare(p.size() - 5, 5, ".data") == 0 && fs::file_size(e.path()) > largest) {
      largest = fs::file_size(e.path());
      data = p;
    }
  }
  ASSERT_FALSE(data.empty());
  const uint64_t generation = scipis::Collection(dir).manifest().generation;
  {
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(largest / 2));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(largest / 2));
    c = static_cast<char>(c ^ 0x10);
    f.write(&c, 1);
  }
  scipis_options merge = o;
  merge.tfidf_index_size = 1 << 20;  // in step (a 64 KiB table's bound is too small)
  ASSERT_NE(compact(dir, merge, true, &st, &err), 0);
  EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
  EXPECT_NE(std::string(err.message).find(fs::path(data).filename().string()), std::string::npos) << err.message;
  EXPECT_EQ(scipis::Collection(dir).manifest().generation, generation);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// Beside refreshes (SCIPIS_COMPACT_BESIDE), a build's run keeps every
// document too: merged in step into one segment per indexer, where the
// table of the same size cuts it into several.
TEST(TfMerge, BesideRefreshesTooWhenTheRunKeepsEveryDocument) {
  std::mt19937 rng(51);
  const std::string root = tree(rng);
  scipis_options o = tiny_options();
  o.path_index_size = 16 << 20;
  const std::string built = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(built, root, o, &st, &err), 0) << err.message;
  ASSERT_GT(st.segments, 6u);
  o.tfidf_index_size = 1 << 20;
  auto beside = [&](const std::string& dir) {
    scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
    if (!b) return -1;
    while (!scipis_build_wait(b, 100)) {
    }
    return scipis_build_finish(b, &st, &err);
  };
  const std::string in_step = testutil::scratch_dir(), by_table = testutil::scratch_dir();
  fs::copy(built, in_step, fs::copy_options::recursive);
  fs::copy(built, by_table, fs::copy_options::recursive);
  ASSERT_EQ(beside(in_step), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_EQ(segments_of(in_step), 2u);
  check(in_step, root, "beside, in step", {"w1 w12", "w3"});
  scipis::set_merge_in_step(false);
  const int rc = beside(by_table);
  scipis::set_merge_in_step(true);
  ASSERT_EQ(rc, 0) << err.message;
  EXPECT_GT(segments_of(by_table), 2u);
  for (const std::string& d : {built, in_step, by_table}) testutil::rm_rf(d);
  testutil::rm_rf(root);
}

namespace {

// A tree (seed) of 40 logs built with 64 KiB tables (several flushes per
// indexer, documents cut) and one path index per run.
struct TreeBuilt {
  std::string root, dir;
  scipis_options o;
};
TreeBuilt build_tree(uint32_t seed, int indexers) {
  std::mt19937 rng(seed);
  TreeBuilt b{tree(rng, 40), testutil::scratch_dir(), tiny_options()};
  b.o.path_index_size = 16 << 20;
  b.o.indexer_threads = indexers;
  scipis_build_stats st;
  scipis_error err;
  EXPECT_EQ(testutil::build(b.dir, b.root, b.o, &st, &err), 0) << err.message;
  return b;
}

// A merge of a build's segments (SCIPIS_COMPACT_SETTLE) run to its end;
// between its start and its commit, meanwhile() (a refresh) may commit.
int settle_merge(const std::string& dir, const scipis_options& o, scipis_build_stats* st, scipis_error* err,
                 const std::function<void()>& meanwhile = {}) {
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE, err);
  if (!b) return -1;
  if (meanwhile) meanwhile();
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

}  // namespace

// After a build: its segments merge in step beside refreshes, into the
// bytes scipis_compact writes, one segment per indexer whatever their
// sizes (tail tiers beside refreshes stop at 64 MiB).
TEST(TfMerge, SettleMergesABuildsSegmentsAsCompactWould) {
  auto [root, built, o] = build_tree(52, 2);
  scipis_build_stats st;
  scipis_error err;
  ASSERT_GT(segments_of(built), 6u);
  EXPECT_EQ(scipis_compact_needed(built.c_str(), SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE), 1);
  // (Its bound counts every input's terms: 256 segments of a few
  // thousand each.)
  o.tfidf_index_size = 16 << 20;
  const std::string settled = testutil::scratch_dir(), compacted = testutil::scratch_dir();
  fs::copy(built, settled, fs::copy_options::recursive);
  fs::copy(built, compacted, fs::copy_options::recursive);
  ASSERT_EQ(settle_merge(settled, o, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 6u);
  EXPECT_EQ(segments_of(settled), 2u);
  EXPECT_EQ(scipis_compact_needed(settled.c_str(), SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE), 0);
  check(settled, root, "settled", {"w1 w12", "w3", std::string(255, 'a')});
  ASSERT_EQ(compact(compacted, o, true, &st, &err), 0) << err.message;
  const auto a = segment_files(settled), b = segment_files(compacted);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, bytes] : a) {
    // The merged segments' numbers may differ: compare by content.
    bool found = false;
    for (const auto& [other, theirs] : b) found = found || theirs == bytes;
    EXPECT_TRUE(found) << name << " is not among scipis_compact's files";
  }

  // Without SCIPIS_COMPACT_BESIDE it is refused.
  EXPECT_EQ(scipis_compact_start(built.c_str(), &o, SCIPIS_COMPACT_SETTLE, &err), nullptr);
  EXPECT_EQ(err.code, SCIPIS_E_INVALID);
  for (const std::string& d : {built, settled, compacted}) testutil::rm_rf(d);
  testutil::rm_rf(root);
}

// What a settling merge leaves be: an indexer whose run holds a tombstoned
// document (that merge would not keep every document as it is), and the
// oldest segments of a run of more terms than a merge in step may hold.
TEST(TfMerge, SettleLeavesBeWhatCannotMergeInStep) {
  auto [root, dir, o] = build_tree(53, 1);
  scipis_build_stats st;
  scipis_error err;
  const uint64_t built = segments_of(dir);
  ASSERT_GT(built, 4u);

  // The bound: 8 tables of 64 KiB at 48 bytes a term hold 10,922 terms,
  // fewer than the run's (a few thousand a segment): its newest segments
  // merge, the oldest stay.
  const std::string bounded = testutil::scratch_dir();
  fs::copy(dir, bounded, fs::copy_options::recursive);
  ASSERT_EQ(settle_merge(bounded, o, &st, &err), 0) << err.message;
  EXPECT_GE(st.segments_merged, 2u);
  EXPECT_LT(st.segments_merged, built);
  EXPECT_EQ(segments_of(bounded), built - st.segments_merged + 1);
  check(bounded, root, "bounded", {"w1 w12", "w3"});

  // A tombstone in the run: nothing merged, nothing changed.
  fs::remove(root + "/d1/f1.log");
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(st.files_deleted, 1u);
  const uint64_t before = segments_of(dir);
  o.tfidf_index_size = 16 << 20;
  ASSERT_EQ(settle_merge(dir, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.segments_merged, 0u);
  EXPECT_EQ(segments_of(dir), before);
  check(dir, root, "tombstoned", {"w1 w12", "w3"});
  for (const std::string& d : {dir, bounded}) testutil::rm_rf(d);
  testutil::rm_rf(root);
}

// A refresh that commits while a settling merge runs: the commit puts the
// merged segment before the refresh's, and every answer is the tree's.
TEST(TfMerge, SettleCommitsBesideARefresh) {
  std::mt19937 rng(54);
  const std::string root = tree(rng, 40);
  settle();  // else the refresh reads the whole tree again (racy files)
  scipis_options o = tiny_options();
  o.path_index_size = 16 << 20;
  o.indexer_threads = 1;
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_GT(segments_of(dir), 4u);
  scipis_options merge = o;
  merge.tfidf_index_size = 16 << 20;
  int refreshed = -1;
  ASSERT_EQ(settle_merge(dir, merge, &st, &err,
                         [&] {
                           // Another merge beside refreshes would wait for it.
                           EXPECT_EQ(scipis_compact_busy(dir.c_str()), 1);
                           testutil::write(root + "/d0/new.log", "w1 fresh w12 arrival");
                           scipis_build_stats rs;
                           refreshed = refresh(dir, root, o, {}, &rs, &err);
                         }),
            0)
      << err.message;
  ASSERT_EQ(refreshed, 0);
  EXPECT_EQ(scipis_compact_busy(dir.c_str()), 0);
  EXPECT_GT(st.segments_merged, 4u);
  EXPECT_EQ(segments_of(dir), 2u) << "the merged segment and the refresh's";
  check(dir, root, "beside a refresh", {"w1 w12", "fresh", "arrival w3"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
