// Compaction: merged segments, dropped tombstones and folded chains leave
// every answer equal to the oracle over the tree, and the index smaller.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <tuple>

#include "pipeline/append.h"
#include "pipeline/build.h"
#include "pipeline/compact.h"
#include "query/collection.h"
#include "util/fileio.h"
#include "refresh_util.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

const std::vector<std::string> kCompactMore = {"w12", "w1 w12", std::string(255, 'q'), "w10 w11"};

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
    check(dir, root, "tiered, step " + std::to_string(step) + "\n" + log, kCompactMore);
    if (HasFailure()) return;
  }
  EXPECT_GT(segments, 2u);  // small ones taken into the next (AbsorbDocs) do not pile up
  // Everything: one run per indexer, no tombstone, no chain left.
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_EQ(st.deleted_docs, 0u);
  EXPECT_EQ(st.chain_links, 0u);
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_LT(st.segments, segments);
  check(dir, root, "all\n" + log, kCompactMore);
  // A refresh after it reads nothing that did not change.
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added + st.files_changed + st.files_appended + st.files_deleted, 0u) << log;
  // And keeps appending to folded files from their new records.
  std::ofstream(files[0], std::ios::app) << " w5 w5";
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended + st.files_added, 1u);
  check(dir, root, "after\n" + log, kCompactMore);
  // Merged until nothing is left to merge (then no new generation).
  int merges = 0;
  do {
    ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
  } while (st.segments_merged > 0 && ++merges < 4);
  EXPECT_EQ(st.segments_merged, 0u);
  EXPECT_FALSE(scipis_compact_needed(dir.c_str(), 0));
  check(dir, root, "merged\n" + log, kCompactMore);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

namespace {

scipis::Manifest manifest_of(const std::vector<std::pair<uint64_t, uint64_t>>& data_meta) {
  scipis::Manifest m;
  m.indexers = 1;
  uint64_t seq = 0;
  uint32_t seg = 0;
  for (const auto& [data, meta] : data_meta) {
    scipis::SegmentRef s;
    s.seg = seg++;
    s.first_seq = seq;
    s.docs = 10;
    seq += 10;
    s.tf_data_bytes = data / 2;
    s.file_data_bytes = data - data / 2;
    s.meta_bytes = meta;
    m.segments.push_back(s);
  }
  return m;
}

}  // namespace

// A merge beside refreshes takes the large segment earlier merges made in
// only once what follows it is half its size, not an eighth: else under
// sustained churn every merge rewrote it.
TEST(Compact, BesideTiersLeaveALargeSegmentForLarger) {
  const uint64_t KiB = 1024, MiB = 1024 * KiB;
  std::vector<std::pair<uint64_t, uint64_t>> segs{{64 * MiB, 64 * MiB}, {12 * MiB, 1 * MiB}};
  for (int j = 0; j < 10; j++) segs.push_back({200 * KiB, 40 * KiB});
  const auto m = manifest_of(segs);
  EXPECT_EQ(scipis::plan_merges(m, false, scipis::kBesideMergeBytes, false)[0], 1u);
  EXPECT_EQ(scipis::plan_merges(m, false, scipis::kBesideMergeBytes, false, scipis::kBesideTierRatio)[0], 2u);
  for (int j = 0; j < 50; j++) segs.push_back({200 * KiB, 40 * KiB});
  EXPECT_EQ(scipis::plan_merges(manifest_of(segs), false, scipis::kBesideMergeBytes, false,
                                scipis::kBesideTierRatio)[0],
            1u);
}

// A segment's dictionaries count toward the merge bounds: a refresh's
// segment of few postings but many new terms (inlined in its dictionary)
// is not rewritten with every small merge after it.
TEST(Compact, MergePlanCountsDictionaries) {
  const uint64_t KiB = 1024, MiB = 1024 * KiB;
  // (Small segments of 40 KiB each: above absorb_max_bytes, so none is
  // left for a refresh to take in.)
  EXPECT_EQ(scipis::plan_merges(manifest_of({{64 * MiB, 64 * MiB}, {40 * KiB, 20 * MiB},
                                             {40 * KiB, 40 * KiB}, {40 * KiB, 40 * KiB}}),
                                false)[0],
            2u);
  // Data alone would have reached back to segment 1.
  EXPECT_EQ(scipis::plan_merges(manifest_of({{64 * MiB, 64 * MiB}, {40 * KiB, 120 * KiB},
                                             {40 * KiB, 40 * KiB}, {40 * KiB, 40 * KiB}}),
                                false)[0],
            1u);
  // The automatic bound: never more than kMaxAutoMergeBytes in all.
  EXPECT_EQ(scipis::plan_merges(manifest_of({{64 * MiB, 64 * MiB}, {1 * MiB, 4 * MiB},
                                             {512 * KiB, 1536 * KiB}, {512 * KiB, 1536 * KiB},
                                             {512 * KiB, 1536 * KiB}}),
                                false)[0],
            2u);
  // A watcher with changes waiting merges at most kSmallMergeBytes, unless
  // an indexer holds more than kSmallMergeSegments segments.
  const auto tail = manifest_of({{64 * MiB, 64 * MiB}, {1 * MiB, 1 * MiB}, {256 * KiB, 256 * KiB},
                                 {256 * KiB, 256 * KiB}});
  EXPECT_EQ(scipis::plan_merges(tail, false)[0], 1u);
  EXPECT_EQ(scipis::plan_merges(tail, false, scipis::kSmallMergeBytes)[0], 2u);
  std::vector<std::pair<uint64_t, uint64_t>> many{{64 * MiB, 64 * MiB}};
  for (size_t j = 1; j < scipis::kSmallMergeSegments; j++) many.push_back({1 * MiB, 1 * MiB});
  EXPECT_EQ(scipis::plan_merges(manifest_of(many), false, scipis::kSmallMergeBytes)[0], SIZE_MAX);
  many.push_back({1 * MiB, 1 * MiB});
  EXPECT_EQ(scipis::plan_merges(manifest_of(many), false, scipis::kSmallMergeBytes)[0],
            many.size() - 4);
  // A merge beside refreshes tiers full flushes too.
  const auto full = manifest_of({{2 * MiB, 2 * MiB}, {256 * KiB, 256 * KiB}, {256 * KiB, 256 * KiB}});
  EXPECT_EQ(scipis::plan_merges(full, false)[0], 1u);
  EXPECT_EQ(scipis::plan_merges(full, false, scipis::kMaxAutoMergeBytes, false)[0], 0u);
  // Unknown sizes (a manifest before version 3) count as data alone.
  scipis::Manifest m = manifest_of({{64 * MiB, 64 * MiB}, {40 * KiB, 20 * MiB},
                                    {40 * KiB, 40 * KiB}, {40 * KiB, 40 * KiB}});
  m.segments[1].meta_bytes = scipis::kUnknownBytes;
  EXPECT_EQ(scipis::plan_merges(m, false)[0], 1u);
}

// The small last segments a refresh will take in (at most kTakeInRun,
// together at most absorb_max_bytes) are no tail tier of their own; more of
// them are, and a tier before them merges them too.
TEST(Compact, SegmentsARefreshTakesInWait) {
  const uint64_t KiB = 1024, MiB = 1024 * KiB;
  ASSERT_EQ(scipis::kTakeInRun, 3u);
  ASSERT_LT(4 * 8 * KiB, scipis::absorb_max_bytes(1));
  ASSERT_GT(60 * KiB, scipis::absorb_max_bytes(1));
  auto tiny = [&](size_t n) {
    std::vector<std::pair<uint64_t, uint64_t>> v{{64 * MiB, 64 * MiB}};
    for (size_t j = 0; j < n; j++) v.push_back({4 * KiB, 4 * KiB});
    return v;
  };
  for (size_t n = 1; n <= 3; n++) {
    EXPECT_EQ(scipis::take_in_from(manifest_of(tiny(n)), 0), 1u) << n;
    EXPECT_EQ(scipis::plan_merges(manifest_of(tiny(n)), false)[0], SIZE_MAX) << n;
    EXPECT_EQ(scipis::plan_merges(manifest_of(tiny(n)), true)[0], 0u) << n;
  }
  EXPECT_EQ(scipis::plan_merges(manifest_of(tiny(4)), false)[0], 1u);
  // The build's lone segment is never taken in; nor one of no documents.
  EXPECT_EQ(scipis::take_in_from(manifest_of({{4 * KiB, 4 * KiB}}), 0), 1u);
  scipis::Manifest empty = manifest_of(tiny(2));
  empty.segments[1].docs = 0;
  EXPECT_EQ(scipis::take_in_from(empty, 0), 2u);
  // Together at most the bound: a sealed one of 60 KiB stays, alone no
  // tier; two sealed ones are, and their merge takes the small one too.
  const auto sealed = manifest_of({{64 * MiB, 64 * MiB}, {30 * KiB, 30 * KiB}, {4 * KiB, 4 * KiB}});
  EXPECT_EQ(scipis::take_in_from(sealed, 0), 2u);
  EXPECT_EQ(scipis::plan_merges(sealed, false)[0], SIZE_MAX);
  const auto two = manifest_of({{64 * MiB, 64 * MiB}, {30 * KiB, 30 * KiB}, {30 * KiB, 30 * KiB},
                                {4 * KiB, 4 * KiB}});
  EXPECT_EQ(scipis::plan_merges(two, false)[0], 1u);
  // One that begins inside a document a flush cut ends the run: it is
  // taken in with the one before it or not at all.
  scipis::Manifest cut = manifest_of(tiny(3));
  cut.segments[2].first_seq += 1;
  ASSERT_EQ(scipis::first_uncut(cut, 0, 2), 1u);
  EXPECT_EQ(scipis::take_in_from(cut, 0), 3u);
}



// scipis_compact_needed asks for a merge only where one would merge
// something: tombstones in a segment beyond the merge's bound (here
// kSmallMergeBytes) are not, whatever their share; a merge after every
// refresh then merged nothing, at the cost of a new generation's start.
TEST(Compact, NeededOnlyWhereAMergeWouldMerge) {
  std::mt19937 rng(17);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 1;
  for (int i = 0; i < 8; i++) {
    std::string text;
    while (text.size() < (300u << 10)) text += "t" + std::to_string(rng() % 1000000) + (rng() % 8 ? " " : "\n");
    testutil::write(root + "/f" + std::to_string(i), text);
  }
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_EQ(st.segments, 1u);
  ASSERT_GT(st.index_bytes, scipis::kSmallMergeBytes);
  for (int i = 0; i < 6; i++) fs::remove(root + "/f" + std::to_string(i));
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(st.deleted_docs, 6u);
  EXPECT_FALSE(scipis_compact_needed(dir.c_str(), SCIPIS_COMPACT_SMALL));
  EXPECT_TRUE(scipis_compact_needed(dir.c_str(), 0));
  ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
  EXPECT_EQ(st.segments_merged, 1u);
  EXPECT_EQ(st.deleted_docs, 0u);
  EXPECT_FALSE(scipis_compact_needed(dir.c_str(), 0));
  testutil::rm_rf(root);
  testutil::rm_rf(dir);
}

// A tier that begins inside a document a flush cut (a merge's output cut
// where its table filled) reaches back to the segment holding that
// document's start only while that costs little against the tier: past
// that, the segments after the cut merge alone, and a small tail does not
// pull a large segment into every merge after it.
TEST(Compact, TailAfterACutDocumentMergesAlone) {
  const uint64_t KiB = 1024, MiB = 1024 * KiB;
  auto cut_at = [&](std::vector<std::pair<uint64_t, uint64_t>> sizes, size_t continuing) {
    scipis::Manifest m = manifest_of(sizes);
    m.segments[continuing].first_seq += 1;  // begins inside the document before
    return m;
  };
  // 13 MiB, then a 280 KiB piece continuing its last document, then two small ones.
  const auto far = cut_at({{64 * MiB, 64 * MiB}, {3 * MiB, 10 * MiB}, {8 * KiB, 272 * KiB},
                           {20 * KiB, 20 * KiB}, {20 * KiB, 20 * KiB}, {20 * KiB, 20 * KiB}},
                          2);
  EXPECT_EQ(scipis::plan_merges(far, false)[0], 3u);
  // Only the piece and one small segment after it: nothing to merge alone.
  const auto one = cut_at({{64 * MiB, 64 * MiB}, {3 * MiB, 10 * MiB}, {8 * KiB, 272 * KiB},
                           {20 * KiB, 20 * KiB}},
                          2);
  EXPECT_EQ(scipis::plan_merges(one, false)[0], SIZE_MAX);
  // A start that costs little to reach: reached, as before.
  const auto near = cut_at({{64 * MiB, 64 * MiB}, {40 * KiB, 40 * KiB}, {20 * KiB, 20 * KiB},
                            {20 * KiB, 20 * KiB}},
                           2);
  EXPECT_EQ(scipis::plan_merges(near, false)[0], 1u);
  // Everything, whatever the cuts.
  EXPECT_EQ(scipis::plan_merges(far, true)[0], 0u);
}

// The manifest keeps each segment's dictionary bytes; where they are
// unknown they are the sizes of the segment's files.
TEST(Compact, ManifestRecordsDictionaryBytes) {
  std::mt19937 rng(5);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 6; i++) testutil::write(root + "/f" + std::to_string(i), lines(rng, 3000));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::string bytes;
  ASSERT_TRUE(scipis::read_file(scipis::manifest_path(dir), bytes));
  const scipis::Manifest m = scipis::Manifest::decode(scipis::manifest_path(dir), bytes);
  ASSERT_FALSE(m.segments.empty());
  scipis::Manifest unknown = m;
  uint64_t files = 0;
  for (auto& s : unknown.segments) {
    EXPECT_GT(s.meta_bytes, 0u);
    EXPECT_NE(s.meta_bytes, scipis::kUnknownBytes);
    s.meta_bytes = scipis::kUnknownBytes;
  }
  fill_meta_bytes(dir, unknown);
  for (size_t i = 0; i < m.segments.size(); i++) {
    EXPECT_EQ(unknown.segments[i].meta_bytes, m.segments[i].meta_bytes) << i;
    files += scipis::segment_bytes(m.segments[i]);
  }
  EXPECT_LT(files, m.index_bytes);
  EXPECT_EQ(scipis::Manifest::decode("m", m.encode()).segments.back().meta_bytes,
            m.segments.back().meta_bytes);
}

namespace {

// Text of words that rarely recur: a file of it is a segment above
// absorb_max_bytes, which no refresh takes in (a tail tier's stuff).
std::string wide_lines(std::mt19937& rng, size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += "u" + std::to_string(rng() % 20000) + (rng() % 8 ? " " : "\n");
  return s;
}

// A table that holds every merge whole: a merge then writes one segment
// per indexer whichever indexer read which file (tiny tables flush where
// thread timing puts the files). Split factor 1: a rewritten file's or an
// append's segment (wide_lines) is above absorb_max_bytes.
scipis_options beside_options() {
  scipis_options o = tiny_options();
  o.tfidf_index_size = 4 << 20;
  o.split_factor = 1;
  return o;
}

bool has_tier(const std::string& dir) {
  std::optional<scipis::CurrentState> st = scipis::try_read_current(dir);
  if (!st) return false;
  scipis::Manifest& m = st->m;
  fill_meta_bytes(dir, m);
  for (size_t f : scipis::plan_merges(m, false))
    if (f != SIZE_MAX) return true;
  return false;
}

}  // namespace

// A merge beside refreshes: refreshes (appends, rewrites, deletes, new
// files) commit between its start and its commit, and the commit puts the
// merged segments into the generation they made; every answer stays the
// oracle's. A second one at the same time is refused; one whose segments
// a full compaction replaced meanwhile is dropped.
TEST(Compact, MergeBesideRefreshes) {
  AppendMin every_size(0);
  std::mt19937 rng(11);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::vector<std::string> files;
  for (int i = 0; i < 10; i++) {
    files.push_back(root + "/f" + std::to_string(i) + ".log");
    testutil::write(files.back(), lines(rng, rng() % 5000));
  }
  const scipis_options o = beside_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::string log;
  auto change = [&](int step) {
    const std::string& f = files[rng() % files.size()];
    const int op = static_cast<int>(rng() % 4);
    if (!fs::exists(f) || op == 3) {
      testutil::write(f, wide_lines(rng, (160 << 10) + rng() % (64 << 10)));
      log += "write " + f + "\n";
    } else if (op == 2 && step % 3 == 2) {
      fs::remove(f);
      log += "delete " + f + "\n";
    } else {
      std::ofstream(f, std::ios::app) << " " + lines(rng, rng() % 900);
      log += "append " + f + "\n";
    }
    settle();
  };
  int merged = 0;
  for (int round = 0; round < 6; round++) {
    for (int k = 0; k < 5; k++) {
      change(round * 10 + k);
      ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    }
    if (!has_tier(dir)) continue;
    scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
    ASSERT_NE(b, nullptr) << err.message;
    scipis_error busy;
    EXPECT_EQ(scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &busy), nullptr);
    EXPECT_EQ(busy.code, SCIPIS_E_INVALID) << busy.message;
    // Refreshes commit while it runs (and leave its directory be).
    for (int k = 0; k < 2; k++) {
      change(round * 10 + 5 + k);
      ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    }
    const uint64_t before = st.segments;
    while (!scipis_build_wait(b, 100)) {
    }
    ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message << "\n" << log;
    log += "merged beside: " + std::to_string(st.segments_merged) + "\n";
    EXPECT_GT(st.segments_merged, 0u) << log;
    EXPECT_LT(st.segments, before) << log;
    EXPECT_EQ(st.docs_dropped, 0u);
    EXPECT_FALSE(fs::exists(dir + "/merging")) << log;
    merged++;
    check(dir, root, "beside, round " + std::to_string(round) + "\n" + log, kCompactMore);
    if (HasFailure()) return;
    // Nothing read again that did not change.
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_added + st.files_changed + st.files_appended + st.files_deleted, 0u) << log;
  }
  EXPECT_GT(merged, 1);
  // Overtaken: a full compaction replaces the segments it merged.
  change(99);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  change(98);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
  ASSERT_NE(b, nullptr) << err.message;
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_TRUE(fs::exists(dir + "/merging"));  // the full compaction left it be
  while (!scipis_build_wait(b, 100)) {
  }
  ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message;
  EXPECT_EQ(st.segments_merged, 0u);
  EXPECT_FALSE(fs::exists(dir + "/merging"));
  check(dir, root, "overtaken\n" + log, kCompactMore);
  // Overtaken by a rebuild of the same tree: segments of the same sizes,
  // but not the files it merged.
  for (int k = 0; k < 6 && !has_tier(dir); k++) {
    testutil::write(files[static_cast<size_t>(k)], wide_lines(rng, 160 << 10));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  }
  ASSERT_TRUE(has_tier(dir));
  b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
  ASSERT_NE(b, nullptr) << err.message;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  while (!scipis_build_wait(b, 100)) {
  }
  ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message;
  EXPECT_EQ(st.segments_merged, 0u);
  check(dir, root, "rebuilt\n" + log, kCompactMore);
  // A merge of everything cannot run beside.
  EXPECT_EQ(scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_ALL, &err),
            nullptr);
  EXPECT_EQ(err.code, SCIPIS_E_INVALID);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A handle opened before a merge that replaced every segment (their files
// removed before the handle read them) answers from the generation now
// current, as one opened afresh would; lookups and listings too.
TEST(Compact, AHandleOutlivesTheFilesItHadNotRead) {
  std::mt19937 rng(9);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 6; i++) testutil::write(root + "/f" + std::to_string(i) + ".log", lines(rng, 4000));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr) << err.message;
  fs::remove(root + "/f0.log");
  testutil::write(root + "/f1.log", lines(rng, 3000) + " w3");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_FALSE(scipis_index_is_current(ix));
  const auto docs = oracle_docs(root);
  for (const std::string q : {"w0", "w1 w3", "w11"}) {
    scipis_docs got;
    ASSERT_EQ(scipis_search(ix, q.data(), q.size(), -1, SCIPIS_BM25, SCIPIS_MATCH_ANY, &got, &err), 0)
        << err.message;
    std::vector<testutil::Result> results;
    for (size_t i = 0; i < got.n; i++)
      results.push_back({std::string(got.docs[i].path, got.docs[i].path_len), got.docs[i].score, got.docs[i].tokens});
    scipis_docs_free(&got);
    expect_same(results, brute::search(docs, q, true, false), "q=" + q);
  }
  EXPECT_TRUE(scipis_index_is_current(ix));
  scipis_docs files;
  ASSERT_EQ(scipis_list_files(ix, &files, &err), 0) << err.message;
  EXPECT_EQ(files.n, docs.size());
  scipis_docs_free(&files);
  scipis_index_close(ix);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A merge beside refreshes folds the chains whose members it merges (the
// folded members tombstoned, their numbers kept), whatever refreshes do
// to those files meanwhile: append again (the new link follows the folded
// one), delete, rewrite. A chain folded from its root is rooted at its
// folded member.
TEST(Compact, MergeBesideFoldsChains) {
  AppendMin every_size(0);
  std::mt19937 rng(8);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  auto path = [&](const std::string& n) { return root + "/" + n + ".log"; };
  testutil::write(path("a"), lines(rng, 3000));
  const scipis_options o = beside_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  for (const char* n : {"b", "c", "d"}) testutil::write(path(n), wide_lines(rng, 64 << 10));
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  for (int r = 0; r < 3; r++) {
    for (const auto& n : names) std::ofstream(path(n), std::ios::app) << "\n" + wide_lines(rng, 60 << 10);
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    ASSERT_EQ(st.files_appended, 4u);
  }
  const uint64_t links = st.chain_links;
  EXPECT_EQ(links, 12u);
  ASSERT_TRUE(has_tier(dir));
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
  ASSERT_NE(b, nullptr) << err.message;
  std::ofstream(path("b"), std::ios::app) << " w3 w4\n";
  fs::remove(path("c"));
  testutil::write(path("d"), lines(rng, 2000));
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  while (!scipis_build_wait(b, 100)) {
  }
  ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_EQ(st.docs_dropped, 0u);
  EXPECT_GE(st.chains_folded, 2u);  // a's (without its root, or with it) and b's at least
  EXPECT_LE(st.chain_links, 3u);    // a: at most the folded link; b: the new one after its fold
  {
    scipis::Collection c(dir);
    for (const auto& ch : c.chains()) EXPECT_LE(ch.members.size(), 3u);
  }
  check(dir, root, "after the merge", kCompactMore);
  // The folded chains go on growing by their new bytes alone.
  for (const char* n : {"a", "b"}) std::ofstream(path(n), std::ios::app) << " w5 w6\n";
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 2u);
  EXPECT_EQ(st.files_changed, 0u);
  check(dir, root, "appended after the merge", kCompactMore);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A merge beside refreshes keeps every document's number, but drops the
// postings of the tombstoned ones it merges: deleted files stop costing
// the index space and the searches time.
TEST(Compact, MergeBesideDropsTombstonedPostings) {
  AppendMin every_size(0);
  std::mt19937 rng(5);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 4; i++) testutil::write(root + "/f" + std::to_string(i) + ".log", lines(rng, 3000));
  const scipis_options o = beside_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  // Six new files, each its own segment (above the take-in bound), five
  // of them deleted again.
  for (int i = 0; i < 6; i++) {
    testutil::write(root + "/n" + std::to_string(i) + ".log", wide_lines(rng, 160 << 10) + " dropme\n");
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  }
  for (int i = 0; i < 5; i++) fs::remove(root + "/n" + std::to_string(i) + ".log");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  const uint64_t deleted = st.deleted_docs;
  EXPECT_GE(deleted, 5u);
  auto postings = [&] {
    scipis::Collection c(dir);
    uint64_t n = 0;
    for (scipis::SegmentState& s : c.segments())
      if (auto ref = c.tf_meta(s, 0).find("dropme")) n += ref->df;
    return n;
  };
  EXPECT_EQ(postings(), 6u);
  check(dir, root, "before the merge", {"dropme", "dropme w1"});
  ASSERT_TRUE(has_tier(dir));
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
  ASSERT_NE(b, nullptr) << err.message;
  // A deletion while it runs: that document's postings stay in the merge.
  fs::remove(root + "/n5.log");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  while (!scipis_build_wait(b, 100)) {
  }
  ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_EQ(st.docs_dropped, 0u);
  EXPECT_EQ(st.deleted_docs, deleted + 1);  // numbers kept: still tombstoned
  EXPECT_EQ(postings(), 1u);
  check(dir, root, "after the merge", {"dropme", "dropme w1"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A long chain of appends to a log folds its links among themselves in a
// merge of the small segments that hold them, without its root's segment
// (the log's first version: rewriting it after every few dozen appends
// cost more than the appends). The folded link keeps the retraction of
// the first it folded: tokens continued across appends ("w1" grown into
// "w12") still count once, and every answer is the oracle's.
TEST(Compact, LinksFoldWithoutTheirRoot) {
  AppendMin every_size(0);
  std::mt19937 rng(41);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  const std::string big = root + "/big.log";
  // Terms enough that the build's segment is far larger than the
  // appends' (else the two are one tier, merged as such).
  std::string text = lines(rng, 64 << 10);
  while (text.size() < (3u << 20)) text += " t" + std::to_string(rng() % 10000000);
  testutil::write(big, text + " w1");
  for (int i = 0; i < 5; i++) testutil::write(root + "/s" + std::to_string(i), lines(rng, 2000));
  const scipis_options o = one_segment_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_EQ(st.segments, 1u);
  ASSERT_GT(st.index_bytes, scipis::kTierFloor);
  auto first_segment = [&] {
    const scipis::Manifest m =
        scipis::Manifest::decode(scipis::manifest_path(dir), testutil::read(scipis::manifest_path(dir)));
    return std::make_tuple(m.home_of(m.segments[0]), scipis::file_seg_of(m.segments[0]), m.segments[0].docs,
                           m.segments[0].tf_data_bytes);
  };
  const auto built = first_segment();
  int compactions = 0;
  for (int i = 0; i < 40 && compactions < 2; i++) {
    // Continuing the last token ("w1" -> "w12"), a fresh one, or a long
    // run cut again by the next append.
    const int kind = i % 3;
    std::ofstream(big, std::ios::app) << (kind == 0 ? "2 " + lines(rng, 300) + " w1"
                                          : kind == 1 ? " " + lines(rng, 200) + " q"
                                                      : std::string(40, 'q'));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
    ASSERT_EQ(st.files_appended, 1u) << i;
    if (!scipis_compact_needed(dir.c_str(), 0)) continue;
    const uint64_t links = st.chain_links;
    ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
    compactions++;
    EXPECT_GE(st.chains_folded, 1u) << i;
    EXPECT_EQ(st.chain_links, 1u) << i;  // the root and one folded link
    EXPECT_EQ(st.docs_dropped, links - 1) << i;
    EXPECT_EQ(first_segment(), built) << i;  // the root's segment untouched
    check(dir, root, "compaction after append " + std::to_string(i), kCompactMore);
    if (HasFailure()) return;
  }
  EXPECT_GE(compactions, 2);
  check(dir, root, "after the appends", kCompactMore);
  // A full compaction still folds the whole chain into one document.
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_EQ(st.chain_links, 0u);
  check(dir, root, "all", kCompactMore);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A chain whose members lie in both indexers: a merge of indexer 0's
// newer segments, not of indexer 1's segment that holds a member between
// them, folds only the members after that one into the last; a member
// merged before it is copied as it is, its postings and its link's
// retraction its own. (A refresh of a few named paths deals them to the
// indexers in turn, in path order; the merge's plan is set.)
TEST(Compact, PartialFoldAcrossIndexers) {
  AppendMin every_size(0);
  std::mt19937 rng(47);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  const std::string log = root + "/m.log", a0 = root + "/a0";
  testutil::write(log, lines(rng, 20000) + " w1");
  testutil::write(a0, lines(rng, 3000));
  other_files(root, rng);
  scipis_options o = tiny_options();
  o.tfidf_index_size = 64 << 20;
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  // a0 to indexer 0, the log after it to indexer 1; alone, to indexer 0.
  const std::vector<std::vector<std::string>> rounds = {{log}, {a0, log}, {log}, {log}, {log}};
  for (size_t r = 0; r < rounds.size(); r++) {
    for (const auto& f : rounds[r])
      // Continuing the last token ("w1" -> "w12") or not; ending in a
      // token (the next link retracts the piece it reads again) or not
      // (the log's second link, 1's, retracts nothing; the others do).
      std::ofstream(f, std::ios::app) << (r % 2 ? "2 " : " ") + lines(rng, 400) + (r == 0 ? "\n" : " w1");
    settle();
    ASSERT_EQ(refresh(dir, root, o, rounds[r], &st, &err), 0) << err.message;
  }
  std::vector<scipis::DocId> members;
  size_t segments0 = 0;
  {
    scipis::Collection c(dir);
    for (const auto& ch : c.chains())
      if (ch.members.size() == 6) members = ch.members;
    segments0 = c.indexer(0).segs.size();
  }
  // The log's five links: indexer 0's, 1's, then 0's.
  ASSERT_EQ(members.size(), 6u);
  EXPECT_EQ(members[1].indexer, 0u);
  EXPECT_EQ(members[2].indexer, 1u);
  for (size_t m = 3; m < 6; m++) EXPECT_EQ(members[m].indexer, 0u);
  ASSERT_GE(segments0, 2u);
  check(dir, root, "before the merge", kCompactMore);
  // Indexer 0's segments after the build's, none of indexer 1's.
  scipis::set_compaction_plan({1, SIZE_MAX});
  const int rc = compact(dir, o, false, &st, &err);
  scipis::set_compaction_plan({});
  ASSERT_EQ(rc, 0) << err.message;
  EXPECT_EQ(st.chains_folded, 1u);
  {
    scipis::Collection c(dir);
    ASSERT_EQ(c.chains().size(), 2u);  // the log's and a0's
    const auto& kept = c.chains()[c.chain_of(members[2].indexer, members[2].seq)].members;
    EXPECT_EQ(kept.size(), 4u);  // the root, the link before 1's, 1's, the folded one
  }
  check(dir, root, "after the merge", kCompactMore);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// Refreshes beside a long merge take in the small segments they add (not
// those the merge holds): an indexer gains at most kTakeInRun segments
// however many refreshes commit before the merge does, and the merge's
// work still lands.
TEST(Compact, RefreshesBesideAMergeTakeInTheirOwnSegments) {
  AppendMin every_size(0);
  std::mt19937 rng(23);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::vector<std::string> files;
  for (int i = 0; i < 10; i++) {
    files.push_back(root + "/f" + std::to_string(i) + ".log");
    testutil::write(files.back(), lines(rng, 3000 + rng() % 3000));
  }
  const scipis_options o = beside_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  for (int k = 0; k < 12 && !has_tier(dir); k++) {
    testutil::write(files[static_cast<size_t>(k % 10)], wide_lines(rng, 160 << 10));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  }
  ASSERT_TRUE(has_tier(dir));
  auto segments_of = [&](uint32_t indexer) {
    size_t n = 0;
    for (const scipis::SegmentRef& s : scipis::read_current(dir).m.segments) n += s.indexer == indexer;
    return n;
  };
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
  ASSERT_NE(b, nullptr) << err.message;
  // Its work done, its commit not yet: it holds its segments all along.
  while (!scipis_build_wait(b, 100)) {
  }
  const size_t at_start = segments_of(0);
  const std::string& log = files[0];
  for (int r = 0; r < 7; r++) {
    std::ofstream(log, std::ios::app) << " " + lines(rng, 500);
    settle();
    ASSERT_EQ(refresh(dir, root, o, {log}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_appended, 1u) << r;
    EXPECT_GT(segments_of(0), at_start) << r;
    EXPECT_LE(segments_of(0), at_start + scipis::kTakeInRun) << r;
    check(dir, root, "beside the merge, refresh " + std::to_string(r), kCompactMore);
    if (HasFailure()) break;
  }
  const size_t before = segments_of(0) + segments_of(1);
  ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_LT(st.segments, before);
  check(dir, root, "after the merge", kCompactMore);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
