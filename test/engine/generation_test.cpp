// Generations refer to segments where they were written: a refresh's
// commit writes its own segments and lists, nothing for the segments it
// keeps; what a generation no longer refers to is removed, at once or (after
// a commit cut short) by the next compaction.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <set>

#include "index/manifest.h"
#include "pipeline/build.h"
#include "refresh_util.h"
#include "test_util.h"
#include "util/fileio.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

scipis::Manifest manifest(const std::string& dir) {
  std::string bytes;
  EXPECT_TRUE(scipis::read_file(scipis::manifest_path(dir), bytes));
  return scipis::Manifest::decode(scipis::manifest_path(dir), bytes);
}

// Every file under dir/g<N>, relative to dir/g<N>.
std::set<std::string> files_of(const std::string& dir, uint64_t gen) {
  std::set<std::string> out;
  const fs::path g = dir + "/g" + std::to_string(gen);
  if (!fs::exists(g)) return out;
  for (const auto& e : fs::recursive_directory_iterator(g))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), g).string());
  return out;
}

// The files m's segments have in generation gen.
std::set<std::string> segment_files_in(const scipis::Manifest& m, uint64_t gen) {
  std::set<std::string> out;
  for (const auto& s : m.segments)
    if (m.home_of(s) == gen)
      for (const auto& f : segment_files(s, m.split_factor)) out.insert(f);
  return out;
}

std::set<uint64_t> generations(const std::string& dir) {
  std::set<uint64_t> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 1 && n[0] == 'g') out.insert(std::stoull(n.substr(1)));
  }
  return out;
}

int compact(const std::string& dir, const scipis_options& o, int flags, scipis_build_stats* st,
            scipis_error* err) {
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, flags, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}


}  // namespace

TEST(Generations, RefreshesWriteOnlyWhatChanged) {
  refresh_util::NoJournal whole_generations;
  AppendMin every_size(0);
  std::mt19937 rng(3);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 12; i++) testutil::write(root + "/f" + std::to_string(i), lines(rng, 8000));
  usleep(150 * 1000);
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const scipis::Manifest built = manifest(dir);
  const uint64_t g1 = built.generation;
  const std::set<std::string> built_files = files_of(dir, g1);
  // A segment for each indexer given files: one or two, as the readers
  // hand them out (a reader keeps to the indexer it last fed while that
  // one keeps up, IndexerPicker). What follows holds for both; it failed
  // 2 full runs in 3 when it asked for two.
  ASSERT_GE(built.segments.size(), 1u);

  // An append, then a rewrite and a new file: each generation holds its
  // new segments and its lists, and refers to the rest where they are.
  { std::ofstream(root + "/f3", std::ios::app) << lines(rng, 200); }
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {root + "/f3"}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  testutil::write(root + "/f5", lines(rng, 1200));
  testutil::write(root + "/new", lines(rng, 1200));
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  const scipis::Manifest m = manifest(dir);
  EXPECT_EQ(m.generation, g1 + 2);
  // The append's small segment may have been taken into the next
  // refresh's (AbsorbDocs): then nothing of g1 + 1 is live, and it is gone.
  const bool taken_in = segment_files_in(m, g1 + 1).empty();
  const std::set<uint64_t> expect_gens =
      taken_in ? std::set<uint64_t>{g1, g1 + 2} : std::set<uint64_t>{g1, g1 + 1, g1 + 2};
  EXPECT_EQ(generations(dir), expect_gens);
  for (uint64_t g : {g1 + 1, g1 + 2}) {
    std::set<std::string> own = segment_files_in(m, g);
    if (g == g1 + 1 && taken_in) continue;
    EXPECT_FALSE(own.empty()) << g;
    for (const std::string& f : files_of(dir, g))
      if (f.find('/') != std::string::npos) {
        EXPECT_TRUE(own.count(f)) << "g" << g << "/" << f;
      }
  }
  // The built generation keeps its segments, not its lists.
  EXPECT_EQ(files_of(dir, g1), segment_files_in(m, g1));
  for (const auto& f : segment_files_in(m, g1)) EXPECT_TRUE(built_files.count(f)) << f;
  EXPECT_TRUE(files_of(dir, g1 + 1).count(scipis::kChainsFile) == 0);
  EXPECT_TRUE(files_of(dir, g1 + 2).count(scipis::kChainsFile) == 1);
  uint64_t bytes = scipis::tree_bytes(dir + "/g" + std::to_string(g1 + 2)) +
                   scipis::tree_bytes(scipis::manifest_path(dir));
  for (const auto& s : m.segments)
    if (m.home_of(s) != m.generation) bytes += scipis::segment_bytes(s);
  EXPECT_EQ(m.index_bytes, bytes);
  check(dir, root, "after refreshes");

  // A manifest written again keeps where each segment is.
  const scipis::Manifest again = scipis::Manifest::decode("m", m.encode());
  for (size_t i = 0; i < m.segments.size(); i++) {
    EXPECT_EQ(again.home_of(again.segments[i]), m.home_of(m.segments[i]));
    EXPECT_EQ(scipis::file_seg_of(again.segments[i]), scipis::file_seg_of(m.segments[i]));
  }

  // Merging everything leaves one generation, and the homes of segments
  // left where they are: an indexer's lone segment with nothing to drop is
  // not rewritten (plan_compaction), and which indexer's files fit one
  // segment depends on how the readers handed them out.
  ASSERT_EQ(compact(dir, o, SCIPIS_COMPACT_ALL, &st, &err), 0) << err.message;
  const scipis::Manifest merged = manifest(dir);
  std::set<uint64_t> live_homes{merged.generation};
  for (const auto& s : merged.segments) {
    live_homes.insert(merged.home_of(s));
    if (merged.home_of(s) != merged.generation) {
      size_t of_indexer = 0;
      for (const auto& t : merged.segments) of_indexer += t.indexer == s.indexer;
      EXPECT_EQ(of_indexer, 1u) << "a segment not merged beside others of its indexer";
    }
  }
  EXPECT_EQ(generations(dir), live_homes);
  check(dir, root, "after merging everything");

  // A commit cut short after its manifest left the older generation's
  // lists and a merged-away segment's file behind: the next compaction
  // removes them, and nothing live.
  testutil::write(root + "/later", lines(rng, 1200));
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  const std::string home = dir + "/g" + std::to_string(merged.generation);
  testutil::write(home + "/" + scipis::kDeletesFile, "left over");
  testutil::write(home + "/tfidf_index_0/seg_977.data", "left over");
  const std::set<std::string> live = segment_files_in(manifest(dir), merged.generation);
  ASSERT_EQ(compact(dir, o, 0, &st, &err), 0) << err.message;
  const scipis::Manifest now = manifest(dir);
  EXPECT_FALSE(fs::exists(home + "/" + scipis::kDeletesFile));
  EXPECT_FALSE(fs::exists(home + "/tfidf_index_0/seg_977.data"));
  for (const auto& f : segment_files_in(now, merged.generation)) EXPECT_TRUE(live.count(f)) << f;
  EXPECT_EQ(files_of(dir, merged.generation), segment_files_in(now, merged.generation));
  check(dir, root, "after the left-overs went");
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A full build replaces every generation a refreshed index had.
TEST(Generations, RebuildLeavesOnlyItsOwn) {
  refresh_util::NoJournal whole_generations;
  std::mt19937 rng(4);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 6; i++) testutil::write(root + "/f" + std::to_string(i), lines(rng, 4000));
  usleep(150 * 1000);
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  for (int r = 0; r < 3; r++) {
    testutil::write(root + "/n" + std::to_string(r), lines(rng, 800));
    usleep(150 * 1000);
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  }
  EXPECT_GT(generations(dir).size(), 1u);
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const scipis::Manifest m = manifest(dir);
  EXPECT_EQ(generations(dir), (std::set<uint64_t>{m.generation}));
  for (const auto& s : m.segments) EXPECT_EQ(m.home_of(s), m.generation);
  check(dir, root, "rebuilt");
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
