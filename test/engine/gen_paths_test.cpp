// The generation's one path index over many segments: scipis_locate
// through it equals a brute force over the tree (substrings by find, globs
// by a matcher written here) after a build, after refreshes that add
// segments it does not cover and tombstone ones it does, and after a full
// compaction writes it again; damage to it is an error naming it or the
// right answer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <set>

#include "index/gen_paths.h"
#include "index/manifest.h"
#include "index/segment_format.h"
#include "refresh_util.h"
#include "test_util.h"
#include "util/error.h"
#include "util/fileio.h"

namespace fs = std::filesystem;
using namespace refresh_util;

namespace {

int compact_all(const std::string& dir, const scipis_options& o, scipis_build_stats* st, scipis_error* err) {
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_ALL, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

// '*', '?' and plain sets ([ab], [!ab]) of bytes that are not special:
// the glob subset the patterns below use.
bool glob(const char* p, const char* pe, const char* s, const char* se) {
  if (p == pe) return s == se;
  if (*p == '*') {
    for (const char* t = s;; t++) {
      if (glob(p + 1, pe, t, se)) return true;
      if (t == se) return false;
    }
  }
  if (s == se) return false;
  if (*p == '?') return glob(p + 1, pe, s + 1, se);
  if (*p == '[') {
    const char* q = p + 1;
    const bool neg = *q == '!';
    if (neg) q++;
    bool in = false;
    for (; *q != ']'; q++) in |= *q == *s;
    return in != neg && glob(q + 1, pe, s + 1, se);
  }
  return *p == *s && glob(p + 1, pe, s + 1, se);
}

bool oracle_match(const std::string& pat, const std::string& path) {
  if (pat.find_first_of("*?[") == std::string::npos) return path.find(pat) != std::string::npos;
  return glob(pat.data(), pat.data() + pat.size(), path.data(), path.data() + path.size());
}

std::vector<std::string> tree_paths(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && !e.is_symlink()) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string random_pattern(std::mt19937& rng, const std::vector<std::string>& paths, size_t root_len) {
  const std::string& p = paths[rng() % paths.size()];
  const std::string tail = p.substr(root_len);
  const size_t n = std::min<size_t>(tail.size(), rng() % 9);
  const std::string sub = tail.substr(rng() % (tail.size() - n + 1), n);
  switch (rng() % 6) {
    case 0:
      return "*" + sub + "*.log";
    case 1:
      return "*/" + sub + "*";
    case 2:
      return sub.empty() ? "*" : "*" + sub.substr(0, sub.size() / 2) + "?" + sub.substr(sub.size() / 2 + 1) + "*";
    case 3:
      return sub.empty() ? "*[ab]*" : "*[" + sub.substr(0, 1) + "x]" + sub.substr(1) + "*";
    case 4:
      return sub.empty() ? "*[!/]" : "*[!" + sub.substr(0, 1) + "]" + sub.substr(1) + "*";
    default:
      return sub;
  }
}

std::vector<std::string> located(const std::string& dir, const std::string& pat, scipis_error* err, int* rc) {
  std::vector<std::string> out;
  scipis_index* ix = scipis_index_open(dir.c_str(), err);
  if (!ix) {
    *rc = -1;
    return out;
  }
  scipis_docs d;
  *rc = scipis_locate(ix, pat.data(), pat.size(), &d, err);
  if (*rc == 0) {
    for (size_t i = 0; i < d.n; i++) out.emplace_back(d.docs[i].path, d.docs[i].path_len);
    scipis_docs_free(&d);
  }
  scipis_index_close(ix);
  return out;
}

std::string current_gen(const std::string& dir) {
  std::string bytes;
  EXPECT_TRUE(scipis::read_file(scipis::manifest_path(dir), bytes));
  return scipis::Manifest::decode(scipis::manifest_path(dir), bytes).gen_dir(dir);
}

// Every pattern's answer, through a handle opened afresh each time,
// equals the brute force over the tree as it is now.
void check_patterns(const std::string& dir, const std::string& root, std::mt19937& rng, int n,
                    const std::string& label) {
  const std::vector<std::string> paths = tree_paths(root);
  for (int i = 0; i < n; i++) {
    const std::string pat = random_pattern(rng, paths, root.size());
    std::vector<std::string> want;
    for (const std::string& p : paths)
      if (oracle_match(pat, p)) want.push_back(p);
    scipis_error err;
    int rc;
    const std::vector<std::string> got = located(dir, pat, &err, &rc);
    ASSERT_EQ(rc, 0) << label << ": " << pat << ": " << err.message;
    ASSERT_EQ(got, want) << label << ": " << pat;
  }
}

const char* const kNames[] = {"job", "out", "a b", "d\xc3\xa9j\xc3\xa0", "x-y", "r2d2", "log", "q"};

void add_files(const std::string& root, std::mt19937& rng, int n, int tag) {
  for (int i = 0; i < n; i++) {
    const std::string d = root + "/" + kNames[rng() % 8] + std::to_string(rng() % 9);
    fs::create_directories(d);
    // Terms of its own fill the indexers' tables whatever share of the
    // files each reads: the build flushes several segments however its
    // threads run.
    std::string own;
    for (int k = 0; k < 12; k++) own += " u" + std::to_string(tag) + "x" + std::to_string(i) + "y" + std::to_string(k);
    testutil::write(d + "/" + kNames[rng() % 8] + std::to_string(tag) + "_" + std::to_string(i) +
                        (rng() % 2 ? ".log" : ".txt"),
                    lines(rng, 200 + rng() % 3000) + own);
  }
}

}  // namespace

TEST(GenPaths, LocateThroughItEqualsTheBruteForce) {
  std::mt19937 rng(20261125);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  add_files(root, rng, 700, 0);
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  ASSERT_GE(st.segments, 4u);
  const std::string gen = current_gen(dir);
  ASSERT_TRUE(fs::exists(gen + "/" + scipis::kGenPathsFile));
  check_patterns(dir, root, rng, 300, "build");

  // The same answers without it (each segment's own index).
  fs::rename(gen + "/" + scipis::kGenPathsFile, gen + "/saved");
  check_patterns(dir, root, rng, 60, "without PATHS");
  fs::rename(gen + "/saved", gen + "/" + scipis::kGenPathsFile);

  // Refreshes: new files in new segments it does not cover, deleted ones
  // tombstoned in segments it does; it is carried to each generation.
  for (int step = 1; step <= 3; step++) {
    add_files(root, rng, 60, step);
    std::vector<std::string> all = tree_paths(root);
    for (int i = 0; i < 25; i++) fs::remove(all[rng() % all.size()]);
    usleep(150 * 1000);
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    ASSERT_TRUE(fs::exists(current_gen(dir) + "/" + scipis::kGenPathsFile)) << step;
    check_patterns(dir, root, rng, 120, "refresh " + std::to_string(step));
  }

  // A full compaction writes it again, over the segments it made.
  ASSERT_EQ(compact_all(dir, o, &st, &err), 0) << err.message;
  const std::string after = current_gen(dir) + "/" + scipis::kGenPathsFile;
  if (st.segments >= 2) {
    ASSERT_TRUE(fs::exists(after));
    std::string bytes;
    ASSERT_TRUE(scipis::read_file(after, bytes));
    const scipis::GenPaths gp(after, bytes);
    EXPECT_EQ(gp.covered().size(), st.segments);
  }
  check_patterns(dir, root, rng, 120, "full compaction");
  testutil::rm_rf(root);
  testutil::rm_rf(dir);
}

TEST(GenPaths, DamageIsAnErrorNamingItOrTheRightAnswer) {
  std::mt19937 rng(7);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  add_files(root, rng, 300, 0);
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const std::string p = current_gen(dir) + "/" + scipis::kGenPathsFile;
  std::string good;
  ASSERT_TRUE(scipis::read_file(p, good));
  const std::vector<std::string> paths = tree_paths(root);
  const std::vector<std::string> pats = {"job", "r2d", "*/log?*", "q1", "nothing-like-it"};
  std::vector<std::vector<std::string>> want;
  for (const std::string& pat : pats) {
    want.emplace_back();
    for (const std::string& f : paths)
      if (oracle_match(pat, f)) want.back().push_back(f);
  }
  auto expect_error_or_right = [&](const std::string& label) {
    for (size_t i = 0; i < pats.size(); i++) {
      int rc;
      const auto got = located(dir, pats[i], &err, &rc);
      if (rc != 0) {
        EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << label << ": " << err.message;
        EXPECT_NE(std::string(err.message).find(scipis::kGenPathsFile), std::string::npos) << label << ": " << err.message;
      } else {
        EXPECT_EQ(got, want[i]) << label << " " << pats[i];
      }
    }
  };
  size_t errors = 0;
  for (size_t at = 0; at < good.size(); at += 1 + rng() % std::max<size_t>(1, good.size() / 300)) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ (1 << (rng() % 8)));
    scipis::write_file_durable(p, bad);
    expect_error_or_right("flip at " + std::to_string(at));
    int rc;
    located(dir, "job", &err, &rc);
    errors += rc != 0;
    if (HasFailure()) break;
  }
  EXPECT_GT(errors, 0u);
  for (size_t cut : {size_t{0}, size_t{10}, size_t{40}, good.size() / 2, good.size() - 1}) {
    scipis::write_file_durable(p, good.substr(0, cut));
    int rc;
    located(dir, "job", &err, &rc);
    EXPECT_NE(rc, 0) << "cut at " << cut;
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
  }
  scipis::write_file_durable(p, good + "x");
  int rc;
  located(dir, "job", &err, &rc);
  EXPECT_NE(rc, 0) << "a trailing byte";
  testutil::rm_rf(root);
  testutil::rm_rf(dir);
}
