// Refreshes after random changes to a tree (creates, appends, overwrites,
// truncations, renames, deletes, mkdir, rmdir): every answer must equal the
// brute-force oracle run on the tree as it now is, read from disk by the
// test itself.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>

#include "brute_force.h"
#include "index/manifest.h"
#include "refresh_util.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace {

using namespace refresh_util;

std::string words(std::mt19937& rng, int n) {
  std::string s;
  for (int i = 0; i < n; i++) {
    const double u = (rng() % 1000 + 1) / 1001.0;
    s += "w" + std::to_string(static_cast<int>(std::pow(u, 2.0) * 12)) + " ";
  }
  return s;
}

// A random change to the tree; returns what it did, and adds the paths it
// touched to touched (as a watcher's events would name them).
std::string mutate(std::mt19937& rng, const std::string& root, int& next_name,
                   std::vector<std::string>* touched = nullptr) {
  std::vector<std::string> ignored;
  std::vector<std::string>& t = touched ? *touched : ignored;
  std::vector<std::string> files, dirs{root};
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_directory()) dirs.push_back(e.path().string());
    else if (e.is_regular_file()) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::sort(dirs.begin(), dirs.end());
  const int op = static_cast<int>(rng() % 9);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  auto fresh_name = [&](const std::string& d) {
    return d + "/n" + std::to_string(next_name++) + (rng() % 2 ? ".txt" : ".log");
  };
  if (files.empty() || op == 0) {
    const std::string p = fresh_name(pick(dirs));
    testutil::write(p, words(rng, static_cast<int>(rng() % 300)));
    t.push_back(p);
    return "create " + p;
  }
  const std::string f = pick(files);
  t.push_back(f);
  switch (op) {
    case 1: {  // append, the old end inside a token half the time
      std::string add = rng() % 2 ? "tail" + words(rng, 5) : words(rng, static_cast<int>(rng() % 50));
      std::ofstream(f, std::ios::app) << add;
      return "append " + f;
    }
    case 2: {  // overwrite, same size
      std::string old = testutil::read(f), now = words(rng, 400);
      now.resize(old.size(), ' ');
      testutil::write(f, now);
      return "overwrite-same-size " + f;
    }
    case 3:
      testutil::write(f, words(rng, static_cast<int>(rng() % 200)));
      return "overwrite " + f;
    case 4: {
      const std::string old = testutil::read(f);
      EXPECT_EQ(::truncate(f.c_str(), static_cast<off_t>(old.size() / 2)), 0);
      return "truncate " + f;
    }
    case 5: {
      const std::string to = fresh_name(pick(dirs));
      fs::rename(f, to);
      t.push_back(to);
      return "rename " + f + " " + to;
    }
    case 6:
      fs::remove(f);
      return "delete " + f;
    case 7: {
      const std::string d = pick(dirs) + "/d" + std::to_string(next_name++);
      fs::create_directory(d);
      testutil::write(d + "/x.txt", words(rng, 20));
      t.push_back(d);
      return "mkdir " + d;
    }
    default: {
      if (dirs.size() < 2) return "nothing";
      const std::string d = dirs[1 + rng() % (dirs.size() - 1)];
      fs::remove_all(d);
      t.push_back(d);
      return "rmdir " + d;
    }
  }
}

}  // namespace

TEST(Refresh, RandomChangesMatchTheOracleAfterEveryRefresh) {
  for (unsigned seed : {1u, 2u}) {
    std::mt19937 rng(seed);
    const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
    int next_name = 0;
    for (int i = 0; i < 30; i++) mutate(rng, root, next_name);
    const scipis_options o = tiny_options();
    scipis_build_stats st;
    scipis_error err;
    ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
    check(dir, root, "built");
    std::string log;
    for (int step = 0; step < 30; step++) {
      // Refreshed after each change, or after a batch of them; every
      // other time only the paths the changes touched, as a watcher does.
      const int changes = step % 4 == 3 ? 1 + static_cast<int>(rng() % 6) : 1;
      std::vector<std::string> touched;
      for (int c = 0; c < changes; c++) log += mutate(rng, root, next_name, &touched) + "\n";
      if (step % 2 == 0) touched.clear();
      log += touched.empty() ? "refresh\n" : "refresh of the touched paths\n";
      ASSERT_EQ(refresh(dir, root, o, touched, &st, &err), 0) << err.message;
      check(dir, root, "seed " + std::to_string(seed) + " step " + std::to_string(step) + "\n" + log);
      if (HasFailure()) return;
    }
    testutil::rm_rf(dir);
    testutil::rm_rf(root);
  }
}

TEST(Refresh, CountsWhatChangedAndLeavesAnUnchangedTreeAlone) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 20; i++) testutil::write(root + "/f" + std::to_string(i), "w1 w2 file " + std::to_string(i));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  // Files written just before a run are read again by the next one (their
  // ctime may not show a write within the same clock tick): not these.
  usleep(150 * 1000);
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added, 0u);
  EXPECT_EQ(st.files_changed, 0u);
  EXPECT_EQ(st.files_deleted, 0u);
  EXPECT_EQ(st.bytes_read, 0u);
  // Racy files are read again, once (read within a tick of their write:
  // the tick widened, so that however slowly this runs g is racy).
  {
    RacyTick surely(int64_t{60} * 1000 * 1000 * 1000);
    testutil::write(root + "/g", "w4");
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_added, 1u);
  }
  usleep(150 * 1000);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_changed, 1u);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_changed, 0u);
  ASSERT_EQ(::unlink((root + "/g").c_str()), 0);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_deleted, 1u);
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr);
  scipis_index_info before;
  ASSERT_EQ(scipis_index_info_get(ix, &before, &err), 0);

  testutil::write(root + "/new", "w3 brand new");
  testutil::write(root + "/f3", "w9 rewritten and longer than before");
  ASSERT_EQ(::unlink((root + "/f4").c_str()), 0);
  ASSERT_EQ(::unlink((root + "/f5").c_str()), 0);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added, 1u);
  EXPECT_EQ(st.files_changed, 1u);
  EXPECT_EQ(st.files_deleted, 2u);
  EXPECT_EQ(st.bytes_read, 12u + 35u);
  EXPECT_EQ(st.files, 19u);
  EXPECT_EQ(st.deleted_docs, 5u);  // with g's two versions
  // The handle opened before still shows its generation, and knows it is old.
  EXPECT_EQ(scipis_index_is_current(ix), 0);
  scipis_index_close(ix);
  ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr);
  scipis_index_info after;
  ASSERT_EQ(scipis_index_info_get(ix, &after, &err), 0);
  // A small change: a record in the generation's journal, not a new one.
  EXPECT_EQ(after.generation, before.generation);
  EXPECT_EQ(before.files, 20u);
  EXPECT_EQ(after.files, 19u);
  EXPECT_EQ(after.deleted_docs, 5u);
  scipis_index_close(ix);
  int64_t fresh = 0;
  EXPECT_EQ(scipis_fresh_as_of(dir.c_str(), &fresh), 1);
  EXPECT_GT(fresh, 0);
  check(dir, root, "counted");
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Refresh, GivenPathsAreTheOnlyOnesLookedAt) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  fs::create_directories(root + "/a/b");
  fs::create_directories(root + "/c");
  for (const char* f : {"/a/1", "/a/b/2", "/c/3", "/4"}) testutil::write(root + f, "w1 w2");
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  usleep(150 * 1000);
  testutil::write(root + "/a/b/2", "w5 changed");
  testutil::write(root + "/a/b/new", "w6 new");
  testutil::write(root + "/c/3", "w7 changed outside the paths");
  ASSERT_EQ(::unlink((root + "/4").c_str()), 0);
  ASSERT_EQ(refresh(dir, root, o, {root + "/a/b/", root + "//a/b/2", root + "/4"}, &st, &err), 0)
      << err.message;
  EXPECT_EQ(st.files_added, 1u);
  EXPECT_EQ(st.files_changed, 1u);
  EXPECT_EQ(st.files_deleted, 1u);
  EXPECT_EQ(testutil::search(dir, "w5").size(), 1u);
  EXPECT_EQ(testutil::search(dir, "w6").size(), 1u);
  EXPECT_EQ(testutil::search(dir, "w7").size(), 0u);  // not looked at
  // A single file, then the whole tree.
  ASSERT_EQ(refresh(dir, root, o, {root + "/c/3"}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_changed, 1u);
  EXPECT_EQ(testutil::search(dir, "w7").size(), 1u);
  check(dir, root, "paths");
  // Bad paths are refused.
  for (const std::string& bad : {std::string("relative"), root + "/../x", std::string("/elsewhere")}) {
    EXPECT_EQ(refresh(dir, root, o, {bad}, &st, &err), -1) << bad;
    EXPECT_EQ(err.code, SCIPIS_E_INVALID) << bad;
  }
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Refresh, NeverIndexedOrOtherTokenizerBuildsAfresh) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  testutil::write(root + "/f", "w1 w2-w3");
  scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added, 1u);
  EXPECT_EQ(testutil::search(dir, "w3").size(), 1u);
  ASSERT_EQ(scipis_tokenizer_named("whitespace", o.delimiter), 0);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(testutil::search(dir, "w2-w3").size(), 1u);
  EXPECT_EQ(testutil::search(dir, "w3").size(), 0u);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Refresh, DamagedTombstonesAreRefused) {
  NoJournal whole_generations;
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 6; i++) testutil::write(root + "/f" + std::to_string(i), "w1 w2");
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  usleep(150 * 1000);  // not racy: the refresh reads none of them again
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_EQ(::unlink((root + "/f2").c_str()), 0);
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(st.deleted_docs, 1u);
  std::string gen;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string()[0] == 'g') gen = e.path().string();
  const std::string del = gen + "/deleted", orig = testutil::read(del);
  ASSERT_EQ(orig.size(), 32u + 3u);  // indexer, count, seq: a byte each
  // A flipped byte, a truncation and the file gone: each refused as
  // damage, never a crash.
  std::vector<std::string> bad = {orig, orig.substr(0, orig.size() - 1), ""};
  bad[0][33] ^= 1;
  for (size_t i = 0; i < bad.size(); i++) {
    if (i == 2)
      ASSERT_EQ(::unlink(del.c_str()), 0);
    else
      testutil::write(del, bad[i]);
    scipis_index* ix = scipis_index_open(dir.c_str(), &err);
    EXPECT_EQ(ix, nullptr) << i;
    if (ix) scipis_index_close(ix);
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << i << ": " << err.message;
  }
  testutil::write(del, orig);
  EXPECT_EQ(testutil::search(dir, "w1").size(), 5u);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A damaged segment met while the catalog of a whole tree is read (by
// either of the two threads that read it) fails the refresh as damage,
// naming the file; nothing is published, and once mended it refreshes.
TEST(Refresh, DamagedFileRecordsFailTheRefresh) {
  NoJournal whole_generations;
  std::mt19937 rng(23);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 12; i++) testutil::write(root + "/f" + std::to_string(i), lines(rng, 3000));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  for (int r = 0; r < 2; r++) {  // segments written by refreshes too
    for (int i = 0; i < 3; i++) testutil::write(root + "/n" + std::to_string(r * 3 + i), lines(rng, 3000));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  }
  ASSERT_GE(st.segments, 3u);
  std::vector<std::string> data;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if ((p.find("/file_index_") != std::string::npos && p.size() > 5 && p.substr(p.size() - 5) == ".data") ||
        (p.size() > 5 && p.substr(p.size() - 5) == ".pack"))
      data.push_back(p);
  }
  std::sort(data.begin(), data.end());
  ASSERT_GE(data.size(), 3u);
  const std::string manifest = testutil::read(scipis::manifest_path(dir));
  for (const std::string& victim : {data[1], data.back()}) {
    const std::string orig = testutil::read(victim);
    std::string bad = orig;
    ASSERT_GT(bad.size(), 80u);
    // A pack: its part table. A file records file: its last block's
    // records, just before that block's crc (the last bytes of the file).
    // Not a fixed offset there: what lies at byte 72 depends on how many
    // files the segment holds (its length array, or the block statistics
    // that only a lookup reads), and that on which indexer read which file.
    const bool pack = victim.size() > 5 && victim.substr(victim.size() - 5) == ".pack";
    bad[pack ? 72 : bad.size() - 8] ^= 0x5a;
    testutil::write(victim, bad);
    EXPECT_NE(refresh(dir, root, o, {}, &st, &err), 0) << victim;
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
    EXPECT_NE(std::string(err.message).find(fs::path(victim).filename().string()), std::string::npos)
        << err.message;
    EXPECT_EQ(testutil::read(scipis::manifest_path(dir)), manifest);
    testutil::write(victim, orig);
  }
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added + st.files_changed + st.files_appended + st.files_deleted, 0u);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A batch of a few hundred named paths (a watcher's under heavy churn):
// an indexer writes one segment for it, not a small table's flush and the
// rest; every answer the oracle's. (One indexer: however a run deals the
// files, its table holds them all.)
TEST(Refresh, ABigBatchOfNamedPathsIsOneSegment) {
  std::mt19937 rng(31);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 20; i++) testutil::write(root + "/log" + std::to_string(i), lines(rng, 4000));
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 1;
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const uint64_t before = st.segments;
  std::vector<std::string> paths;
  for (int k = 0; k < 300; k++) {
    std::string text;
    while (text.size() < 2048) text += "job" + std::to_string(rng() % 20000) + " step" + std::to_string(rng() % 1000) + "\n";
    paths.push_back(root + "/new" + std::to_string(k));
    testutil::write(paths.back(), text);
  }
  settle();
  ASSERT_EQ(refresh(dir, root, o, paths, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_added, 300u);
  EXPECT_EQ(st.segments, before + 1);
  check(dir, root, "a batch of 300 new files");
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// Hundreds of named paths among neighbours whose names sort between them
// ("d/f1" and "d/f1-x", "d/f1.log", "d/f1/"'s files, "d/f10"): each file
// changed, gone or new is looked at exactly when a named path holds it,
// whatever the order the paths come in and however many meet one block.
TEST(Refresh, ManyNamedPathsAmongNeighboursAreLookedAtExactly) {
  std::mt19937 rng(43);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::vector<std::string> files;
  for (int d = 0; d < 6; d++)
    for (int f = 0; f < 40; f++)
      for (const char* tail : {"", "-x", ".log", "0", "/in"}) {
        const std::string p = root + "/d" + std::to_string(d) + "/f" + std::to_string(f) + tail;
        if (std::string(tail) == "/in") fs::create_directories(p.substr(0, p.size() - 3));
        else fs::create_directories(root + "/d" + std::to_string(d));
        files.push_back(p);
      }
  // "f<n>" is a file where "f<n>/in" is not (a path is one or the other).
  std::vector<std::string> kept;
  for (const auto& p : files)
    if (!fs::is_directory(p)) kept.push_back(p);
  files = kept;
  for (const auto& p : files) testutil::write(p, "w1 w2 " + p.substr(root.size()));
  scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  // Every file changes, a fifth are deleted, new ones appear; a third of
  // the changed paths are named (some by their directory), in random order.
  std::vector<std::string> named;
  std::set<std::string> looked;
  for (size_t i = 0; i < files.size(); i++) {
    if (rng() % 5 == 0) ::unlink(files[i].c_str());
    else testutil::write(files[i], "w3 changed " + files[i].substr(root.size()));
    if (rng() % 3 == 0) named.push_back(files[i]);
  }
  for (int k = 0; k < 30; k++) {
    const std::string p = root + "/d" + std::to_string(k % 6) + "/f" + std::to_string(rng() % 40) + "-new" +
                          std::to_string(k);
    testutil::write(p, "w4 new");
    if (k % 2 == 0) named.push_back(p);
  }
  named.push_back(root + "/d5/f7");  // a directory, named whole
  named.push_back(root + "/d4/f3/in");
  named.push_back(root + "/d2/gone");
  std::shuffle(named.begin(), named.end(), rng);
  settle();
  ASSERT_EQ(refresh(dir, root, o, named, &st, &err), 0) << err.message;
  // The oracle of this refresh: each file a named path holds as it is
  // now, the others as they were.
  const std::set<std::string> given(named.begin(), named.end());
  auto covered = [&](const std::string& p) {
    for (std::string at = p;; at = at.substr(0, at.rfind('/'))) {
      if (given.count(at)) return true;
      if (at.size() <= root.size()) return false;
    }
  };
  const auto paths = listed(dir);
  std::set<std::string> listed_set(paths.begin(), paths.end());
  for (const auto& p : files) {
    const bool exists = fs::exists(p);
    if (covered(p)) {
      EXPECT_EQ(listed_set.count(p), exists ? 1u : 0u) << p;
    } else {
      EXPECT_EQ(listed_set.count(p), 1u) << p;  // deleted or not, still as it was
    }
  }
  size_t changed_named = 0, changed_kept = 0;
  for (const auto& r : testutil::search(dir, "w3", -1, SCIPIS_TFIDF, SCIPIS_MATCH_ANY)) {
    const std::string p = r.path;
    (covered(p) ? changed_named : changed_kept)++;
  }
  EXPECT_EQ(changed_kept, 0u);
  size_t want_named = 0;
  for (const auto& p : files) want_named += covered(p) && fs::exists(p);
  EXPECT_EQ(changed_named, want_named);
  // Then the whole tree: the oracle's.
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  check(dir, root, "named among neighbours, then the tree", {"w3", "w4"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A refresh lists the documents it read within a tick of their change
// (pipeline/racy.h); the list outlives merges of their segments, under
// the lock (renumbered) and beside refreshes (numbers kept), and the next
// refresh reads each racy file again, once.
TEST(Refresh, RacyDocumentsStayRacyThroughMerges) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(41);
  for (int i = 0; i < 4; i++) testutil::write(root + "/f" + std::to_string(i), lines(rng, 300));
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  for (int kind = 0; kind < 3; kind++) {
    const std::string r = root + "/r" + std::to_string(kind);
    {
      RacyTick surely(int64_t{60} * 1000 * 1000 * 1000);
      testutil::write(r, lines(rng, 200));
      ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
      ASSERT_EQ(st.files_added, 1u);
    }
    if (kind == 0) {
      ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
      EXPECT_GT(st.segments_merged, 1u);
    } else if (kind == 1) {
      scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
      ASSERT_NE(b, nullptr) << err.message;
      while (!scipis_build_wait(b, 100)) {
      }
      ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message;
    }
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_changed, 1u) << "kind " << kind;
    EXPECT_EQ(st.bytes_read, fs::file_size(r)) << "kind " << kind;
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_changed, 0u) << "kind " << kind;
    check(dir, root, "racy kind " + std::to_string(kind), {"w1", "w2 w3"});
  }
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
