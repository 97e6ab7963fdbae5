// Appended files: a refresh reads only what a file appended (its counters
// say so), and every answer equals the oracle over the tree as it now is,
// whether the old end cut a token, a long token's piece, or nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "index/manifest.h"
#include "pipeline/append.h"
#include "pipeline/compact.h"
#include "refresh_util.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

uint64_t size_of(const std::string& path) { return fs::file_size(path); }

const std::vector<std::string> kMore = {"w12", "w1 w12", std::string(255, 'q'), "q qq",
                                        "w10 w11"};

// A tree of a big log whose last token is cut short ("w1", grown into
// "w12" by some tests) and a small file; returns the big log's path.
std::string two_logs(const std::string& root, std::mt19937& rng, size_t big_bytes) {
  const std::string big = root + "/big.log";
  testutil::write(big, lines(rng, big_bytes) + " w1");
  testutil::write(root + "/small.log", "w3 w4 w1");
  return big;
}

}  // namespace

TEST(Append, OnlyTheNewBytesAreRead) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(5);
  const std::string big = two_logs(root, rng, 2 << 20);  // 2 MiB
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;

  const std::string add = "2 " + lines(rng, 1024);
  append(big, add);
  append(root + "/small.log", "2 w5");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  EXPECT_EQ(st.files_changed, 1u);  // small: read whole
  EXPECT_EQ(st.files, 2u);
  EXPECT_EQ(st.chain_links, 1u);
  EXPECT_EQ(st.deleted_docs, 1u);  // small's old version
  // The appended bytes, the cut token and the checked window of the old
  // end, plus small read whole: not the 2 MiB.
  EXPECT_LE(st.bytes_read, add.size() + 2 + scipis::kTailWindow + size_of(root + "/small.log"));
  EXPECT_GE(st.bytes_read, add.size());
  check(dir, root, "one append", kMore);

  // Again: a chain of three, read from the new end.
  const std::string more = lines(rng, 3000) + std::string(300, 'q');
  append(big, more);
  settle();
  ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  EXPECT_EQ(st.chain_links, 2u);
  EXPECT_LE(st.bytes_read, more.size() + 255 + scipis::kTailWindow);
  check(dir, root, "two appends", kMore);
  // Inside a long token: its cut piece is read again.
  append(big, std::string(200, 'q') + " w1");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  EXPECT_EQ(st.chain_links, 3u);
  check(dir, root, "inside a long token", kMore);

  // The old end rewritten, then grown: the checksum sees it, read whole,
  // the chain tombstoned whole.
  {
    std::fstream f(big, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size_of(big) - 2));
    f << "w7";
  }
  append(big, " w9 w9");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 0u);
  EXPECT_EQ(st.files_changed, 1u);
  EXPECT_EQ(st.chain_links, 0u);
  EXPECT_EQ(st.deleted_docs, 1u + 4u);
  EXPECT_GE(st.bytes_read, size_of(big));
  check(dir, root, "rewritten end", kMore);

  // Appended, then deleted: the chain goes with it.
  append(big, "w2 w2");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  ASSERT_EQ(::unlink(big.c_str()), 0);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_deleted, 1u);
  EXPECT_EQ(st.chain_links, 0u);
  EXPECT_EQ(st.files, 1u);
  check(dir, root, "deleted", kMore);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A log appended to right before each refresh (as under a watcher) is
// racy every time: it is still read from its old end, never whole, and a
// racy file rewritten in place at its old size is still read again.
TEST(Append, ARacyFileThatGrewIsReadFromItsOldEnd) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(9);
  const std::string big = two_logs(root, rng, 1 << 20);
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  // No settling anywhere: written within the racy window of each run.
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  for (int round = 0; round < 3; round++) {
    const std::string add = std::to_string(round) + " " + lines(rng, 700 + 300 * round);
    append(big, add);
    ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_appended, 1u) << "round " << round;
    EXPECT_EQ(st.files_changed, 0u) << "round " << round;
    EXPECT_EQ(st.chain_links, static_cast<uint64_t>(round) + 1);
    EXPECT_LE(st.bytes_read, add.size() + 255 + scipis::kTailWindow) << "round " << round;
    check(dir, root, "racy append " + std::to_string(round), kMore);
  }
  // Same size, other bytes, right after its last read: read again whole.
  const uint64_t before = size_of(root + "/small.log");
  testutil::write(root + "/small.log", "w5 w6 w7");
  ASSERT_EQ(size_of(root + "/small.log"), before);
  ASSERT_EQ(refresh(dir, root, o, {root + "/small.log"}, &st, &err), 0) << err.message;
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  check(dir, root, "racy rewrite", {"w5", "w3 w6", "w1"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Append, RandomAppendsMatchTheOracle) {
  AppendMin every_size(0);
  std::mt19937 rng(11);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  fs::create_directories(root + "/sub");
  int next = 0;
  auto fresh = [&] {
    const int n = next++;
    return root + (n % 2 ? "/sub/f" : "/f") + std::to_string(n) + ".log";
  };
  for (int i = 0; i < 6; i++) testutil::write(fresh(), lines(rng, rng() % 6000));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::string log;
  for (int step = 0; step < 24; step++) {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file()) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    std::shuffle(files.begin(), files.end(), rng);
    std::set<std::string> appended;
    std::vector<std::string> touched;
    uint64_t bound = 0;  // bytes a refresh may read
    const size_t ops = 1 + rng() % 3;
    for (size_t k = 0; k < ops && k < files.size(); k++) {
      const std::string& f = files[k];
      touched.push_back(f);
      const uint64_t old = size_of(f);
      const int op = static_cast<int>(rng() % 10);
      if (op < 6) {
        // Appends: continuing the last token or not, long tokens across
        // piece ends, exactly to a piece's end, empty-looking lines.
        std::string add;
        switch (rng() % 5) {
          case 0: add = std::to_string(rng() % 3) + " " + lines(rng, rng() % 200); break;
          case 1: add = std::string(1 + rng() % 600, 'q'); break;
          case 2: add = std::string(255 - old % 255, 'q'); break;
          case 3: add = "\n\n"; break;
          default: add = lines(rng, rng() % 3000); break;
        }
        append(f, add);
        appended.insert(f);
        bound += add.size() + std::min<uint64_t>(old, scipis::kTailWindow) + 255;
        log += "append " + std::to_string(add.size()) + " to " + f + "\n";
      } else if (op == 6) {
        const std::string to = fresh();
        fs::rename(f, to);
        touched.push_back(to);
        bound += old;
        log += "rename " + f + " " + to + "\n";
      } else if (op == 7) {
        fs::remove(f);
        log += "delete " + f + "\n";
      } else if (op == 8) {
        // Shorter, then grown past the old size: same inode, new bytes.
        ASSERT_EQ(::truncate(f.c_str(), static_cast<off_t>(old / 2)), 0);
        const std::string add = lines(rng, old / 2 + 10);
        append(f, add);
        // Its old end is read back and found changed, then it is read whole.
        bound += std::min<uint64_t>(old, scipis::kTailWindow) + old / 2 + add.size();
        log += "truncate and grow " + f + "\n";
      } else {
        const std::string n = fresh();
        testutil::write(n, lines(rng, rng() % 5000));
        touched.push_back(n);
        bound += size_of(n);
        log += "create " + n + "\n";
      }
    }
    if (step % 2 == 0) touched.clear();
    log += touched.empty() ? "refresh\n" : "refresh of the touched paths\n";
    settle();
    ASSERT_EQ(refresh(dir, root, o, touched, &st, &err), 0) << err.message;
    const std::string label = "step " + std::to_string(step) + "\n" + log;
    EXPECT_EQ(st.files_appended, appended.size()) << label;
    EXPECT_LE(st.bytes_read, bound) << label;
    check(dir, root, label, kMore);
    if (HasFailure()) return;
  }
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// Appends refreshed one at a time: a refresh that finds kTakeInRun small
// last segments takes them into its own (AbsorbDocs), so segments do not
// pile up and no merge is asked for, and every answer stays the oracle's;
// a refresh that finds nothing new leaves the index as it is.
TEST(Append, SmallLastSegmentIsTakenIn) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(29);
  const std::string big = two_logs(root, rng, 256 << 10);
  other_files(root, rng);
  const scipis_options o = one_segment_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_EQ(st.segments, 1u);
  for (int i = 0; i < 12; i++) {
    append(big, " " + lines(rng, 300) + (i % 3 ? " w12" : " zz" + std::to_string(i)));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_appended, 1u) << i;
    // The build's and one to kTakeInRun small ones.
    EXPECT_EQ(st.segments, 2u + i % scipis::kTakeInRun) << i;
    EXPECT_FALSE(scipis_compact_needed(dir.c_str(), 0)) << i << " segments " << st.segments << " links " << st.chain_links << " files " << st.files << " deleted " << st.deleted_docs;
    check(dir, root, "append " + std::to_string(i), kMore);
    if (HasFailure()) return;
  }
  const std::string manifest = testutil::read(scipis::manifest_path(dir));
  settle();
  ASSERT_EQ(refresh(dir, root, o, {big}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended + st.files_changed + st.files_added, 0u);
  EXPECT_EQ(testutil::read(scipis::manifest_path(dir)), manifest);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Append, DamagedChainListIsRefused) {
  NoJournal whole_generations;
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 4; i++) testutil::write(root + "/f" + std::to_string(i), "w1 w2");
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  append(root + "/f1", "x w3");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(st.chain_links, 1u);
  std::string gen;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string()[0] == 'g') gen = e.path().string();
  const std::string path = gen + "/appended", orig = testutil::read(path);
  ASSERT_EQ(orig.size(), 32u + 33u + 2u);  // one link retracting "w2"
  // A flipped byte, a truncation, trailing bytes and the file gone: each
  // refused as damage naming the file, never a crash.
  std::vector<std::string> bad = {orig, orig.substr(0, 50), orig + "x", ""};
  bad[0][40] ^= 1;
  for (size_t i = 0; i < bad.size(); i++) {
    if (i == 3)
      ASSERT_EQ(::unlink(path.c_str()), 0);
    else
      testutil::write(path, bad[i]);
    scipis_index* ix = scipis_index_open(dir.c_str(), &err);
    EXPECT_EQ(ix, nullptr) << i;
    if (ix) scipis_index_close(ix);
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << i << ": " << err.message;
    EXPECT_NE(std::string(err.message).find("appended"), std::string::npos) << err.message;
  }
  testutil::write(path, orig);
  EXPECT_EQ(testutil::search(dir, "w2").size(), 3u);  // f1's "w2" is now "w2x"
  EXPECT_EQ(testutil::search(dir, "w2x w3").size(), 1u);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
