// Posting regions (small and large): every list written comes back
// exactly, at the encoders' edge values, and a large region's skip entries
// bound every block.
#include <gtest/gtest.h>
#include <algorithm>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "index/postings_codec.h"

namespace {

using scipis::kBlockPostings;

std::string encode(const std::vector<uint64_t>& seqs, const std::vector<uint32_t>& tfs,
                   const std::vector<uint64_t>& lens, uint64_t base) {
  std::string out(scipis::max_region_bytes(seqs.size()), '\0');
  char* end = seqs.size() <= scipis::kSmallRegion
                  ? scipis::write_small_region(out.data(), seqs.data(), tfs.data(), seqs.size(), base)
                  : scipis::write_region(out.data(), seqs.data(), tfs.data(), seqs.size(), base,
                                         [&](uint64_t seq) {
                                           for (size_t i = 0; i < seqs.size(); i++)
                                             if (seqs[i] == seq) return lens[i];
                                           return uint64_t{0};
                                         });
  out.resize(static_cast<size_t>(end - out.data()));
  return out;
}

void round_trip(const std::vector<uint64_t>& seqs, const std::vector<uint32_t>& tfs,
                const std::vector<uint64_t>& lens, const std::string& what, uint64_t base = 0) {
  const std::string region = encode(seqs, tfs, lens, base);
  const uint64_t limit = seqs.back() + 1;
  const bool small = seqs.size() <= scipis::kSmallRegion;
  scipis::RegionReader r("test", region, seqs.size(), base, limit);
  ASSERT_EQ(r.blocks().size(), (seqs.size() + kBlockPostings - 1) / kBlockPostings) << what;
  size_t at = 0;
  uint64_t s[kBlockPostings];
  uint32_t t[kBlockPostings];
  for (size_t b = 0; b < r.blocks().size(); b++) {
    const auto& k = r.blocks()[b];
    r.decode(b, s, t);
    uint32_t max_tf = 0;
    uint64_t min_len = UINT64_MAX;
    // The block's best tf / length: no posting's is larger, one's is equal
    // (fractions compared exactly, cross-multiplied).
    bool attained = false;
    auto cmp = [&](uint64_t tf, uint64_t len) {
      const unsigned __int128 a = static_cast<unsigned __int128>(tf) * k.best_len,
                              b = static_cast<unsigned __int128>(k.best_tf) * len;
      return a < b ? -1 : a > b ? 1 : 0;
    };
    for (uint32_t i = 0; i < k.count; i++, at++) {
      ASSERT_EQ(s[i], seqs[at]) << what << " posting " << at;
      ASSERT_EQ(t[i], tfs[at]) << what << " posting " << at;
      max_tf = std::max(max_tf, t[i]);
      const uint64_t len = lens[at] ? std::max<uint64_t>(lens[at], tfs[at]) : 0;
      min_len = std::min(min_len, len);
      if (len && k.best_len) {
        EXPECT_LE(cmp(tfs[at], len), 0) << what << " posting " << at;
        attained |= cmp(tfs[at], len) == 0;
      }
    }
    EXPECT_EQ(k.last_seq, s[k.count - 1]) << what;
    EXPECT_EQ(k.max_tf, max_tf) << what;
    // A small region's bounds are its largest tf alone.
    EXPECT_EQ(k.min_len, small ? 0 : min_len) << what;
    if (small || min_len == 0) {
      EXPECT_EQ(k.best_tf, 0u) << what;
      EXPECT_EQ(k.best_len, 0u) << what;
    } else {
      EXPECT_TRUE(attained) << what;
    }
  }
  EXPECT_EQ(at, seqs.size()) << what;
}

}  // namespace

TEST(PostingsCodec, EdgeValuesRoundTrip) {
  // Two postings; one block less one, exactly, plus one; gaps of 2^32 - 1
  // and beyond; tf past 2^16 and at 2^32 - 1; document 0 first.
  round_trip({0, 1}, {1, 1}, {1, 1}, "two postings");
  round_trip({5, 6}, {1, 1}, {1, 1}, "two postings from base 5", 5);
  round_trip({(uint64_t{1} << 40) + 9, (uint64_t{1} << 41)}, {3, 1}, {1, 1}, "far base",
             uint64_t{1} << 40);
  {
    // Consecutive documents, tf 1: gaps and tfs take no bits.
    std::vector<uint64_t> seqs, lens;
    std::vector<uint32_t> tfs;
    for (uint64_t i = 0; i < 100000; i++) {
      seqs.push_back(i);
      tfs.push_back(1);
      lens.push_back(3);
    }
    round_trip(seqs, tfs, lens, "zero-width blocks");
  }
  round_trip({0, 4294967295ull}, {70000, 4294967295u}, {70000, 5000000000ull}, "wide gap, wide tf");
  round_trip({7, (uint64_t{1} << 40) + 7}, {1, 2}, {0, 9}, "gap past 32 bits, unknown length");
  for (size_t n : {kBlockPostings - 1, kBlockPostings, kBlockPostings + 1, 5 * kBlockPostings + 3}) {
    std::vector<uint64_t> seqs, lens;
    std::vector<uint32_t> tfs;
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
      s += i % 17 == 0 ? 4294967295ull : 1 + i % 5;
      seqs.push_back(s);
      tfs.push_back(i % 31 == 0 ? 65537u : 1);
      lens.push_back(i % 7 == 0 ? 0 : 100000 + i);
    }
    round_trip(seqs, tfs, lens, "n=" + std::to_string(n));
    round_trip(seqs, tfs, lens, "n=" + std::to_string(n) + " from base", seqs[0]);
  }
}

TEST(PostingsCodec, RandomListsRoundTrip) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; trial++) {
    const size_t n = 2 + rng() % 700;
    std::vector<uint64_t> seqs, lens;
    std::vector<uint32_t> tfs;
    uint64_t s = rng() % 3;
    const unsigned gap_bits = 1 + static_cast<unsigned>(rng() % 40);
    for (size_t i = 0; i < n; i++) {
      if (i) s += 1 + (rng() & ((uint64_t{1} << gap_bits) - 1));
      seqs.push_back(s);
      tfs.push_back(1 + static_cast<uint32_t>(rng() % (trial % 3 ? 3 : 100000)));
      lens.push_back(rng() % 10 ? 1 + rng() % 1000000 : 0);
    }
    round_trip(seqs, tfs, lens, "trial " + std::to_string(trial), trial % 2 ? seqs[0] : 0);
  }
}

TEST(PostingsCodec, DamageIsAnErrorNotACrash) {
  std::vector<uint64_t> seqs, lens;
  std::vector<uint32_t> tfs;
  for (uint64_t i = 0; i < 300; i++) {
    seqs.push_back(i * 3);
    tfs.push_back(1 + i % 4);
    lens.push_back(10);
  }
  const std::string good = encode(seqs, tfs, lens, 0);
  for (size_t at = 0; at < good.size(); at++) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    try {
      scipis::RegionReader r("test", bad, seqs.size(), 0, 1000);
      uint64_t s[kBlockPostings];
      uint32_t t[kBlockPostings];
      for (size_t b = 0; b < r.blocks().size(); b++) r.decode(b, s, t);
      ADD_FAILURE() << "a flipped byte at " << at << " went unnoticed";
    } catch (const std::exception&) {
    }
  }
}

// A small region has no crc of its own (its group span's covers it): any
// bytes at all decode to postings inside [base, limit) or fail cleanly.
TEST(PostingsCodec, SmallRegionGarbageStaysInBounds) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20000; trial++) {
    std::string bytes(1 + rng() % 40, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 4 ? rng() % 8 : rng());
    const uint64_t df = 2 + rng() % (scipis::kSmallRegion - 1);
    const uint64_t base = rng() % 50, limit = base + rng() % 300;
    try {
      scipis::RegionReader r("test", bytes, df, base, limit);
      uint64_t s[kBlockPostings];
      uint32_t t[kBlockPostings];
      r.decode(0, s, t);
      for (uint64_t i = 0; i < df; i++) {
        ASSERT_GE(s[i], base);
        ASSERT_LT(s[i], limit);
        ASSERT_GE(t[i], 1u);
        if (i) {
          ASSERT_GT(s[i], s[i - 1]);
        }
      }
      ASSERT_EQ(r.blocks()[0].last_seq, s[df - 1]);
    } catch (const std::exception&) {
    }
  }
}

// Bit packing at every width, for counts around the word loads' reach:
// each input is exactly its packed bytes in a buffer of its own (an
// overread is an ASan error), then with bytes after it that must be left.
TEST(PostingsCodec, BitPackingRoundTripsAtEveryWidth) {
  std::mt19937_64 rng(5);
  for (unsigned w = 0; w <= 64; w++) {
    for (size_t n : {0, 1, 2, 3, 7, 8, 9, 15, 63, 64, 65, 127, 128}) {
      std::vector<uint64_t> v(n);
      const uint64_t mask = w == 64 ? UINT64_MAX : (uint64_t{1} << w) - 1;
      for (auto& x : v) x = rng() & mask;
      if (n) v[0] = mask;  // the widest value
      const size_t bytes = scipis::packed_bytes(n, w);
      for (size_t slack : {0, 5}) {
        std::vector<char> buf(bytes + slack, '\x5a');
        char* end = scipis::pack_bits(buf.data(), v.data(), n, w);
        ASSERT_EQ(static_cast<size_t>(end - buf.data()), bytes) << "w " << w << " n " << n;
        std::vector<uint64_t> got(n + 1, 7);
        const char* in = buf.data();
        ASSERT_TRUE(scipis::unpack_bits(in, buf.data() + buf.size(), got.data(), n, w));
        EXPECT_EQ(static_cast<size_t>(in - buf.data()), bytes) << "w " << w << " n " << n;
        EXPECT_EQ(got.back(), 7u) << "wrote past n";
        got.pop_back();
        EXPECT_EQ(got, v) << "w " << w << " n " << n << " slack " << slack;
        if (bytes) {
          in = buf.data();
          EXPECT_FALSE(scipis::unpack_bits(in, buf.data() + bytes - 1, got.data(), n, w));
        }
      }
    }
  }
}

// The packed bytes are the values' bits in order, least significant
// first: checked against a bit-at-a-time packing, at every width and for
// counts on both sides of whole words, with nothing written past them.
TEST(PostingsCodec, BitPackingIsTheBitStream) {
  std::mt19937_64 rng(11);
  for (unsigned w = 1; w <= 64; w++) {
    for (size_t n : {1, 2, 7, 8, 9, 31, 63, 64, 65, 127, 128, 129, 300}) {
      const uint64_t mask = w == 64 ? UINT64_MAX : (uint64_t{1} << w) - 1;
      std::vector<uint64_t> v(n);
      for (auto& x : v) x = rng() & (rng() % 2 ? mask : mask >> (rng() % w));
      std::vector<unsigned char> want(scipis::packed_bytes(n, w), 0);
      size_t bit = 0;
      for (uint64_t x : v)
        for (unsigned b = 0; b < w; b++, bit++)
          if (x >> b & 1) want[bit / 8] = static_cast<unsigned char>(want[bit / 8] | 1u << (bit % 8));
      std::vector<unsigned char> got(want.size() + 16, 0xa5);
      char* end = scipis::pack_bits(reinterpret_cast<char*>(got.data()), v.data(), n, w);
      ASSERT_EQ(static_cast<size_t>(end - reinterpret_cast<char*>(got.data())), want.size()) << "w " << w << " n " << n;
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin())) << "w " << w << " n " << n;
      EXPECT_TRUE(std::all_of(got.begin() + static_cast<ptrdiff_t>(want.size()), got.end(),
                              [](unsigned char c) { return c == 0xa5; }))
          << "wrote past the end, w " << w << " n " << n;
    }
  }
}

// A large region read in pieces: every prefix too short for the skip list
// asks for more, every longer one gives the whole region's blocks, each
// decoding from its own payload; a damaged prefix is still an error.
TEST(PostingsCodec, PrefixReaderMatchesTheWholeRegion) {
  std::vector<uint64_t> seqs, lens;
  std::vector<uint32_t> tfs;
  for (uint64_t i = 0; i < 5 * kBlockPostings + 17; i++) {
    seqs.push_back(i * 7 + i % 3);
    tfs.push_back(1 + static_cast<uint32_t>(i % 9));
    lens.push_back(20 + i % 50);
  }
  const std::string region = encode(seqs, tfs, lens, 0);
  const uint64_t limit = seqs.back() + 1;
  scipis::RegionReader whole("test", region, seqs.size(), 0, limit);
  size_t first_ok = region.size();
  for (size_t n = 0; n <= region.size(); n++) {
    auto r = scipis::RegionReader::from_prefix("test", std::string_view(region.data(), n), region.size(),
                                               seqs.size(), 0, limit);
    if (!r) {
      EXPECT_LT(n, first_ok) << "a longer prefix than one that sufficed asks for more";
      continue;
    }
    first_ok = std::min(first_ok, n);
    ASSERT_EQ(r->blocks().size(), whole.blocks().size());
    for (size_t b = 0; b < whole.blocks().size(); b++) {
      const auto& k = r->blocks()[b];
      EXPECT_EQ(k.offset, whole.blocks()[b].offset);
      EXPECT_EQ(k.last_seq, whole.blocks()[b].last_seq);
      uint64_t s1[kBlockPostings], s2[kBlockPostings];
      uint32_t t1[kBlockPostings], t2[kBlockPostings];
      whole.decode(b, s1, t1);
      r->decode_payload(b, region.data() + k.offset, s2, t2);
      for (uint32_t i = 0; i < k.count; i++) {
        ASSERT_EQ(s1[i], s2[i]);
        ASSERT_EQ(t1[i], t2[i]);
      }
    }
  }
  // The skip list takes a few bytes a block, far less than the payloads.
  EXPECT_LT(first_ok, region.size() / 4);
  std::string bad = region;
  bad[first_ok / 2] = static_cast<char>(bad[first_ok / 2] ^ 0x21);
  // Damage may look like a longer skip list (more is asked for) but is
  // an error once the prefix reaches it all.
  bool thrown = false;
  for (size_t n = first_ok; n <= bad.size() && !thrown; n++) {
    try {
      EXPECT_EQ(scipis::RegionReader::from_prefix("test", std::string_view(bad.data(), n), bad.size(),
                                                  seqs.size(), 0, limit),
                nullptr);
    } catch (const std::exception&) {
      thrown = true;
    }
  }
  EXPECT_TRUE(thrown);
}

// Readers take their block arrays from those of readers gone before them
// (BlockList): however lists of every size come and go, in any order, each
// reader holds its own region's blocks and nothing of another's.
TEST(PostingsCodec, ReusedBlockArraysHoldOnlyTheirRegion) {
  std::mt19937_64 rng(4);
  struct Live {
    std::string region;
    std::vector<uint64_t> seqs;
    std::vector<uint32_t> tfs;
    std::unique_ptr<scipis::RegionReader> reader;
  };
  auto check = [](const Live& l, const std::string& what) {
    const auto& r = *l.reader;
    ASSERT_EQ(r.blocks().size(), (l.seqs.size() + kBlockPostings - 1) / kBlockPostings) << what;
    uint64_t s[kBlockPostings];
    uint32_t t[kBlockPostings];
    size_t at = 0;
    for (size_t b = 0; b < r.blocks().size(); b++) {
      r.decode(b, s, t);
      for (uint32_t i = 0; i < r.blocks()[b].count; i++, at++) {
        ASSERT_EQ(s[i], l.seqs[at]) << what;
        ASSERT_EQ(t[i], l.tfs[at]) << what;
      }
      EXPECT_EQ(r.blocks()[b].last_seq, l.seqs[at - 1]) << what;
    }
    EXPECT_EQ(at, l.seqs.size()) << what;
  };
  std::vector<std::unique_ptr<Live>> alive;
  const size_t sizes[] = {2, 40, 129, 1000, 3000, 6001};
  for (int i = 0; i < 300; i++) {
    auto l = std::make_unique<Live>();
    const size_t n = sizes[rng() % std::size(sizes)];
    std::vector<uint64_t> lens;
    uint64_t seq = rng() % 10;
    for (size_t j = 0; j < n; j++) {
      l->seqs.push_back(seq);
      l->tfs.push_back(1 + static_cast<uint32_t>(rng() % 9));
      lens.push_back(l->tfs.back() + rng() % 50);
      seq += 1 + rng() % 40;
    }
    l->region = encode(l->seqs, l->tfs, lens, 0);
    l->reader = std::make_unique<scipis::RegionReader>("test", l->region, n, 0, seq);
    check(*l, "new " + std::to_string(i));
    alive.push_back(std::move(l));
    // Gone in any order: their arrays go back for the next ones.
    while (alive.size() > 1 + rng() % 6) alive.erase(alive.begin() + static_cast<long>(rng() % alive.size()));
    for (const auto& a : alive) check(*a, "alive after " + std::to_string(i));
    if (HasFailure()) return;
  }
}
