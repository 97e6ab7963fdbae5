// What keeps a small refresh and the merge of its tail cheap, checked
// against plain equivalents: the term sketch's estimate and merge against
// their textbook formulas, a merge's table sized by its inputs' terms
// against a map, and a refresh whose new terms move no register linking
// the TERMS file it would otherwise write again.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "index/distinct_terms.h"
#include "index/manifest.h"
#include "index/segment_reader.h"
#include "index/tfidf_index.h"
#include "refresh_util.h"
#include "test_util.h"
#include "util/fileio.h"

using namespace refresh_util;

namespace {

// HyperLogLog as Flajolet et al. write it, one register at a time.
uint64_t plain_estimate(const std::vector<uint8_t>& r) {
  double sum = 0;
  size_t zeros = 0;
  for (uint8_t x : r) {
    sum += std::ldexp(1.0, -static_cast<int>(x));
    zeros += x == 0;
  }
  const double m = static_cast<double>(r.size());
  double e = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
  if (e <= 2.5 * m && zeros > 0) e = m * std::log(m / static_cast<double>(zeros));
  return static_cast<uint64_t>(std::llround(e));
}

ino_t inode_of(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

std::string terms_file(const std::string& dir) {
  std::string bytes;
  EXPECT_TRUE(scipis::read_file(scipis::manifest_path(dir), bytes));
  const scipis::Manifest m = scipis::Manifest::decode(scipis::manifest_path(dir), bytes);
  return m.gen_dir(dir) + "/" + scipis::kTermsFile;
}

}  // namespace

// Registers loaded shared are copied when an add first raises one, never
// written through: the state they came from (a refresh's old TERMS, kept
// for the next refresh) stays as it was.
TEST(DistinctTerms, SharedRegistersAreCopiedOnTheFirstMove) {
  std::mt19937_64 rng(5);
  scipis::DistinctTerms s;
  for (int i = 0; i < 5000; i++) s.add(rng());
  const auto shared = std::make_shared<const std::vector<uint8_t>>(s.registers());
  const std::vector<uint8_t> was = *shared;
  scipis::DistinctTerms t, u;
  t.load(shared);
  u.load(shared);
  EXPECT_EQ(&t.registers(), shared.get());  // not copied by the load
  uint64_t h = 0;
  for (int i = 0; i < 100000 && !t.moved(); i++) t.add(h = rng());
  ASSERT_TRUE(t.moved());
  EXPECT_EQ(*shared, was);
  EXPECT_NE(t.registers(), was);
  EXPECT_EQ(&u.registers(), shared.get());
  // A merge into a sketch on shared registers copies them too; a sketch
  // that starts from zeros shares one zero vector until it moves.
  u.merge(t);
  EXPECT_EQ(*shared, was);
  EXPECT_EQ(u.registers(), t.registers());
  scipis::DistinctTerms z1, z2;
  EXPECT_EQ(&z1.registers(), &z2.registers());
  z1.add(h);
  EXPECT_TRUE(z1.moved());
  EXPECT_EQ(std::count(z2.registers().begin(), z2.registers().end(), 0),
            static_cast<long>(scipis::DistinctTerms::kRegisters));
  // Registers of another size are ignored, as a damaged TERMS list's are.
  scipis::DistinctTerms w;
  w.load(std::make_shared<const std::vector<uint8_t>>(100, 3));
  EXPECT_EQ(w.registers().size(), scipis::DistinctTerms::kRegisters);
}

TEST(DistinctTerms, EstimateAndMergeMatchThePlainFormulas) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 40; round++) {
    scipis::DistinctTerms a, b;
    // From nearly empty (linear counting) to millions of terms; registers
    // read from a file may hold any byte.
    const size_t n = size_t{1} << (round % 24);
    for (size_t i = 0; i < n; i++) a.add(rng());
    for (size_t i = 0; i < n / 2; i++) b.add(rng());
    std::vector<uint8_t> regs = a.registers();
    if (round == 39)
      for (size_t i = 0; i < regs.size(); i += 97) regs[i] = static_cast<uint8_t>(rng());
    const uint64_t want = plain_estimate(regs), got = scipis::DistinctTerms::estimate(regs);
    // Sums in another order may round the last bit apart: at most one off.
    EXPECT_LE(want > got ? want - got : got - want, 1u) << round;
    std::vector<uint8_t> merged = a.registers();
    for (size_t i = 0; i < merged.size(); i++) merged[i] = std::max(merged[i], b.registers()[i]);
    a.merge(b);
    EXPECT_EQ(a.registers(), merged) << round;
  }
  // moved(): whether an add raised a register since the load (a refresh
  // whose terms moved none keeps the old registers without merging).
  scipis::DistinctTerms s;
  for (int i = 0; i < 1000; i++) s.add(rng());
  scipis::DistinctTerms t;
  t.load(s.registers());
  EXPECT_FALSE(t.moved());
  const std::vector<uint8_t> before = t.registers();
  int raised = 0;
  for (int i = 0; i < 100000 && !t.moved(); i++) {
    const uint64_t h = rng();
    scipis::DistinctTerms probe;
    probe.load(t.registers());
    probe.add(h);
    raised += probe.registers() != t.registers();
    EXPECT_EQ(probe.moved(), probe.registers() != t.registers());
    t.add(h);
  }
  EXPECT_TRUE(t.moved());
  EXPECT_NE(t.registers(), before);
  EXPECT_EQ(raised, 1);
}

// A table sized for the terms a merge can meet holds them all (full()
// never asks for a flush) however many postings they have, takes a small
// part of the budget, and serialises the postings a map holds.
TEST(TfIdfIndex, MostTermsSizesTheTable) {
  const size_t terms = 3000;
  const uint64_t budget = uint64_t{64} << 20;
  scipis::TfIdfIndex tf(budget, 4, nullptr, terms);
  std::map<std::string, std::map<uint64_t, uint32_t>> want;
  std::mt19937 rng(9);
  for (uint64_t doc = 0; doc < 200; doc++) {
    for (size_t k = 0; k < 400; k++) {
      const std::string t = "t" + std::to_string(rng() % terms);
      tf.add(scipis::TermKey::of(t), doc, 1);
      want[t][doc]++;
      ASSERT_FALSE(tf.full()) << doc;
    }
  }
  EXPECT_EQ(tf.terms(), want.size());
  EXPECT_LT(tf.memory(), budget / 8);
  scipis::OutBuffer data;
  std::vector<scipis::OutBuffer> metas;
  tf.serialise(1, data, metas);
  scipis::TfMeta meta("meta", std::string(metas[0].view()));
  EXPECT_EQ(meta.size(), want.size());
  for (const auto& [t, postings] : want) {
    auto ref = meta.find(t);
    ASSERT_TRUE(ref.has_value()) << t;
    std::vector<scipis::Posting> got;
    const std::string_view read = data.view().substr(ref->read_offset(), ref->read_len());
    scipis::decode_postings("data", scipis::region_in("data", read, *ref), *ref, 1000, got);
    std::map<uint64_t, uint32_t> got_map;
    for (const auto& p : got) got_map[p.seq] = p.tf;
    EXPECT_EQ(got_map, postings) << t;
  }
  // More terms than it was told of: it asks for a flush, never overflows.
  scipis::TfIdfIndex small(budget, 4, nullptr, 10);
  bool flushed = false;
  for (int i = 0; i < 5000 && !flushed; i++) {
    small.add(scipis::TermKey::of("x" + std::to_string(i)), 0, 1);
    flushed = small.full();
  }
  EXPECT_TRUE(flushed);
}

// Appended words the index knows move no register: the new generation
// links the old TERMS (one inode). New words write it again. Either way
// the estimate is a fresh build's over the same tree.
TEST(SmallCommit, TermsLinkedWhenNoRegisterMoves) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(21);
  const std::string log = root + "/a.log";
  testutil::write(log, lines(rng, 64 << 10) + "\n");
  testutil::write(root + "/b.log", "w1 w2 w3\n");
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const uint64_t terms_before = st.terms;
  const ino_t before = inode_of(terms_file(dir));

  std::ofstream(log, std::ios::app) << "w1 w2 w3 w1\n";
  settle();
  ASSERT_EQ(refresh(dir, root, o, {log}, &st, &err), 0) << err.message;
  ASSERT_EQ(st.files_appended, 1u);
  EXPECT_EQ(inode_of(terms_file(dir)), before);
  EXPECT_EQ(st.terms, terms_before);
  check(dir, root, "known words appended", {"w1", "w2 w3"});

  // A quarter of the new words under the sanitizer, where every search
  // loads their dictionary at a few times the cost; the plain run adds all.
  const int words = testutil::kSanitized ? 5000 : 20000;
  const std::string last = "w1 nw" + std::to_string(words - 1);
  std::string fresh;
  for (int i = 0; i < words; i++) fresh += "nw" + std::to_string(i) + " ";
  std::ofstream(log, std::ios::app) << fresh << "\n";
  settle();
  ASSERT_EQ(refresh(dir, root, o, {log}, &st, &err), 0) << err.message;
  ASSERT_EQ(st.files_appended, 1u);
  EXPECT_NE(inode_of(terms_file(dir)), before);
  EXPECT_GT(st.terms, terms_before + words * 3 / 4);
  check(dir, root, "new words appended", {"nw7", last});
  // A merge changes no term: its generation links the file too.
  const ino_t merged_from = inode_of(terms_file(dir));
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_EQ(inode_of(terms_file(dir)), merged_from);
  check(dir, root, "merged", {"nw7", last});

  const std::string again = testutil::scratch_dir();
  scipis_build_stats built;
  ASSERT_EQ(testutil::build(again, root, o, &built, &err), 0) << err.message;
  EXPECT_EQ(st.terms, built.terms);
  testutil::rm_rf(again);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A chain folds into its last member, which another indexer may hold: the
// merge sizes every indexer's table for the terms of all it merges, so a
// full merge of appended files' new words still writes one segment per
// indexer (a table sized for one indexer's inputs flushed again and again).
TEST(SmallCommit, FoldedChainsFitTheMergeTable) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(8);
  std::vector<std::string> files;
  for (int i = 0; i < 8; i++) {
    files.push_back(root + "/f" + std::to_string(i) + ".log");
    testutil::write(files.back(), lines(rng, 48 << 10) + "\n");
  }
  // Room for everything: only the table's term limit could cut a merge.
  scipis_options o = tiny_options();
  o.tfidf_index_size = 64 << 20;
  o.path_index_size = 4 << 20;
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  int word = 0;
  // Different files each round: a file's appends go to whichever indexer
  // reads it then, so its chain spans both.
  for (int round = 0; round < 6; round++) {
    size_t appended = 0;
    for (size_t n = 0; n < files.size(); n++) {
      if ((n + static_cast<size_t>(round)) % 3 == 0) continue;
      const std::string& f = files[n];
      appended++;
      std::string more;
      for (int k = 0; k < 300; k++) more += "nw" + std::to_string(word++) + " ";
      std::ofstream(f, std::ios::app) << more << "\n";
    }
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    ASSERT_EQ(st.files_appended, appended);
  }
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_EQ(st.chain_links, 0u);
  EXPECT_LE(st.segments, static_cast<uint64_t>(o.indexer_threads));
  check(dir, root, "folded", {"nw7", "nw1000 w1", "nw9599"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
