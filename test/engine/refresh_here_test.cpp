// A refresh of a few named files that reads little runs every stage on the
// thread that started it (Pipeline::walk_first, run_here): no coordinator,
// crawler, reader, indexer or writer task is started. Larger ones start
// them as before, the coordinator going on from the catalog the calling
// thread loaded. Either way every
// answer equals the oracle's, and an error on the way fails the refresh
// and leaves the index as it was.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include "index/manifest.h"
#include "pipeline/compact.h"
#include "pipeline/kept_docs.h"
#include "query/collection.h"
#include "index/segment_format.h"
#include "refresh_util.h"
#include "test_util.h"
#include "util/bytes.h"
#include "util/engine_thread.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

// Engine tasks a refresh of paths started (its coordinator included).
uint64_t tasks_of(const std::string& dir, const std::string& root, const scipis_options& o,
                  const std::vector<std::string>& paths, scipis_build_stats* st) {
  scipis_error err;
  const uint64_t before = scipis::engine_tasks_started();
  EXPECT_EQ(refresh(dir, root, o, paths, st, &err), 0) << err.message;
  return scipis::engine_tasks_started() - before;
}

// A 64 KiB log (root/big.log) beside other files, built with one segment
// per indexer: what these tests append to.
int build_big_log(const std::string& root, const std::string& dir, std::mt19937& rng, scipis_error* err) {
  testutil::write(root + "/big.log", lines(rng, 64 << 10));
  other_files(root, rng);
  scipis_build_stats st;
  settle();
  return testutil::build(dir, root, one_segment_options(), &st, err);
}

}  // namespace

TEST(RefreshHere, FewNamedFilesRunOnTheCallingThread) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(41);
  const std::string big = root + "/big.log";
  testutil::write(big, lines(rng, 200 << 10));
  for (int i = 0; i < 20; i++) testutil::write(root + "/f" + std::to_string(i), lines(rng, 3000));
  fs::create_directories(root + "/d");
  // Small tables and blocks: the files read on the refresh's thread flush
  // several segments and are read in many blocks.
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;

  // An append, a rewrite, a delete and a new file: no task at all.
  append(big, lines(rng, 2000) + " w1");
  testutil::write(root + "/f1", lines(rng, 5000));
  fs::remove(root + "/f2");
  testutil::write(root + "/n1", lines(rng, 100 << 10));
  settle();
  EXPECT_EQ(tasks_of(dir, root, o, {big, root + "/f1", root + "/f2", root + "/n1"}, &st), 0u);
  EXPECT_EQ(st.files_appended, 1u);
  EXPECT_EQ(st.files_changed, 1u);
  EXPECT_EQ(st.files_deleted, 1u);
  EXPECT_EQ(st.files_added, 1u);
  check(dir, root, "on the calling thread");
  // Nothing changed: no task again, nothing read.
  EXPECT_EQ(tasks_of(dir, root, o, {big, root + "/n1"}, &st), 0u);
  EXPECT_EQ(st.bytes_read, 0u);

  // More to read than run_here takes: the stages' threads.
  testutil::write(root + "/n2", lines(rng, 3u << 20));
  settle();
  EXPECT_GT(tasks_of(dir, root, o, {root + "/n2"}, &st), 3u);
  EXPECT_EQ(st.files_added, 1u);
  check(dir, root, "a large named file");
  // More named files than the walk's queue holds, and a directory: the
  // stages' threads.
  std::vector<std::string> many;
  for (int i = 3; i < 20; i++) {
    many.push_back(root + "/f" + std::to_string(i));
    testutil::write(many.back(), lines(rng, 2000));
  }
  settle();
  EXPECT_GT(tasks_of(dir, root, o, many, &st), 3u);
  EXPECT_EQ(st.files_changed, many.size());
  check(dir, root, "many named files");
  testutil::write(root + "/d/x", lines(rng, 2000));
  settle();
  EXPECT_GT(tasks_of(dir, root, o, {root + "/d"}, &st), 3u);
  EXPECT_EQ(st.files_added, 1u);
  check(dir, root, "a named directory");
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(RefreshHere, DamageMetOnTheCallingThreadFailsIt) {
  NoJournal whole_generations;
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(43);
  const std::string big = root + "/big.log";
  const scipis_options o = one_segment_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(build_big_log(root, dir, rng, &err), 0) << err.message;
  append(big, lines(rng, 300));
  settle();
  ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
  ASSERT_EQ(st.segments, 2u);
  // The small segment a later append's refresh takes in: its dictionaries
  // (whose postings a one-document segment holds inline) harmed, which
  // only the take-in reads.
  std::string pack;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".pack") pack = e.path().string();
  ASSERT_FALSE(pack.empty());
  const std::string orig = testutil::read(pack);
  std::string bad = orig;
  for (int part = 1; part <= o.split_factor; part++) {
    const auto* t = reinterpret_cast<const unsigned char*>(orig.data()) + scipis::kHeaderSize + 16 * part;
    const uint64_t off = scipis::get_u64(t), len = scipis::get_u64(t + 8);
    ASSERT_LE(off + len, orig.size());
    for (uint64_t at = off + scipis::kHeaderSize; at < off + len; at++) bad[at] ^= 0x21;
  }
  testutil::write(pack, bad);
  // Until kTakeInRun small segments wait, refreshes leave them be.
  for (size_t i = 1; i < scipis::kTakeInRun; i++) {
    append(big, lines(rng, 300));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
    ASSERT_EQ(st.segments, 2u + i);
  }
  const std::string manifest = testutil::read(scipis::manifest_path(dir));
  append(big, lines(rng, 300) + " w1");
  settle();
  const uint64_t before = scipis::engine_tasks_started();
  EXPECT_NE(refresh(dir, root, o, {big}, &st, &err), 0);
  EXPECT_EQ(scipis::engine_tasks_started() - before, 0u);
  EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
  EXPECT_NE(std::string(err.message).find(pack), std::string::npos) << err.message;
  EXPECT_EQ(testutil::read(scipis::manifest_path(dir)), manifest);
  // Mended, the next refresh reads the append.
  testutil::write(pack, orig);
  ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  check(dir, root, "mended");
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// The documents a refresh keeps for the next one to take in are the ones
// its segment holds: the same records, paths and term counts as decoding
// the segment gives.
TEST(RefreshHere, KeptDocumentsAreTheSegments) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(47);
  const std::string big = root + "/big.log";
  const scipis_options o = one_segment_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(build_big_log(root, dir, rng, &err), 0) << err.message;
  for (int step = 0; step < 6; step++) {
    append(big, lines(rng, 500) + " kept" + std::to_string(step) + (step % 2 ? "\n" : ""));
    if (step == 3) testutil::write(root + "/n" + std::to_string(step), lines(rng, 300));
    settle();
    std::vector<std::string> paths = {big};
    if (step == 3) paths.push_back(root + "/n3");
    ASSERT_EQ(refresh(dir, root, o, paths, &st, &err), 0) << err.message;
    ASSERT_EQ(st.segments, 2u + step % scipis::kTakeInRun) << step;
    scipis::Collection c(dir);
    for (size_t j = 1; j < c.indexer(0).segs.size(); j++) {
      scipis::SegmentState& s = *c.indexer(0).segs[j];
      const auto kept = scipis::kept_docs(dir, c.manifest(), s.ref);
      ASSERT_NE(kept, nullptr) << step;
      const auto decoded = scipis::segment_documents(c, s);
      ASSERT_EQ(kept->count(), decoded->count()) << step;
      using Terms = std::map<std::string, uint64_t>;
      std::vector<std::tuple<scipis::DocInfo, std::string, Terms>> a, b;
      auto gather = [](const scipis::AbsorbDocs& d, auto& out) {
        d.each([&](const std::vector<std::string>& names, const scipis::AbsorbDocs::Doc& doc) {
          Terms t;
          for (const auto& [term, n] : doc.terms) t[names[term]] += n;
          out.emplace_back(doc.info, doc.path, std::move(t));
        });
      };
      gather(*kept, a);
      gather(*decoded, b);
      for (size_t i = 0; i < a.size(); i++) {
        const auto& [ia, pa, ta] = a[i];
        const auto& [ib, pb, tb] = b[i];
        EXPECT_EQ(pa, pb) << step << " doc " << i;
        EXPECT_EQ(ia.seq, ib.seq) << step << " " << pa;
        EXPECT_EQ(ia.size, ib.size) << step << " " << pa;
        EXPECT_EQ(ia.tokens, ib.tokens) << step << " " << pa;
        EXPECT_EQ(ia.mtime_ns, ib.mtime_ns) << step << " " << pa;
        EXPECT_EQ(ia.ctime_ns, ib.ctime_ns) << step << " " << pa;
        EXPECT_EQ(ia.ino, ib.ino) << step << " " << pa;
        EXPECT_EQ(ia.tail, ib.tail) << step << " " << pa;
        EXPECT_TRUE(ta == tb) << step << " " << pa;
      }
    }
    check(dir, root, "kept step " + std::to_string(step), {"kept" + std::to_string(step), "kept0"});
    if (HasFailure()) break;
  }
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// The file data a refresh of named paths read (small parts, read into
// memory) is kept for the next one: the same bytes as the segment's, and
// never those of another collection made later in the same directory.
TEST(RefreshHere, KeptFileDataIsTheSegmentsOwn) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(53);
  const std::string big = root + "/big.log";
  const scipis_options o = one_segment_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(build_big_log(root, dir, rng, &err), 0) << err.message;
  for (int round = 0; round < 2; round++) {
    append(big, lines(rng, 500) + " fd" + std::to_string(round));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
    scipis::Collection c(dir);
    const scipis::SegmentState& first = *c.indexer(0).segs[0];
    const auto kept = scipis::kept_file_data(dir, c.manifest(), first.ref);
    ASSERT_NE(kept, nullptr) << round;
    scipis::SegmentState& s = *c.indexer(0).segs[0];
    const scipis::FileBlocks& fb = c.files(s);
    EXPECT_EQ(fb.records(), s.ref.docs);
    EXPECT_EQ(kept->bytes(), s.file_map->bytes()) << round;
    check(dir, root, "kept file data " + std::to_string(round), {"fd" + std::to_string(round)});
  }
  // Made again in the same directory: its segments are other ones.
  testutil::rm_rf(dir);
  testutil::write(root + "/f-new", lines(rng, 3000));
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  {
    scipis::Collection c(dir);
    for (const scipis::SegmentRef& ref : c.manifest().segments)
      EXPECT_EQ(scipis::kept_file_data(dir, c.manifest(), ref), nullptr);
  }
  append(big, lines(rng, 500) + " fd9");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {big, root + "/f-new"}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  check(dir, root, "made again", {"fd9", "fd0"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
