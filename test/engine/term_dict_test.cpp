// The format 5 dictionary: groups coded with per-split Huffman codes come
// back exactly for every kind of term and edge value, code lengths stay
// within kMaxCodeBits, and damaged tables, groups or whole split files
// (checksums recomputed, so that only the structure can catch it) are
// errors, never crashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "index/segment_format.h"
#include "index/segment_reader.h"
#include "index/term_dict.h"
#include "index/tfidf_index.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "test_util.h"

namespace {

struct Entry {
  std::string term;
  uint64_t code, x;
};

// Encodes the entries (sorted, distinct) as one split's groups; returns
// tables then the groups, and each group's byte range.
std::string encode(const std::vector<Entry>& es, std::vector<std::pair<size_t, size_t>>& groups) {
  scipis::DictEncoder enc;
  enc.reset(es.size(), 0);
  for (size_t i = 0; i < es.size(); i++) enc.add(es[i].term, i % scipis::kTermGroup == 0, es[i].code, es[i].x);
  size_t bytes = 0;
  for (const auto& e : es) bytes += e.term.size();
  std::string out(scipis::kCodeTableBytes + scipis::DictEncoder::bound(es.size(), bytes), '\0');
  char* w = enc.finish_counts(out.data());
  groups.clear();
  for (size_t g = 0; g * scipis::kTermGroup < es.size(); g++) {
    char* end = enc.encode_group(w, std::min(scipis::kTermGroup, es.size() - g * scipis::kTermGroup));
    groups.push_back({static_cast<size_t>(w - out.data()), static_cast<size_t>(end - out.data())});
    w = end;
  }
  out.resize(static_cast<size_t>(w - out.data()));
  return out;
}

void round_trip(std::vector<Entry> es, const std::string& what) {
  std::sort(es.begin(), es.end(), [](const Entry& a, const Entry& b) { return a.term < b.term; });
  es.erase(std::unique(es.begin(), es.end(), [](const Entry& a, const Entry& b) { return a.term == b.term; }),
           es.end());
  std::vector<std::pair<size_t, size_t>> groups;
  const std::string bytes = encode(es, groups);
  scipis::DictDecoder dec;
  ASSERT_TRUE(dec.load(bytes.data())) << what;
  for (size_t g = 0; g < groups.size(); g++) {
    scipis::DictDecoder::Reader in(dec, bytes.data() + groups[g].first, bytes.data() + groups[g].second);
    char term[scipis::kMaxTermBytes];
    size_t len = 0;
    for (size_t i = g * scipis::kTermGroup; i < std::min(es.size(), (g + 1) * scipis::kTermGroup); i++) {
      scipis::DictEntry e;
      ASSERT_TRUE(in.next(term, len, e)) << what << " entry " << i;
      ASSERT_EQ(std::string(term, len), es[i].term) << what;
      ASSERT_EQ(e.code, es[i].code) << what;
      ASSERT_EQ(e.x, es[i].x) << what;
    }
    EXPECT_TRUE(in.at_end()) << what << " group " << g;
  }
}

std::string random_term(std::mt19937_64& rng, const std::string& alphabet, size_t max_len) {
  std::string t(1 + rng() % max_len, ' ');
  for (char& c : t) c = alphabet[rng() % alphabet.size()];
  return t;
}

}  // namespace

TEST(TermDict, EveryKindOfTermRoundTrips) {
  std::mt19937_64 rng(17);
  const std::string digits = "0123456789", hex = "0123456789abcdef",
                    ident = "abcdefghijklmnopqrstuvwxyz_0123456789";
  std::string high;
  for (int c = 0x80; c < 0x100; c++) high += static_cast<char>(c);
  std::string any;
  for (int c = 1; c < 0x100; c++) any += static_cast<char>(c);
  for (const std::string* alpha : std::vector<const std::string*>{&digits, &hex, &ident, &high, &any}) {
    for (size_t n : {size_t{1}, size_t{2}, scipis::kTermGroup - 1, scipis::kTermGroup,
                     scipis::kTermGroup + 1, size_t{1000}}) {
      std::vector<Entry> es;
      for (size_t i = 0; i < n; i++) {
        const uint64_t df = 1 + rng() % 300;
        es.push_back({random_term(rng, *alpha, i % 7 ? 20 : 255),
                      df == 1 ? (uint64_t{1 + rng() % 5} << 1 | 1) : df << 1, rng() % 100000});
      }
      round_trip(es, "alphabet of " + std::to_string(alpha->size()) + ", n=" + std::to_string(n));
    }
  }
}

TEST(TermDict, EdgeValuesRoundTrip) {
  // Terms of 1 and 255 bytes, one a prefix of the next, bytes 0x01 and
  // 0xff; tf and df at 2^32 - 1; seqs and region lengths from 0 to
  // near 2^64.
  std::vector<Entry> es = {
      {"a", uint64_t{UINT32_MAX} << 1 | 1, 0},
      {"ab", uint64_t{UINT32_MAX} << 1, 1},
      {"abc", 3, UINT64_MAX - 1},
      {std::string(255, 'z'), 2 << 1, uint64_t{1} << 40},
      {std::string(254, 'z'), 5, 127},
      {"\x01", 3, 128},
      {std::string(255, '\xff'), 3, 16383},
      {"\xff", 3, 16384},
  };
  round_trip(es, "edge values");
  // Every entry alike: one symbol in most contexts.
  std::vector<Entry> same;
  for (int i = 0; i < 100; i++) same.push_back({"t" + std::to_string(1000 + i), 3, 7});
  round_trip(same, "one symbol per context");
}

TEST(TermDict, SkewedCountsStayWithinTheLengthLimit) {
  // Fibonacci counts make a Huffman tree as deep as there are symbols;
  // the codes must still fit kMaxCodeBits and round-trip.
  std::vector<Entry> es;
  uint64_t a = 1, b = 1;
  int c = 0;
  for (int sym = 0; sym < 30 && es.size() < 400000; sym++) {
    for (uint64_t k = 0; k < a && es.size() < 400000; k++) {
      std::string t = std::string(1, static_cast<char>('!' + sym)) + std::to_string(c++);
      es.push_back({t, 3, static_cast<uint64_t>(sym)});
    }
    const uint64_t n = a + b;
    a = b;
    b = n;
  }
  round_trip(es, "skewed");
}

TEST(TermDict, GarbageIsRefusedNotACrash) {
  std::mt19937_64 rng(23);
  std::vector<Entry> es;
  for (int i = 0; i < 300; i++) es.push_back({random_term(rng, "0123456789abcdef_xyz", 30), 3, rng() % 5000});
  std::sort(es.begin(), es.end(), [](const Entry& a, const Entry& b) { return a.term < b.term; });
  es.erase(std::unique(es.begin(), es.end(), [](const Entry& a, const Entry& b) { return a.term == b.term; }),
           es.end());
  std::vector<std::pair<size_t, size_t>> groups;
  const std::string good = encode(es, groups);
  int refused = 0;
  for (int trial = 0; trial < 20000; trial++) {
    std::string bad = good;
    const size_t flips = 1 + rng() % 4;
    for (size_t f = 0; f < flips; f++) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    scipis::DictDecoder dec;
    if (!dec.load(bad.data())) {
      refused++;
      continue;
    }
    const auto& g = groups[rng() % groups.size()];
    // Cut short sometimes too.
    const size_t end = rng() % 4 ? g.second : g.first + rng() % (g.second - g.first + 1);
    scipis::DictDecoder::Reader in(dec, bad.data() + g.first, bad.data() + end);
    char term[scipis::kMaxTermBytes] = {};
    size_t len = 0;
    for (size_t i = 0; i < scipis::kTermGroup; i++) {
      scipis::DictEntry e;
      if (!in.next(term, len, e)) {
        refused++;
        break;
      }
      ASSERT_GE(len, 1u);
      ASSERT_LE(len, scipis::kMaxTermBytes);
    }
  }
  EXPECT_GT(refused, 1000);
}

// A whole split file with bytes changed and its checksums recomputed:
// the reader's structural checks must catch what the checksum no longer
// does, or read terms that are at least well formed.
TEST(TermDict, DamagedSplitWithValidChecksumsIsAnError) {
  std::mt19937_64 rng(29);
  scipis::TfIdfIndex tf(1 << 20, 2);
  for (uint64_t doc = 0; doc < 60; doc++) {
    for (int w = 0; w < 80; w++) {
      const std::string t = w % 3 ? "w" + std::to_string(rng() % 400) : std::to_string(rng());
      tf.add(scipis::TermKey::of(t), doc, 1 + static_cast<uint32_t>(rng() % 3));
    }
  }
  scipis::OutBuffer data;
  std::vector<scipis::OutBuffer> metas;
  tf.serialise(1, data, metas);
  const std::string good(metas[0].view());
  scipis::TfMeta ok("m", good);
  ASSERT_GT(ok.size(), 500u);
  int errors = 0, read = 0;
  for (int trial = 0; trial < 800; trial++) {
    std::string bad = good;
    const size_t at = scipis::kHeaderSize + rng() % (bad.size() - scipis::kHeaderSize);
    bad[at] ^= static_cast<char>(1 + rng() % 255);
    const uint32_t body = scipis::crc32c(bad.data() + scipis::kHeaderSize, bad.size() - scipis::kHeaderSize);
    for (int i = 0; i < 4; i++) bad[24 + i] = static_cast<char>(body >> (8 * i));
    const uint32_t head = scipis::crc32c(bad.data(), 28);
    for (int i = 0; i < 4; i++) bad[28 + i] = static_cast<char>(head >> (8 * i));
    try {
      scipis::TfMeta m("m", bad);
      for (const auto& [t, r] : m.all()) {
        ASSERT_FALSE(t.empty());
        ASSERT_LE(t.size(), scipis::kMaxTermBytes);
        (void)m.find(t);
      }
      read++;
    } catch (const scipis::Error& e) {
      EXPECT_NE(std::string(e.what()).find("m"), std::string::npos);
      errors++;
    }
  }
  EXPECT_GT(errors, 250);
  std::printf("damaged splits: %d errors, %d read (a changed seq, tf or length)\n", errors, read);
}

// Code lengths against a textbook Huffman (a heap of subtree weights; a
// code's cost is the sum of its merges): every used symbol gets a length
// within kMaxCodeBits and no unused one does, the lengths fill the code
// space exactly (Kraft sum 1), and where the textbook code needs no more
// than kMaxCodeBits the cost is the same (optimal); ties, one symbol, two,
// all 256, weights up to 2^32-1, and skews that need the length limit.
TEST(TermDict, CodeLengthsAreOptimalAndComplete) {
  std::mt19937_64 rng(5);
  auto textbook_cost = [](const uint32_t* f, int& deepest) {
    std::vector<std::pair<uint64_t, int>> heap;  // weight, depth of its deepest leaf
    uint64_t cost = 0;
    for (int s = 0; s < 256; s++)
      if (f[s]) heap.push_back({f[s], 0});
    auto greater = [](const auto& x, const auto& y) { return x > y; };
    std::make_heap(heap.begin(), heap.end(), greater);
    deepest = heap.size() == 1 ? 1 : 0;
    if (heap.size() == 1) return uint64_t{heap[0].first};
    while (heap.size() > 1) {
      std::pop_heap(heap.begin(), heap.end(), greater);
      const auto a = heap.back();
      heap.pop_back();
      std::pop_heap(heap.begin(), heap.end(), greater);
      const auto b = heap.back();
      heap.pop_back();
      cost += a.first + b.first;
      heap.push_back({a.first + b.first, std::max(a.second, b.second) + 1});
      std::push_heap(heap.begin(), heap.end(), greater);
    }
    if (!heap.empty()) deepest = std::max(deepest, heap[0].second);
    return cost;
  };
  int optimal_checked = 0;
  for (int t = 0; t < 3000; t++) {
    uint32_t f[256] = {};
    const int kind = t % 6;
    const int used = kind == 0 ? 1 : kind == 1 ? 2 : kind == 2 ? 256 : 1 + static_cast<int>(rng() % 256);
    for (int i = 0; i < used; i++) {
      const int s = kind == 2 ? i : static_cast<int>(rng() % 256);
      switch (kind) {
        case 3: f[s] = 7; break;  // ties
        case 4: f[s] = static_cast<uint32_t>(uint64_t{1} << (rng() % 32)); break;  // skewed: deep codes
        case 5: f[s] = rng() % 2 ? UINT32_MAX : static_cast<uint32_t>(1 + rng() % 3); break;
        default: f[s] = static_cast<uint32_t>(1 + rng() % 1000); break;
      }
    }
    uint8_t len[256];
    scipis::code_lengths(f, len);
    double kraft = 0;
    int symbols = 0;
    uint64_t cost = 0;
    for (int s = 0; s < 256; s++) {
      ASSERT_EQ(f[s] == 0, len[s] == 0) << t << " symbol " << s;
      ASSERT_LE(len[s], scipis::kMaxCodeBits) << t;
      if (len[s]) {
        kraft += std::ldexp(1.0, -len[s]);
        symbols++;
        cost += uint64_t{f[s]} * len[s];
      }
    }
    if (symbols > 1) {
      EXPECT_DOUBLE_EQ(kraft, 1.0) << t;
    }
    int deepest = 0;
    const uint64_t best = textbook_cost(f, deepest);
    if (deepest <= scipis::kMaxCodeBits) {
      EXPECT_EQ(cost, best) << t;
      optimal_checked++;
    }
  }
  EXPECT_GT(optimal_checked, 2000);
}

// A byte of a group's coded entries flipped: every lookup that reads the
// group fails on its checksum (the reader remembers groups that matched
// by a bit each, never one that did not), and every other lookup answers
// as the undamaged split does.
TEST(TermDict, FlippedGroupBytesFailTheirChecksum) {
  std::mt19937_64 rng(31);
  scipis::TfIdfIndex tf(1 << 20, 2);
  for (uint64_t doc = 0; doc < 40; doc++)
    for (int w = 0; w < 60; w++)
      tf.add(scipis::TermKey::of(w % 3 ? "w" + std::to_string(rng() % 300) : std::to_string(rng() % 100000)), doc, 1);
  scipis::OutBuffer data;
  std::vector<scipis::OutBuffer> metas;
  tf.serialise(1, data, metas);
  const std::string good(metas[0].view());
  const scipis::TfMeta ok("m", good);
  const auto all = ok.all();
  ASSERT_GT(all.size(), 500u);
  // Header, head (base, groups, entries' bytes, hot counts), code tables,
  // group index and its chunks' crcs, then the coded entries.
  const auto* body = reinterpret_cast<const unsigned char*>(good.data()) + scipis::kHeaderSize;
  const size_t groups = scipis::get_u32(body + 8);
  const size_t entries_bytes = scipis::get_u64(body + 12);
  const size_t entries = scipis::kHeaderSize + scipis::kTfMetaHead + scipis::kCodeTableBytes +
                         groups * scipis::kTermGroupEntry +
                         4 * ((groups + scipis::kIndexChunk - 1) / scipis::kIndexChunk);
  ASSERT_LE(entries + entries_bytes, good.size());
  size_t flips = 0;
  for (size_t at = entries; at < entries + entries_bytes; at += testutil::kSanitized ? 37 : 7, flips++) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ (1 << (at % 8)));
    const scipis::TfMeta m("m.damaged", bad);
    size_t failed = 0;
    for (int pass = 0; pass < 2; pass++) {
      for (const auto& [t, want] : all) {
        try {
          const auto got = m.find(t);
          ASSERT_TRUE(got.has_value()) << t << " byte " << at;
          ASSERT_EQ(got->df, want.df) << t << " byte " << at;
          ASSERT_EQ(got->len, want.len) << t << " byte " << at;
          ASSERT_EQ(got->seq, want.seq) << t << " byte " << at;
          ASSERT_EQ(got->tf, want.tf) << t << " byte " << at;
          ASSERT_EQ(got->offset, want.offset) << t << " byte " << at;
        } catch (const scipis::Error& e) {
          ASSERT_NE(std::string(e.what()).find("checksum mismatch in term group"), std::string::npos) << e.what();
          ASSERT_NE(std::string(e.what()).find("m.damaged"), std::string::npos) << e.what();
          failed++;
        }
      }
    }
    // Each pass reads the damaged group at least once.
    ASSERT_GE(failed, 2u) << "byte " << at;
  }
  EXPECT_GT(flips, 20u);
}

// Whether an entry sorts after the one before it, and the bytes they
// share, as a reader reports them (the order check and a lookup's
// comparisons rest on both), against std::string's own compare: entries
// noted in any order, ascending or not, prefixes of each other, bytes
// past 0x7f.
TEST(TermDict, EntriesKnowTheirOrderWithoutComparing) {
  std::mt19937_64 rng(41);
  const std::string alpha = "ab\x7f\x80\xff";
  for (int trial = 0; trial < 200; trial++) {
    std::vector<Entry> es;
    for (size_t i = 0; i < 3 * scipis::kTermGroup; i++) {
      // Often a neighbour of the entry before it: a prefix, an extension,
      // one byte changed.
      std::string t = random_term(rng, alpha, 6);
      if (!es.empty() && rng() % 2) {
        t = es.back().term;
        switch (rng() % 3) {
          case 0: t.resize(1 + rng() % t.size()); break;
          case 1: t += alpha[rng() % alpha.size()]; break;
          default: t[rng() % t.size()] = alpha[rng() % alpha.size()];
        }
      }
      es.push_back({t, 4, rng() % 1000});
    }
    std::vector<std::pair<size_t, size_t>> groups;
    const std::string bytes = encode(es, groups);
    scipis::DictDecoder dec;
    ASSERT_TRUE(dec.load(bytes.data()));
    for (size_t g = 0; g < groups.size(); g++) {
      scipis::DictDecoder::Reader in(dec, bytes.data() + groups[g].first, bytes.data() + groups[g].second);
      char term[scipis::kMaxTermBytes];
      size_t len = 0;
      for (size_t i = g * scipis::kTermGroup; i < (g + 1) * scipis::kTermGroup; i++) {
        scipis::DictEntry e;
        ASSERT_TRUE(in.next(term, len, e));
        ASSERT_EQ(std::string(term, len), es[i].term);
        const bool first = i % scipis::kTermGroup == 0;
        const std::string& prev = first ? std::string() : es[i - 1].term;
        size_t common = 0;
        while (common < prev.size() && common < es[i].term.size() && prev[common] == es[i].term[common]) common++;
        EXPECT_EQ(e.shared, common) << trial << " entry " << i;
        EXPECT_EQ(e.after, first || es[i].term > prev) << trial << " entry " << i;
      }
    }
  }
}
