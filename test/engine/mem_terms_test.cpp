// The build's term table against a std::map of the same adds: every
// term's postings, the byte order of the terms (lengths 1 to 255, NUL
// bytes, shared 8-byte prefixes), growth under a budget (crowded, never
// wrong) and without one.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "am/mem_terms.h"

namespace {

using scipis::am::MemTerms;
using Posts = std::vector<std::pair<uint32_t, uint32_t>>;  // (row, tf)

std::string random_term(std::mt19937_64& rng) {
  static const std::string prefixes[] = {"", "abcdefgh", "abcdefg", std::string("ab\0", 3)};
  std::string t = prefixes[rng() % 4];
  const size_t n = rng() % 3 == 0 ? 1 + rng() % 255 : 1 + rng() % 12;
  while (t.size() < n) t.push_back(static_cast<char>(rng() % 3 == 0 ? rng() % 4 : rng() % 256));
  t.resize(std::min<size_t>(std::max<size_t>(t.size(), 1), 255));
  return t;
}

void check(size_t budget, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> vocab;
  for (int i = 0; i < 3000; i++) vocab.push_back(random_term(rng));
  MemTerms m;
  m.set_budget(budget);
  std::map<std::string, Posts> oracle;
  bool crowded = false;
  for (uint32_t row = 0; row < 2000; row++) {
    const int tokens = static_cast<int>(rng() % 30);
    for (int i = 0; i < tokens; i++) {
      // Skewed: a few terms in most rows, most terms in a few.
      const std::string& t = vocab[rng() % 2 ? rng() % 20 : rng() % vocab.size()];
      const uint32_t tf = 1 + static_cast<uint32_t>(rng() % 3);
      Posts& p = oracle[t];
      const bool is_new = p.empty();
      if (!p.empty() && p.back().first == row)
        p.back().second += tf;
      else
        p.push_back({row, tf});
      ASSERT_EQ(m.add(MemTerms::Key::of(t.data(), t.size()), row, tf), is_new);
      crowded = crowded || m.crowded();
    }
  }
  ASSERT_EQ(m.size(), oracle.size());
  if (budget) {
    EXPECT_TRUE(crowded);
  }
  std::vector<const MemTerms::Slot*> sorted = m.sorted();
  ASSERT_EQ(sorted.size(), oracle.size());
  auto it = oracle.begin();
  std::vector<uint32_t> ords, tfs;
  for (const MemTerms::Slot* s : sorted) {
    ASSERT_EQ(std::string(m.term(*s)), it->first);
    const MemTerms::Slot* found = m.find(MemTerms::Key::of(it->first.data(), it->first.size()));
    ASSERT_EQ(found, s);
    m.postings(*s, ords, tfs);
    ASSERT_EQ(ords.size(), it->second.size());
    for (size_t i = 0; i < ords.size(); i++) {
      ASSERT_EQ(ords[i], it->second[i].first);
      ASSERT_EQ(tfs[i], it->second[i].second);
    }
    ++it;
  }
  const std::string absent(300, 'z');
  EXPECT_EQ(m.find(MemTerms::Key::of(absent.data(), 9)), nullptr);
}

TEST(MemTerms, MatchesAMapWithoutBudget) { check(0, 1); }

TEST(MemTerms, MatchesAMapWhenCrowded) {
  // Smaller than the table it would grow to: it fills to 7/8 and says so,
  // then grows anyway rather than fail.
  check(64 << 10, 2);
  check(1, 3);
}

}  // namespace
