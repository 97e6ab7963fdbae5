// Filter columns of the access method: every value comes back as written
// (NULLs, 0, 2^64-1, 64-bit ranges, common steps, part groups), and a ranked, matching or
// rest query with filters returns exactly the unfiltered answer minus the
// rows a brute-force check of the values rejects: skipping ranges by their
// groups' bounds never changes an answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "am/am_format.h"
#include "am/seg_reader.h"
#include "am/seg_writer.h"
#include "am_test_pages.h"
#include "scipis_engine.h"
#include "util/error.h"

namespace {

using scipis::am::DocEntry;
using scipis::am::Filter;
using scipis::am::Filters;
using scipis::am::PagedSegment;
using scipis::am::SegmentWriter;
using scipis::am::Vals;

constexpr uint32_t kPayload = 300;  // small pages: values cross their boundaries

using Pages = scipis::test::AmPages<kPayload>;
using Index = scipis::test::AmIndex<kPayload>;
using scipis::test::take_blob;

bool pass(const Filters& fs, const std::vector<uint64_t>& v, const std::vector<uint8_t>& nulls,
          size_t row, size_t ncols) {
  for (const Filter& f : fs) {
    const size_t at = row * ncols + f.col;
    if (nulls[at] || v[at] < f.lo || v[at] > f.hi) return false;
  }
  return true;
}

TEST(AmFilter, ValuesRoundTripAtTheirEdges) {
  std::mt19937_64 rng(11);
  const uint64_t M = UINT64_MAX;
  // 8292 rows: three runs of kValSuper groups, the last a part one.
  for (size_t n : {1, 2, 63, 64, 65, 130, 700, 8292}) {
    for (int shape = 0; shape < 7; shape++) {
      Vals vals;
      vals.ncols = 2;
      std::vector<DocEntry> docs;
      for (size_t i = 0; i < n; i++) {
        docs.push_back({(uint64_t{i / 5 + 1} << 16) | (i % 5 + 1), 3});
        uint64_t v[2];
        uint8_t nl[2];
        switch (shape) {
          case 0: v[0] = 0, v[1] = M; break;                          // constant groups
          case 1: v[0] = i % 2 ? M : 0, v[1] = i; break;              // a 64-bit range
          case 2: v[0] = rng(), v[1] = rng() >> (rng() % 64); break;  // anything
          case 3: v[0] = M - i, v[1] = (uint64_t{1} << 63) + i; break;
          case 5: v[0] = 1000000000000000 + 3000000 * (rng() % 5000), v[1] = 7 * (rng() % 100); break;
          case 6: v[0] = 1000 + 3 * i + rng() % 2, v[1] = i / 4096; break;  // following the rows
          default: v[0] = rng() % 1000, v[1] = rng() % 3; break;  // steps packed
        }
        nl[0] = shape == 4 || (shape == 5 && rng() % 4 == 0);  // every row NULL, some
        nl[1] = (shape == 2 && rng() % 7 == 0) || (shape == 6 && i < 4096 && rng() % 500 == 0);
        vals.add(v, nl);
      }
      SegmentWriter w(docs, 0, &vals);
      w.term("a", std::vector<uint32_t>{0}.data(), std::vector<uint32_t>{3}.data(), 1);
      Pages pages;
      const scipis_am_segment seg = pages.add(w.finish());
      PagedSegment s(pages.reader(), seg);
      ASSERT_EQ(s.nvals(), 2u);
      for (size_t i = 0; i < n; i++) {
        uint64_t v[2];
        uint8_t nl[2];
        s.vals(static_cast<uint32_t>(i), v, nl);
        for (int c = 0; c < 2; c++) {
          ASSERT_EQ(nl[c], vals.nulls[i * 2 + c]) << n << " " << shape << " " << i;
          if (!nl[c]) {
            ASSERT_EQ(v[c], vals.v[i * 2 + c]) << n << " " << shape << " " << i;
          }
        }
      }
      // Filters at the edges and at random, against the values themselves.
      for (int t = 0; t < 60; t++) {
        Filters fs;
        const uint32_t col = t % 2;
        uint64_t a = t < 6 ? (t % 3 == 0 ? 0 : t % 3 == 1 ? M : 1) : rng() >> (rng() % 64);
        uint64_t b = t < 6 ? (t < 3 ? M : 0) : a + (rng() >> (rng() % 64));
        if (b < a) b = M;
        if (t >= 30) {
          // Edges at a row's value next to a run's or a group's first row.
          const size_t unit = t % 2 ? scipis::am::kValGroup : scipis::am::kValGroup * scipis::am::kValSuper;
          const size_t r = std::min(n - 1, unit * (rng() % (n / unit + 1)) + rng() % 3 - std::min<size_t>(1, n - 1));
          a = vals.v[r * 2 + col] - (rng() % 3 == 0 && vals.v[r * 2 + col] > 0);
          b = t % 3 == 0 ? M : a + rng() % 4;
          if (t % 4 == 0) std::swap(a, b = vals.v[std::min(n - 1, r + rng() % 5000) * 2 + col]);
          if (b < a) std::swap(a, b);
        }
        fs.push_back({col, a, b});
        if (t % 5 == 0) fs.push_back({1 - col, 0, rng() >> 1});
        std::vector<char> want(n);
        for (size_t i = 0; i < n; i++) {
          want[i] = pass(fs, vals.v, vals.nulls, i, 2);
          ASSERT_EQ(s.passes(static_cast<uint32_t>(i), fs), want[i] != 0) << n << " " << shape << " " << t;
        }
        for (size_t lo = 0; lo < n; lo += 1 + rng() % 90) {
          const size_t hi = std::min(n - 1, lo + rng() % (lo % 2 ? 300 : 12000));
          bool any = false;
          for (size_t i = lo; i <= hi; i++) any = any || want[i];
          if (any) {
            ASSERT_TRUE(s.may_pass(static_cast<uint32_t>(lo), static_cast<uint32_t>(hi), fs));
          }
        }
      }
      if (shape == 6 && n > 8192) {
        // A window inside the second run: the first and third runs' ranges
        // are skipped whole, however many groups they span.
        const Filters fs{{0, vals.v[5000 * 2], vals.v[5100 * 2]}};
        EXPECT_FALSE(s.may_pass(0, 4095, fs));
        EXPECT_FALSE(s.may_pass(100, 3000, fs));
        EXPECT_TRUE(s.may_pass(4096, 8191, fs));
        EXPECT_FALSE(s.may_pass(8192, static_cast<uint32_t>(n - 1), fs));
      }
    }
  }
}

struct Row {
  uint64_t tid;
  std::string text;
  bool null;
  uint64_t v[2];
  uint8_t nl[2];
};

std::vector<Row> rows_with_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Row> rows;
  for (size_t i = 0; i < n; i++) {
    Row r{(static_cast<uint64_t>(i / 9 + 1) << 16) | (i % 9 + 1), "", rng() % 31 == 0, {}, {}};
    const size_t len = rng() % 30;
    for (size_t w = 0; w < len; w++)
      r.text += "w" + std::to_string(static_cast<uint32_t>(std::pow(rng() % 1000 + 1, 1.6)) % 3000) + " ";
    r.v[0] = 1000000 + 3 * i + rng() % 2;  // a timestamp: follows the rows
    r.v[1] = rng() % 50;
    r.nl[0] = rng() % 97 == 0;
    r.nl[1] = rng() % 10 == 0;
    rows.push_back(r);
  }
  return rows;
}

// Rows [0, built) built by two indexers in `memory` bytes (a small one
// makes several segments), the rest as pending entries.
void make_index(Index& ix, const std::vector<Row>& rows, size_t built, size_t memory = 256 << 10) {
  auto add = [&](scipis_am_build* b, size_t i, scipis_error* err) {
    const Row& r = rows[i];
    const scipis_am_vals vals{2, r.v, r.nl};
    return scipis_am_build_add(b, r.tid, r.text.data(), r.text.size(), r.null, &vals, err);
  };
  for (std::string& seg : scipis::test::build_segments(built, 2, memory, 2, add))
    ix.segs.push_back(ix.pages.add(std::move(seg)));
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  for (size_t i = built; i < rows.size(); i++) {
    const scipis_am_vals vals{2, rows[i].v, rows[i].nl};
    scipis_am_blob* e = scipis_am_entry_encode(rows[i].tid, rows[i].text.data(), rows[i].text.size(),
                                               rows[i].null, &vals, delim, &err);
    ASSERT_NE(e, nullptr) << err.message;
    ix.pending.push_back(take_blob(e));
  }
}

scipis_am_query* new_query(const std::string& q, bool all, const std::vector<scipis_am_filter>& fs) {
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  scipis_am_query* qq = scipis_am_query_new(q.data(), q.size(), delim, SCIPIS_BM25,
                                            all ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY, &err);
  EXPECT_NE(qq, nullptr) << err.message;
  for (const auto& f : fs) EXPECT_EQ(scipis_am_query_filter(qq, &f, &err), 0) << err.message;
  return qq;
}

std::vector<scipis_am_hit> ranked(Index& ix, const std::string& q, bool all,
                                  const std::vector<scipis_am_filter>& fs, size_t round) {
  scipis_am_query* qq = new_query(q, all, fs);
  scipis_error err;
  auto rd = ix.pages.reader();
  auto v = ix.view();
  std::vector<scipis_am_hit> out;
  for (;;) {
    const scipis_am_hit* h;
    size_t n;
    const bool after = !out.empty();
    EXPECT_EQ(scipis_am_query_ranked(qq, &v, &rd, round, after, after ? out.back().score : 0,
                                     after ? out.back().tid : 0, &h, &n, &err),
              0)
        << err.message;
    out.insert(out.end(), h, h + n);
    if (n < round) break;
    round *= 8;
  }
  scipis_am_query_free(qq);
  return out;
}

// queries random queries over ix (rows' values span `span` from 1000000):
// filtered answers equal the unfiltered ones minus the rows a brute-force
// check of the values rejects.
void check_filtered(Index& ix, const std::vector<Row>& rows, int queries, uint64_t span) {
  auto row_passes = [&](const Row& r, const std::vector<scipis_am_filter>& fs) {
    for (const auto& f : fs)
      if (r.nl[f.col] || r.v[f.col] < f.lo || r.v[f.col] > f.hi) return false;
    return true;
  };
  std::map<uint64_t, const Row*> by_tid;
  for (const Row& r : rows) by_tid[r.tid] = &r;
  std::mt19937 rng(17);
  scipis_error err;
  auto rd = ix.pages.reader();
  for (int i = 0; i < queries; i++) {
    std::string q = "w" + std::to_string(static_cast<uint32_t>(std::pow(rng() % 1000 + 1, 1.6)) % 3000);
    if (i % 3) q += " w" + std::to_string(rng() % 50);
    if (i % 4 == 1) q += " w" + std::to_string(rng() % 8);
    const bool all = i % 5 == 0;
    std::vector<scipis_am_filter> fs;
    const uint64_t lo = 1000000 + rng() % span, width = i % 7 == 0 ? 0 : rng() % (span / 3);
    fs.push_back({0, lo, lo + width});
    if (i % 3 == 0) fs.push_back({1, rng() % 20, 20 + rng() % 40});
    if (i % 11 == 0) fs.push_back({1, 60, UINT64_MAX});  // nothing passes
    const auto full = ranked(ix, q, all, {}, 1000000);
    std::vector<scipis_am_hit> want;
    for (const auto& h : full)
      if (row_passes(*by_tid.at(h.tid), fs)) want.push_back(h);
    const auto got = ranked(ix, q, all, fs, 1 + i % 10);
    ASSERT_EQ(got.size(), want.size()) << q;
    for (size_t j = 0; j < got.size(); j++) {
      ASSERT_EQ(got[j].tid, want[j].tid) << q << " rank " << j;
      ASSERT_EQ(got[j].score, want[j].score) << q << " rank " << j;
    }
    // Matches and the rows that do not match, filtered alike.
    auto v = ix.view();
    scipis_am_query* qq = new_query(q, all, fs);
    const uint64_t* tids;
    size_t n;
    ASSERT_EQ(scipis_am_query_matches(qq, &v, &rd, &tids, &n, &err), 0) << err.message;
    std::set<uint64_t> matched;
    for (const auto& h : full) matched.insert(h.tid);
    std::vector<uint64_t> want_m;
    for (uint64_t t : matched)
      if (row_passes(*by_tid.at(t), fs)) want_m.push_back(t);
    ASSERT_EQ(std::vector<uint64_t>(tids, tids + n), want_m) << q;
    if (i % 10 == 0) {
      const scipis_am_hit* h;
      ASSERT_EQ(scipis_am_query_rest(qq, &v, &rd, 100000, 0, 0, 0, &h, &n, &err), 0) << err.message;
      std::vector<uint64_t> want_r, got_r;
      for (const Row& r : rows)
        if (!matched.count(r.tid) && row_passes(r, fs)) want_r.push_back(r.tid);
      for (size_t j = 0; j < n; j++) got_r.push_back(h[j].tid);
      std::sort(got_r.begin(), got_r.end());
      ASSERT_EQ(got_r, want_r) << q;
    }
    scipis_am_query_free(qq);
    // Conditions on filter columns alone.
    uint64_t* only;
    ASSERT_EQ(scipis_am_filter_tids(&v, &rd, fs.data(), fs.size(), &only, &n, &err), 0) << err.message;
    std::vector<uint64_t> want_f;
    for (const auto& [t, r] : by_tid)
      if (row_passes(*r, fs)) want_f.push_back(t);
    ASSERT_EQ(std::vector<uint64_t>(only, only + n), want_f);
    std::free(only);
  }
}

TEST(AmFilter, FilteredAnswersAreTheUnfilteredOnesMinusRejectedRows) {
  const auto rows = rows_with_values(6000, 5);
  Index ix;
  make_index(ix, rows, 5600);
  ASSERT_GT(ix.segs.size(), 1u);
  check_filtered(ix, rows, 150, 18000);
}

// Segments of many runs of kValSuper groups: ranges and rows are decided by
// their runs' summaries first (a window over the timestamps that follow the
// rows passes whole runs and rejects others), by groups and rows at its edges.
TEST(AmFilter, LargeSegmentsSkipByRunsAndStillAnswerExactly) {
  const auto rows = rows_with_values(40000, 23);
  Index ix;
  make_index(ix, rows, 39000, 64 << 20);
  ASSERT_LE(ix.segs.size(), 2u);
  check_filtered(ix, rows, 90, 120000);
}

TEST(AmFilter, AFilterOnAMissingColumnOrDamagedValuesIsAnError) {
  const auto rows = rows_with_values(900, 9);
  Index ix;
  make_index(ix, rows, 900);
  scipis_error err;
  auto rd = ix.pages.reader();
  auto v = ix.view();
  const scipis_am_filter beyond{2, 0, UINT64_MAX};
  scipis_am_query* qq = new_query("w1 w2", false, {beyond});
  const uint64_t* tids;
  size_t n;
  EXPECT_NE(scipis_am_query_matches(qq, &v, &rd, &tids, &n, &err), 0);
  EXPECT_EQ(err.code, SCIPIS_E_CORRUPT);
  scipis_am_query_free(qq);
  // Every byte of the first segment's rows and values flipped in turn: an
  // answer or a damage error, never a crash (pages carry no checksum here).
  const std::string good = ix.pages.segs[0];
  const size_t upto = std::min<size_t>(good.size(), 4000);
  for (size_t i = 0; i < upto; i += 7) {
    ix.pages.segs[0] = good;
    ix.pages.segs[0][i] ^= static_cast<char>(0x5a);
    const scipis_am_filter f{0, 1000000, 1001000};
    scipis_am_query* q = new_query("w1 w3", false, {f});
    const scipis_am_hit* h;
    const int rc = scipis_am_query_ranked(q, &v, &rd, 10, 0, 0, 0, &h, &n, &err);
    if (rc != 0) {
      EXPECT_TRUE(err.code == SCIPIS_E_CORRUPT || err.code == SCIPIS_E_INVALID) << err.message;
    }
    scipis_am_query_free(q);
  }
  ix.pages.segs[0] = good;
}

}  // namespace
