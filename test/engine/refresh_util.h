// What the refresh tests share: a refresh run to its end, the oracle's
// documents read from the tree, and a check of every query kind against it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include <random>

#include "brute_force.h"
#include "index/journal.h"
#include "pipeline/append.h"
#include "pipeline/racy.h"
#include "test_util.h"

namespace refresh_util {

namespace fs = std::filesystem;

// Refreshes commit whole generations while it lives: for tests of the
// generation's own list and pack files (journal_test.cpp tests the journal).
struct NoJournal {
  NoJournal() { scipis::set_journal_enabled(false); }
  ~NoJournal() { scipis::set_journal_enabled(true); }
};

inline int refresh(const std::string& dir, const std::string& root, const scipis_options& o,
            const std::vector<std::string>& paths, scipis_build_stats* st, scipis_error* err) {
  std::vector<const char*> p;
  for (const auto& s : paths) p.push_back(s.c_str());
  scipis_build* b = scipis_refresh_start(dir.c_str(), root.c_str(), &o, p.data(),
                                         static_cast<int>(p.size()), 0, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

// A compaction run to its end (all: every indexer's segments).
inline int compact(const std::string& dir, const scipis_options& o, bool all, scipis_build_stats* st,
                   scipis_error* err) {
  scipis_build* b = scipis_compact_start(dir.c_str(), &o, all ? SCIPIS_COMPACT_ALL : 0, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

// The oracle's documents: every regular file under root, read now.
inline std::vector<brute::Doc> oracle_docs(const std::string& root) {
  std::vector<brute::Doc> docs;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_symlink() || !e.is_regular_file()) continue;
    brute::Doc d;
    d.path = e.path().string();
    for (const auto& t : brute::tokenize(testutil::read(d.path))) {
      d.tf[t]++;
      d.len++;
    }
    docs.push_back(std::move(d));
  }
  std::sort(docs.begin(), docs.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return docs;
}

inline void expect_same(const std::vector<testutil::Result>& got, const std::vector<brute::Hit>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_EQ(got[i].path, want[i].path) << what << " at " << i;
    EXPECT_NEAR(got[i].score, want[i].score, 1e-9 * std::fabs(want[i].score)) << what;
  }
}

// The listed files' paths; tokens, when given, gets their lengths.
inline std::vector<std::string> listed(const std::string& dir,
                                       std::vector<uint64_t>* tokens = nullptr) {
  std::vector<std::string> out;
  scipis_error err;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  EXPECT_NE(ix, nullptr) << err.message;
  if (!ix) return out;
  scipis_docs docs;
  EXPECT_EQ(scipis_list_files(ix, &docs, &err), 0) << err.message;
  for (size_t i = 0; i < docs.n; i++) {
    out.emplace_back(docs.docs[i].path, docs.docs[i].path_len);
    if (tokens) tokens->push_back(docs.docs[i].tokens);
  }
  scipis_docs_free(&docs);
  // Every file is found by its path, with its length, and a pattern finds
  // the same ones.
  for (size_t i = 0; i < out.size(); i++) {
    const std::string& p = out[i];
    EXPECT_EQ(scipis_lookup(ix, p.data(), p.size(), &docs, &err), 0) << err.message;
    EXPECT_EQ(docs.n, 1u) << p;
    if (tokens && docs.n == 1) {
      EXPECT_EQ(docs.docs[0].tokens, (*tokens)[i]) << p;
    }
    scipis_docs_free(&docs);
  }
  EXPECT_EQ(scipis_locate(ix, ".txt", 4, &docs, &err), 0) << err.message;
  size_t txt = 0;
  for (const auto& p : out) txt += p.find(".txt") != std::string::npos;
  EXPECT_EQ(docs.n, txt);
  scipis_docs_free(&docs);
  scipis_index_close(ix);
  return out;
}

inline void check(const std::string& dir, const std::string& root, const std::string& label,
                  const std::vector<std::string>& more = {}) {
  const auto docs = oracle_docs(root);
  std::vector<std::string> want_paths;
  std::vector<uint64_t> want_tokens, tokens;
  for (const auto& d : docs) {
    want_paths.push_back(d.path);
    want_tokens.push_back(d.len);
  }
  EXPECT_EQ(listed(dir, &tokens), want_paths) << label;
  EXPECT_EQ(tokens, want_tokens) << label;
  std::vector<std::string> queries = {"w0", "w1 w2", "w3 w0 w7", "tail", "w11", "nothere"};
  queries.insert(queries.end(), more.begin(), more.end());
  for (const std::string& q : queries)
    for (bool bm25 : {false, true})
      for (bool all : {false, true}) {
        auto want = brute::search(docs, q, bm25, all);
        const auto r = bm25 ? SCIPIS_BM25 : SCIPIS_TFIDF;
        const auto m = all ? SCIPIS_MATCH_ALL : SCIPIS_MATCH_ANY;
        expect_same(testutil::search(dir, q, -1, r, m), want, label + " q=" + q);
        if (want.size() > 3) want.resize(3);
        expect_same(testutil::search(dir, q, 3, r, m), want, label + " top3 q=" + q);
      }
}

inline scipis_options tiny_options() {
  scipis_options o;
  scipis_options_init(&o);
  // Small tables: flushes inside files, several segments per refresh.
  o.tfidf_index_size = 65536;
  o.path_index_size = 65536;
  o.block_size = 4096;
  o.indexer_threads = 2;
  o.split_factor = 4;
  return o;
}

// One indexer whose table holds a whole small tree: its build is one
// segment, far larger than the small ones refreshes add.
inline scipis_options one_segment_options() {
  scipis_options o = tiny_options();
  o.indexer_threads = 1;
  o.tfidf_index_size = 64 << 20;
  return o;
}

// Files written just before a refresh are read again whole by the next
// one (RefreshCatalog's racy files): waited out where a test wants appends.
inline void settle() { usleep(150 * 1000); }

// Widens the time after a file's change within which its read is racy
// (pipeline/racy.h), for a test that needs a file surely racy however
// slowly it runs.
struct RacyTick {
  explicit RacyTick(int64_t ns) { scipis::set_racy_tick_ns(ns); }
  ~RacyTick() { scipis::set_racy_tick_ns(scipis::kRacyTickNs); }
};

// Lowers the size below which grown files are read whole, for a test.
struct AppendMin {
  explicit AppendMin(uint64_t n) { scipis::set_append_min_bytes(n); }
  ~AppendMin() { scipis::set_append_min_bytes(scipis::kAppendMinBytes); }
};

// 40 files of 2,000 words drawn from 100,000 beside a log: enough other
// files that the log's chain stays under half the documents (a merge would
// fold it), and terms enough that the build's segment is far larger than
// an append's (else the two are one tier, merged).
inline void other_files(const std::string& root, std::mt19937& rng) {
  for (int i = 0; i < 40; i++) {
    std::string text;
    for (int t = 0; t < 2000; t++) text += "t" + std::to_string(rng() % 100000) + " ";
    testutil::write(root + "/o" + std::to_string(i), text);
  }
}

inline void append(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::app | std::ios::binary) << bytes;
}

// Log-like words (w0..w11), a line break now and then.
inline std::string lines(std::mt19937& rng, size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += "w" + std::to_string(rng() % 12) + (rng() % 8 ? " " : "\n");
  return s;
}

}  // namespace refresh_util
