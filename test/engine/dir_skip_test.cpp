// Refreshes that skip directories unchanged since the last walk
// (SCIPIS_REFRESH_SKIP_DIRS): entries added, removed or renamed anywhere
// are found, answers equal the oracle's; only the files of changed
// directories are stat'ed; a file rewritten in place in an unchanged
// directory waits for a refresh that lists everything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "pipeline/dir_records.h"
#include "refresh_util.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

int refresh_skipping(const std::string& dir, const std::string& root, const scipis_options& o,
                     scipis_build_stats* st, scipis_error* err) {
  scipis_build* b = scipis_refresh_start(dir.c_str(), root.c_str(), &o, nullptr, 0, SCIPIS_REFRESH_SKIP_DIRS, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

std::string latest_gen(const std::string& dir) {
  uint64_t best = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 1 && n[0] == 'g') best = std::max<uint64_t>(best, std::stoull(n.substr(1)));
  }
  return dir + "/g" + std::to_string(best);
}

// A change to the tree's entries (never a file's bytes in place).
std::string shuffle(std::mt19937& rng, const std::string& root, int& next) {
  std::vector<std::string> files, dirs{root};
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_directory()) dirs.push_back(e.path().string());
    else files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::sort(dirs.begin(), dirs.end());
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  const int op = static_cast<int>(rng() % 6);
  const std::string name = "/e" + std::to_string(next++);
  if (files.empty() || op == 0) {
    const std::string p = pick(dirs) + name;
    testutil::write(p, lines(rng, 200 + rng() % 2000));
    return "create " + p;
  }
  if (op == 1) {
    const std::string f = pick(files);
    fs::remove(f);
    return "delete " + f;
  }
  if (op == 2) {
    const std::string f = pick(files), to = pick(dirs) + name;
    fs::rename(f, to);
    return "rename " + f + " " + to;
  }
  if (op == 3) {
    const std::string d = pick(dirs) + name;
    fs::create_directory(d);
    testutil::write(d + "/x", lines(rng, 300));
    return "mkdir " + d;
  }
  const std::string d = pick(dirs);
  if (d == root) return "nothing";
  if (op == 4) {
    fs::remove_all(d);
    return "rmdir " + d;
  }
  // A subtree moved elsewhere: its own mtime stays, its paths change.
  const std::string to = root + name;
  if (to.rfind(d, 0) == 0) return "nothing";
  fs::rename(d, to);
  return "move " + d + " " + to;
}

}  // namespace

TEST(SkipDirs, EntryChangesMatchTheOracle) {
  std::mt19937 rng(21);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  int next = 0;
  for (int i = 0; i < 40; i++) shuffle(rng, root, next);
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::string log;
  uint64_t skipped = 0;
  for (int step = 0; step < 25; step++) {
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < changes; c++) log += shuffle(rng, root, next) + "\n";
    // Half the time right after the changes (their directories racy).
    if (step % 2) settle();
    ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
    skipped += st.dirs_skipped;
    check(dir, root, "step " + std::to_string(step) + "\n" + log);
    if (HasFailure()) return;
  }
  EXPECT_GT(skipped, 0u);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(SkipDirs, OnlyChangedDirectoriesAreListed) {
  refresh_util::NoJournal whole_generations;
  std::mt19937 rng(22);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int d = 0; d < 10; d++) {
    fs::create_directory(root + "/d" + std::to_string(d));
    for (int f = 0; f < 20; f++)
      testutil::write(root + "/d" + std::to_string(d) + "/f" + std::to_string(f), lines(rng, 400));
  }
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  settle();
  // Nothing changed: no file stat'ed, the records kept.
  ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.dirs_skipped, 11u);
  EXPECT_EQ(st.files_checked, 0u);

  testutil::write(root + "/d3/new", "w1 brand new");
  settle();
  ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added, 1u);
  EXPECT_EQ(st.dirs_skipped, 10u);
  EXPECT_EQ(st.files_checked, 20u);  // d3's others
  check(dir, root, "a file added");

  // Rewritten in place: no directory changed, so this refresh does not
  // see it; one that lists everything does.
  const std::string f = root + "/d5/f7";
  testutil::write(f, "w11 w11 rewritten in place");
  settle();
  ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_changed, 0u);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_changed, 1u);
  EXPECT_EQ(st.dirs_skipped, 0u);
  EXPECT_EQ(st.files_checked, 201u);
  check(dir, root, "rewritten in place");

  // A file read just after it was written may change unseen within the
  // clock's tick: its directory is listed until it is read again. (The
  // tick widened, so that however slowly this runs the file is racy: a
  // refresh judges each file by when it read it, within 20 ms, and under
  // a sanitizer one read it 20-90 ms after the write.)
  {
    RacyTick surely(int64_t{60} * 1000 * 1000 * 1000);
    testutil::write(root + "/d8/racy", "w2");
    ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_added, 1u);
  }
  settle();
  ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_changed, 1u);  // read again
  EXPECT_EQ(st.dirs_skipped, 10u);
  settle();
  ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.dirs_skipped, 11u);
  EXPECT_EQ(st.files_checked, 0u);

  // Damaged records, or records of other crawl rules: everything listed.
  const std::string records = latest_gen(dir) + "/" + scipis::kDirsFile;
  std::string bytes = testutil::read(records);
  ASSERT_GT(bytes.size(), 40u);
  bytes[bytes.size() - 3] ^= 0x20;
  testutil::write(records, bytes);
  ASSERT_EQ(refresh_skipping(dir, root, o, &st, &err), 0) << err.message;
  EXPECT_EQ(st.dirs_skipped, 0u);
  EXPECT_EQ(st.files_checked, 202u);
  scipis_options other = o;
  const char* exclude[] = {"*.tmp"};
  other.exclude = exclude;
  other.n_exclude = 1;
  ASSERT_EQ(refresh_skipping(dir, root, other, &st, &err), 0) << err.message;
  EXPECT_EQ(st.dirs_skipped, 0u);
  ASSERT_EQ(refresh_skipping(dir, root, other, &st, &err), 0) << err.message;
  EXPECT_EQ(st.dirs_skipped, 11u);
  check(dir, root, "after the records were rebuilt");
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// The records file on its own: round trip, children (a root of "/" too),
// racy and unlisted directories never unchanged, damage and other rules.
TEST(SkipDirs, RecordsRoundTrip) {
  const std::string dir = testutil::scratch_dir();
  struct stat st {};
  st.st_ino = 42;
  st.st_mtim = {1000, 5};
  st.st_ctim = {1000, 7};
  const int64_t now = 2000LL * 1000 * 1000 * 1000;
  scipis::DirRecorder rec;
  for (const char* p : {"/", "//a", "//a/b", "//a/c", "//z"}) rec.listed(p, st, now);
  struct stat fresh = st;
  fresh.st_mtim = {1999, 950000000};  // within 0.1 s of now: listed again
  rec.listed("//a/racy", fresh, now);
  rec.unlisted("//locked");
  const uint64_t id = scipis::crawl_rules_id("/", {}, {"*.tmp"}, false);
  testutil::write(dir + "/DIRS", rec.encode(id));
  scipis::DirRecords r;
  ASSERT_TRUE(r.load(dir + "/DIRS", id));
  EXPECT_EQ(r.children("/"), (std::vector<std::string>{"a", "locked", "z"}));
  EXPECT_EQ(r.children("//a"), (std::vector<std::string>{"b", "c", "racy"}));
  EXPECT_TRUE(r.children("//z").empty());
  EXPECT_NE(r.unchanged("//a/b", st), nullptr);
  struct stat moved = st;
  moved.st_ino = 43;
  EXPECT_EQ(r.unchanged("//a/b", moved), nullptr);
  struct stat touched = st;
  touched.st_ctim = {1000, 8};
  EXPECT_EQ(r.unchanged("//a/b", touched), nullptr);
  EXPECT_EQ(r.unchanged("//a/racy", fresh), nullptr);
  EXPECT_EQ(r.unchanged("//locked", st), nullptr);
  EXPECT_EQ(r.unchanged("//nowhere", st), nullptr);
  EXPECT_FALSE(r.load(dir + "/DIRS", scipis::crawl_rules_id("/", {}, {}, false)));
  EXPECT_EQ(r.unchanged("//a/b", st), nullptr);  // nothing kept from a refused load
  std::string bytes = testutil::read(dir + "/DIRS");
  for (size_t at : {size_t{0}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[at] ^= 0x01;
    testutil::write(dir + "/DIRS", bad);
    EXPECT_FALSE(r.load(dir + "/DIRS", id)) << at;
  }
  testutil::write(dir + "/DIRS", bytes.substr(0, bytes.size() - 5));
  EXPECT_FALSE(r.load(dir + "/DIRS", id));
  EXPECT_FALSE(r.load(dir + "/missing", id));
  testutil::rm_rf(dir);
}
