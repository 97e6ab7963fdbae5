// The path trigram index against a brute force written here from its
// definition (each path's set of 3-byte substrings, sharing no code with
// the index), on random paths and patterns; and the file under damage:
// every flip and truncation is an error or an answer within bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "index/path_trigrams.h"
#include "index/segment_format.h"
#include "query/path_pattern.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace {

using Records = std::vector<uint32_t>;

std::string build(const std::vector<std::string>& paths) {
  std::string bytes;
  std::vector<uint32_t> lens;
  for (const std::string& p : paths) {
    bytes += p;
    lens.push_back(static_cast<uint32_t>(p.size()));
  }
  return scipis::build_path_trigrams(bytes, lens);
}

// The brute force: the records whose path holds every 3-byte substring
// of every run.
struct Oracle {
  const std::vector<std::string>& paths;
  std::optional<Records> candidates(const std::vector<std::string>& runs) const {
    std::vector<std::string> need;
    for (const std::string& run : runs)
      for (size_t i = 0; i + 3 <= run.size(); i++) need.push_back(run.substr(i, 3));
    if (need.empty()) return std::nullopt;
    Records out;
    for (uint32_t r = 0; r < paths.size(); r++)
      if (std::all_of(need.begin(), need.end(),
                      [&](const std::string& t) { return paths[r].find(t) != std::string::npos; }))
        out.push_back(r);
    return out;
  }
};

// Bytes that matter: glob bytes, set syntax, '/', NUL and bytes >= 0x80.
const std::string kRich("/ab.c0*?[]!-\0\x80\xc3\xa9\xff", 16);
const std::string kSmall("/ab");

std::vector<std::string> random_paths(std::mt19937& rng, size_t n, const std::string& alphabet,
                                      size_t max_len) {
  std::vector<std::string> paths;
  auto byte = [&] { return alphabet[rng() % alphabet.size()]; };
  for (size_t i = 0; i < n; i++) {
    std::string p;
    // Half share a prefix with the path before, as a crawl's paths do.
    if (i && rng() % 2) p = paths.back().substr(0, rng() % (paths.back().size() + 1));
    const size_t len = rng() % (max_len + 1);
    while (p.size() < len) p += byte();
    paths.push_back(p);
  }
  return paths;
}

// A pattern and, known from how it was put together, its literal runs.
struct Pattern {
  std::string text;
  std::vector<std::string> runs;
};

std::string chunk_of(std::mt19937& rng, const std::vector<std::string>& paths, const std::string& alphabet) {
  std::string c;
  const std::string& p = paths[rng() % paths.size()];
  if (rng() % 4 && !p.empty()) {
    const size_t at = rng() % p.size();
    c = p.substr(at, 1 + rng() % 7);
  } else {
    for (size_t n = 1 + rng() % 5; n; n--) c += alphabet[rng() % alphabet.size()];
  }
  std::erase_if(c, [](char b) { return b == '*' || b == '?' || b == '['; });
  return c;
}

Pattern random_pattern(std::mt19937& rng, const std::vector<std::string>& paths, const std::string& alphabet) {
  Pattern pat;
  std::string run;
  auto end_run = [&] {
    if (!run.empty()) pat.runs.push_back(run);
    run.clear();
  };
  for (size_t pieces = 1 + rng() % 5; pieces; pieces--) {
    switch (rng() % 6) {
      case 0:
        end_run();
        pat.text += "*";
        break;
      case 1:
        end_run();
        pat.text += "?";
        break;
      case 2: {
        end_run();
        std::string set = "[";
        if (rng() % 2) set += "!";
        if (rng() % 3 == 0) set += "]";
        for (size_t n = 1 + rng() % 3; n; n--) {
          char b;
          do b = kRich[rng() % kRich.size()];
          while (b == ']' || b == '!');  // '!' first would negate
          set += b;
        }
        pat.text += set + "]";
        break;
      }
      default: {
        const std::string c = chunk_of(rng, paths, alphabet);
        pat.text += c;
        run += c;
      }
    }
  }
  // A '[' with no ']' after it is a literal byte of its run.
  if (rng() % 5 == 0) {
    std::string c = "[" + chunk_of(rng, paths, alphabet);
    std::erase(c, ']');
    pat.text += c;
    run += c;
  }
  end_run();
  return pat;
}

void check_segment(const std::vector<std::string>& paths, std::mt19937& rng,
                   const std::string& alphabet, int patterns) {
  const std::string file = build(paths);
  const scipis::PathTrigrams index("seg.pt", file);
  ASSERT_EQ(index.records(), paths.size());
  const Oracle oracle{paths};
  for (int i = 0; i < patterns; i++) {
    const Pattern pat = random_pattern(rng, paths, alphabet);
    const scipis::PathPattern pp(pat.text);
    ASSERT_EQ(pp.literal_runs(), pat.runs) << pat.text;
    const auto got = index.candidates(pp);
    ASSERT_EQ(got, oracle.candidates(pat.runs)) << pat.text;
    for (uint32_t r = 0; r < paths.size(); r++) {
      const bool candidate = !got || std::binary_search(got->begin(), got->end(), r);
      ASSERT_TRUE(candidate || !pp.matches(paths[r])) << pat.text << " " << r;
    }
  }
}

}  // namespace

TEST(PathTrigrams, LiteralRuns) {
  auto runs = [](const char* p) { return scipis::PathPattern(p).literal_runs(); };
  using V = std::vector<std::string>;
  EXPECT_EQ(runs("job01"), V{"job01"});
  EXPECT_EQ(runs(""), V{});
  EXPECT_EQ(runs("]x!-"), V{"]x!-"});
  EXPECT_EQ(runs("*/node1[0-7]/*.log"), (V{"/node1", "/", ".log"}));
  EXPECT_EQ(runs("ab?cd**ef"), (V{"ab", "cd", "ef"}));
  EXPECT_EQ(runs("a[]b]c"), (V{"a", "c"}));      // ']' first is a member
  EXPECT_EQ(runs("a[!]b]c"), (V{"a", "c"}));
  EXPECT_EQ(runs("[*]abc"), V{"abc"});           // a set, even of one byte
  EXPECT_EQ(runs("*b[1*"), V{"b[1"});            // no ']': a literal '['
  EXPECT_EQ(runs("x[!]"), V{"x[!]"});
  EXPECT_EQ(runs("a[b]c[d"), (V{"a", "c[d"}));
}

TEST(PathTrigrams, MatchesBruteForceOnRandomPaths) {
  std::mt19937 rng(20261124);
  for (int round = 0; round < 6; round++) {
    const std::string& alphabet = round % 2 ? kSmall : kRich;
    auto paths = random_paths(rng, 1500 + rng() % 1500, alphabet, round % 3 ? 24 : 60);
    // A root every path has: lists of every record.
    if (round >= 4)
      for (std::string& p : paths) p = "/lus" + p;
    check_segment(paths, rng, alphabet, 400);
  }
}

// Long lists over many blocks, skipped over block by block, with gaps of
// every width.
TEST(PathTrigrams, LongListsWithWideGaps) {
  std::mt19937 rng(7);
  std::vector<std::string> paths(300000);
  for (uint32_t r = 0; r < paths.size(); r++) {
    if (r % 3 == 0) paths[r] = "/dense";
    if (rng() % 4000 == 0 || r == 0 || r + 1 == paths.size()) paths[r] += "/rare";
    if (r % 1000 < 2) paths[r] += "/two";
    if (r > 100000 && r < 100200) paths[r] += "/run";
  }
  paths[150000] = "/dense/rare/two/run";
  const std::string file = build(paths);
  const scipis::PathTrigrams index("long.pt", file);
  const Oracle oracle{paths};
  for (const char* p : {"/rare", "/dense", "dense/rare", "/two", "*rare/two*", "/run", "e/r", "ns?/r"}) {
    const auto got = index.candidates(scipis::PathPattern(p));
    ASSERT_EQ(got, oracle.candidates(scipis::PathPattern(p).literal_runs())) << p;
  }
}

TEST(PathTrigrams, EveryByteValue) {
  std::vector<std::string> paths;
  for (int b = 0; b < 256; b++)
    paths.push_back(std::string{static_cast<char>(b), static_cast<char>(255 - b), static_cast<char>(b)} + "/x");
  const std::string file = build(paths);
  const scipis::PathTrigrams index("bytes.pt", file);
  for (uint32_t r = 0; r < 256; r++) {
    // As a substring and as a glob; '*', '?' and '[' cannot be literal.
    const std::string t = paths[r].substr(0, 3);
    if (t.find_first_of("*?[") != std::string::npos) continue;
    const auto got = index.candidates(scipis::PathPattern(t));
    ASSERT_TRUE(got);
    EXPECT_NE(std::find(got->begin(), got->end(), r), got->end());
    EXPECT_EQ(index.candidates(scipis::PathPattern(t + "*")), got);
  }
}

TEST(PathTrigrams, ShortPatternsScanEverything) {
  const std::string file = build({"/abc", "/abd", "aaaa"});
  const scipis::PathTrigrams index("short.pt", file);
  for (const char* p : {"", "ab", "a*b", "?ab?", "[ab]cd", "ab[c]d*"})
    EXPECT_FALSE(index.candidates(scipis::PathPattern(p))) << p;
  EXPECT_EQ(index.candidates(scipis::PathPattern("aaa")), Records{2});
  EXPECT_EQ(index.candidates(scipis::PathPattern("*/ab?")), (Records{0, 1}));
  EXPECT_EQ(index.candidates(scipis::PathPattern("zzz")), Records{});
}

TEST(PathTrigrams, EmptySegments) {
  for (const auto& paths : {std::vector<std::string>{}, std::vector<std::string>{"", "ab", "/"}}) {
    const std::string file = build(paths);
    EXPECT_EQ(file.size(), scipis::kHeaderSize);
    const scipis::PathTrigrams index("empty.pt", file);
    EXPECT_EQ(index.records(), paths.size());
    EXPECT_EQ(index.trigrams(), 0u);
    EXPECT_EQ(index.candidates(scipis::PathPattern("abc")), Records{});
    EXPECT_FALSE(index.candidates(scipis::PathPattern("ab")));
  }
}

namespace {

struct Damaged {
  std::vector<std::optional<Records>> answers;  // nullopt: corrupt
  bool open_failed = false;
};

// Opens file and asks every pattern; whatever it answers is within bounds,
// every error is a corruption error naming the file.
Damaged ask(const std::string& file, const std::vector<std::string>& patterns) {
  Damaged d;
  auto expect_corrupt = [](const scipis::Error& e) {
    EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << e.what();
    EXPECT_NE(std::string(e.what()).find("dmg.pt"), std::string::npos) << e.what();
  };
  // Exactly the file's bytes on the heap: a read past them is caught by
  // AddressSanitizer.
  const std::vector<char> bytes(file.begin(), file.end());
  try {
    const scipis::PathTrigrams index("dmg.pt", std::string_view(bytes.data(), bytes.size()));
    for (const std::string& p : patterns) {
      try {
        const auto got = index.candidates(scipis::PathPattern(p));
        EXPECT_TRUE(got) << p;
        if (!got) continue;
        EXPECT_TRUE(std::adjacent_find(got->begin(), got->end(), std::greater_equal<>()) == got->end());
        EXPECT_TRUE(got->empty() || got->back() < index.records());
        d.answers.push_back(*got);
      } catch (const scipis::Error& e) {
        expect_corrupt(e);
        d.answers.push_back(std::nullopt);
      }
    }
  } catch (const scipis::Error& e) {
    expect_corrupt(e);
    d.open_failed = true;
  }
  return d;
}

// A small file whose lists run over several blocks, and patterns that
// read every list: each trigram, and some of several runs.
struct Subject {
  std::string file;
  std::vector<std::string> patterns{"/ab", "*b/a*", "/ab?/b", "[ab]/ab*", "/\xc3\xa9", "a/b/"};
  size_t lists = 0;  // where they start
  Subject() {
    std::mt19937 rng(99);
    file = build(random_paths(rng, 1000, kSmall, 20));
    const auto* u = reinterpret_cast<const unsigned char*>(file.data());
    lists = scipis::kHeaderSize + size_t{scipis::get_u32(u + 12)} * scipis::kTrigramEntry;
    for (size_t e = scipis::kHeaderSize; e < lists; e += scipis::kTrigramEntry) {
      const uint32_t t = scipis::get_u32(u + e);
      patterns.push_back({static_cast<char>(t >> 16), static_cast<char>(t >> 8), static_cast<char>(t)});
    }
  }
};

}  // namespace

// Plain damage is caught by a checksum: at open for the header and the
// table, when a list is read for the lists; answers never change.
TEST(PathTrigrams, EveryFlipAndTruncationIsCaught) {
  const Subject s;
  const Damaged clean = ask(s.file, s.patterns);
  ASSERT_FALSE(clean.open_failed);
  uint32_t longest = 0;
  for (size_t e = scipis::kHeaderSize + 4; e < s.lists; e += scipis::kTrigramEntry)
    longest = std::max(longest, scipis::get_u32(reinterpret_cast<const unsigned char*>(s.file.data()) + e));
  ASSERT_GT(longest, 2 * scipis::kTrigramBlock);
  for (size_t at = 0; at < s.file.size(); at++)
    for (const unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string f = s.file;
      f[at] = static_cast<char>(f[at] ^ mask);
      const Damaged d = ask(f, s.patterns);
      if (at < s.lists) {
        EXPECT_TRUE(d.open_failed) << "byte " << at;
        continue;
      }
      ASSERT_FALSE(d.open_failed);
      for (size_t i = 0; i < d.answers.size(); i++) {
        EXPECT_TRUE(!d.answers[i] || d.answers[i] == clean.answers[i]) << "byte " << at;
      }
      EXPECT_NE(d.answers, clean.answers) << "byte " << at;
    }
  for (size_t len = 0; len < s.file.size(); len++)
    EXPECT_TRUE(ask(s.file.substr(0, len), s.patterns).open_failed) << len;
  EXPECT_TRUE(ask(s.file + '\0', s.patterns).open_failed);
}

// Damage behind valid checksums (as a faulty writer would leave): the
// structure's own bounds hold, whatever the bytes say.
TEST(PathTrigrams, DamageBehindValidChecksums) {
  const Subject s;
  const auto* u = reinterpret_cast<const unsigned char*>(s.file.data());
  auto reseal = [&](std::string& f, size_t at) {
    auto* p = reinterpret_cast<unsigned char*>(f.data());
    if (at >= s.lists) {
      // The list holding byte at, by the undamaged table.
      uint64_t start = 0;
      for (size_t e = scipis::kHeaderSize;; e += scipis::kTrigramEntry) {
        const uint64_t end = scipis::get_u64(u + e + 8);
        if (at < s.lists + end) {
          if (at < s.lists + end - 4)
            scipis::write_u32(f.data() + s.lists + end - 4, scipis::crc32c(p + s.lists + start, end - start - 4));
          return;
        }
        start = end;
      }
    }
    if (at >= scipis::kHeaderSize)
      scipis::write_u32(f.data() + 24, scipis::crc32c(p + scipis::kHeaderSize, s.lists - scipis::kHeaderSize));
    scipis::write_u32(f.data() + 28, scipis::crc32c(p, 28));
  };
  size_t errors = 0, answers = 0;
  for (size_t at = 0; at < s.file.size(); at++)
    for (const unsigned char mask : {0x01, 0x02, 0x10, 0x80, 0xff}) {
      std::string f = s.file;
      f[at] = static_cast<char>(f[at] ^ mask);
      reseal(f, at);
      const Damaged d = ask(f, s.patterns);
      const size_t failed = static_cast<size_t>(std::count(d.answers.begin(), d.answers.end(), std::nullopt));
      errors += d.open_failed + failed;
      answers += d.answers.size() - failed;
    }
  EXPECT_GT(errors, 0u);
  EXPECT_GT(answers, 0u);
  printf("damage behind valid checksums: %zu errors, %zu answers within bounds\n", errors, answers);
}

// Build speed and size on a million paths of a crawl's shape; run by hand:
// engine_tests --gtest_also_run_disabled_tests --gtest_filter=*Speed*
TEST(PathTrigrams, DISABLED_BuildSpeed) {
  std::string bytes;
  std::vector<uint32_t> lens;
  for (uint32_t i = 0; i < 1000000; i++) {
    char b[64];
    const int n = snprintf(b, sizeof b, "/data/p%02u/job%05u/out%07u.log", i / 100000, i / 100, i);
    bytes.append(b, static_cast<size_t>(n));
    lens.push_back(static_cast<uint32_t>(n));
  }
  double best = 1e9;
  std::string file;
  for (int rep = 0; rep < 5; rep++) {
    const auto t0 = std::chrono::steady_clock::now();
    file = scipis::build_path_trigrams(bytes, lens);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const scipis::PathTrigrams index("speed.pt", file);
  printf("1M paths (%zu bytes): build %.3f s, %.0f ns/path; file %zu bytes, %.2f bytes/path, %zu trigrams\n",
         bytes.size(), best, best * 1e3, file.size(), double(file.size()) / 1e6, index.trigrams());
}
