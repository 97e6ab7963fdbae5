// Appended logs and compaction through the engine alone (no server):
//
//   bench/build/append_bench SCRATCH SOURCE_DIR [REFRESHES]
//
// Makes SCRATCH/tree from SOURCE_DIR's log files: one 20 MiB log and 199
// of 256 KiB. Then:
//   1. 1 KiB appended to the 20 MiB log, refreshed (that path given), 20
//      times: seconds and bytes read, against building an index of that
//      file alone (what re-indexing it costs; median of 3);
//   2. REFRESHES rounds of 1 KiB appended to 1-5 random files, 1 in 10 a
//      file rewritten, 1 in 20 a file created, each round refreshed, and,
//      as the job workers do, the tail tiers merged when they pile up:
//      refresh and merge seconds, segments after each round;
//   3. query latency of the refreshed index against one built afresh over
//      the tree as it then is (median of 30 runs per query, top 10 and
//      every match), and the answers compared (paths and scores).
// Every file written is past the racy window (0.11 s) before its refresh.
// AB_TRACE=1 prints each merge to stderr.
// Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "scipis_engine.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) {
  if (!b) return -1;
  while (!scipis_build_wait(b, 2)) {
  }
  return scipis_build_finish(b, st, err);
}

void die(const char* what, const scipis_error& err) {
  std::fprintf(stderr, "append_bench: %s: %s\n", what, err.message);
  std::exit(1);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(110)); }

struct Hits {
  std::vector<std::string> paths;
  std::vector<double> scores;
};

Hits search(scipis_index* ix, const std::string& q, int64_t k) {
  scipis_docs d;
  scipis_error err;
  if (scipis_search(ix, q.data(), q.size(), k, SCIPIS_BM25, SCIPIS_MATCH_ANY, &d, &err) != 0)
    die("search", err);
  Hits h;
  for (size_t i = 0; i < d.n; i++) {
    h.paths.emplace_back(d.docs[i].path, d.docs[i].path_len);
    h.scores.push_back(d.docs[i].score);
  }
  scipis_docs_free(&d);
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: append_bench SCRATCH SOURCE_DIR [REFRESHES]\n");
    return 2;
  }
  const std::string scratch = argv[1], tree = scratch + "/tree";
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 1000;
  fs::remove_all(scratch);
  fs::create_directories(tree);
  std::string text;
  for (const auto& e : fs::recursive_directory_iterator(argv[2])) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    text.append(std::istreambuf_iterator<char>(in), {});
    if (text.size() > (64u << 20)) break;
  }
  if (text.size() < (1u << 20)) {
    std::fprintf(stderr, "append_bench: too little text under %s\n", argv[2]);
    return 1;
  }
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size() && lines.size() < 100000;) {
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    lines.push_back(text.substr(at, nl + 1 - at));
    at = nl + 1;
  }
  std::mt19937_64 rng(42);
  auto chunk = [&](size_t bytes) {
    std::string s;
    while (s.size() < bytes) s += lines[rng() % lines.size()];
    return s;
  };
  auto write = [](const std::string& p, const std::string& s, bool append) {
    std::ofstream(p, append ? std::ios::app | std::ios::binary : std::ios::binary) << s;
  };
  const std::string big = tree + "/big.log";
  write(big, chunk(20u << 20), false);
  std::vector<std::string> files{big};
  for (int i = 0; i < 199; i++) {
    files.push_back(tree + "/f" + std::to_string(i) + ".log");
    write(files.back(), chunk(256u << 10), false);
  }
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  scipis_error err;
  scipis_build_stats st;
  const std::string idx = scratch + "/idx";
  settle();
  auto t0 = Clock::now();
  if (finish(scipis_build_start(idx.c_str(), tree.c_str(), &o, &err), &st, &err) != 0) die("build", err);
  const double build_s = since(t0);
  const uint64_t tree_bytes = st.bytes;

  // 1. The 20 MiB log alone, re-indexed, against 1 KiB appended to it.
  const std::string alone = scratch + "/alone", alone_idx = scratch + "/alone-idx";
  fs::create_directories(alone);
  fs::copy_file(big, alone + "/big.log");
  std::vector<double> reindex;
  for (int r = 0; r < 3; r++) {
    fs::remove_all(alone_idx);
    t0 = Clock::now();
    if (finish(scipis_build_start(alone_idx.c_str(), alone.c_str(), &o, &err), &st, &err) != 0)
      die("build alone", err);
    reindex.push_back(since(t0));
  }
  std::vector<double> append_s;
  uint64_t append_read = 0, appended = 0;
  for (int r = 0; r < 20; r++) {
    const std::string add = chunk(1024).substr(0, 1024);
    write(big, add, true);
    settle();
    const char* p = big.c_str();
    t0 = Clock::now();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, &p, 1, 0, &err), &st, &err) != 0)
      die("refresh", err);
    append_s.push_back(since(t0));
    append_read += st.bytes_read;
    appended += add.size();
    if (st.files_appended != 1) die("append not read as an append", err);
  }

  // 2. Many small refreshes, tail tiers merged as the workers do.
  std::vector<double> refresh_s, merge_s;
  std::vector<uint64_t> segments;
  uint64_t read = 0, merges = 0, max_segments = 0;
  for (int r = 0; r < rounds; r++) {
    const int n = 1 + static_cast<int>(rng() % 5);
    std::string acts;
    for (int k = 0; k < n; k++) { const auto& f = files[rng() % files.size()]; acts += " A:" + f.substr(f.rfind('/') + 1); write(f, chunk(1024), true); }
    if (r % 10 == 9) { const auto& f = files[1 + rng() % (files.size() - 1)]; acts += " W:" + f.substr(f.rfind('/') + 1); write(f, chunk(256u << 10), false); }
    if (r % 20 == 19) {
      files.push_back(tree + "/new" + std::to_string(r) + ".log");
      write(files.back(), chunk(128u << 10), false);
      acts += " N:" + files.back();
    }
    if (acts.find("f8.log") != std::string::npos) std::fprintf(stderr, "round %d:%s\n", r, acts.c_str());
    settle();
    t0 = Clock::now();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, nullptr, 0, 0, &err), &st, &err) != 0)
      die("refresh", err);
    refresh_s.push_back(since(t0));
    read += st.bytes_read;
    if (scipis_compact_needed(idx.c_str(), 0)) {
      t0 = Clock::now();
      if (finish(scipis_compact_start(idx.c_str(), &o, 0, &err), &st, &err) != 0) die("compact", err);
      merge_s.push_back(since(t0));
      merges++;
      if (std::getenv("AB_TRACE"))
        std::fprintf(stderr, "round %d merge %.4f s: %llu segments, %llu dropped, %llu chains folded, %llu left\n", r,
                     merge_s.back(), static_cast<unsigned long long>(st.segments_merged),
                     static_cast<unsigned long long>(st.docs_dropped),
                     static_cast<unsigned long long>(st.chains_folded), static_cast<unsigned long long>(st.segments));
    }
    segments.push_back(st.segments);
    max_segments = std::max<uint64_t>(max_segments, st.segments);
    static const int from = std::getenv("CHECK_FROM") ? std::atoi(std::getenv("CHECK_FROM")) : 1 << 30;
    if (r >= from) {
      const std::string fr = scratch + "/fresh-check";
      fs::remove_all(fr);
      scipis_build_stats s2;
      if (finish(scipis_build_start(fr.c_str(), tree.c_str(), &o, &err), &s2, &err) != 0) die("fresh", err);
      scipis_index* ia = scipis_index_open(idx.c_str(), &err);
      scipis_index* ib = scipis_index_open(fr.c_str(), &err);
      const Hits ha = search(ia, "error", -1), hb = search(ib, "error", -1);
      scipis_index_close(ia);
      scipis_index_close(ib);
      bool same = ha.paths == hb.paths && ha.scores.size() == hb.scores.size();
      for (size_t i = 0; same && i < ha.scores.size(); i++)
        same = std::fabs(ha.scores[i] - hb.scores[i]) <= 1e-9 * std::fabs(hb.scores[i]);
      if (!same) {
        std::fprintf(stderr, "FIRST DIFF after round %d (merged this round: %s, segments %llu, chain links %llu)\n", r,
                     merge_s.size() && merges ? "maybe" : "no", (unsigned long long)st.segments, (unsigned long long)st.chain_links);
        for (size_t i = 0; i < ha.paths.size() && i < hb.paths.size(); i++)
          if (ha.paths[i] != hb.paths[i]) { std::fprintf(stderr, "  %zu: %s %.12g | %s %.12g\n", i, ha.paths[i].c_str(), ha.scores[i], hb.paths[i].c_str(), hb.scores[i]); }
        return 5;
      }
    }
  }

  // 3. Queries: the refreshed index against a fresh build.
  const std::string fresh = scratch + "/fresh-idx";
  t0 = Clock::now();
  if (finish(scipis_build_start(fresh.c_str(), tree.c_str(), &o, &err), &st, &err) != 0) die("fresh build", err);
  const double fresh_build_s = since(t0);
  const uint64_t fresh_segments = st.segments;
  scipis_index* a = scipis_index_open(idx.c_str(), &err);
  if (!a) die("open", err);
  scipis_index* b = scipis_index_open(fresh.c_str(), &err);
  if (!b) die("open fresh", err);
  const std::vector<std::string> queries = {"error", "failed connection", "info user session",
                                            "block", "exception timeout"};
  std::vector<double> ra, rb;
  size_t differing = 0;
  for (const auto& q : queries) {
    for (int64_t k : {int64_t{10}, int64_t{-1}}) {
      const Hits ha = search(a, q, k), hb = search(b, q, k);
      bool same = ha.paths == hb.paths && ha.scores.size() == hb.scores.size();
      for (size_t i = 0; same && i < ha.scores.size(); i++)
        same = std::fabs(ha.scores[i] - hb.scores[i]) <= 1e-9 * std::fabs(hb.scores[i]);
      differing += !same;
      if (!same) {
        std::fprintf(stderr, "DIFF q=%s k=%lld n=%zu/%zu\n", q.c_str(), (long long)k, ha.paths.size(), hb.paths.size());
        for (size_t i = 0; i < std::max(ha.paths.size(), hb.paths.size()) && i < 400; i++) {
          const bool d = i >= ha.paths.size() || i >= hb.paths.size() || ha.paths[i] != hb.paths[i] ||
                         std::fabs(ha.scores[i] - hb.scores[i]) > 1e-9 * std::fabs(hb.scores[i]);
          if (d) std::fprintf(stderr, "  %zu: %s %.12g | %s %.12g\n", i, i < ha.paths.size() ? ha.paths[i].c_str() : "-", i < ha.scores.size() ? ha.scores[i] : 0.0, i < hb.paths.size() ? hb.paths[i].c_str() : "-", i < hb.scores.size() ? hb.scores[i] : 0.0);
        }
      }
      std::vector<double> ta, tb;
      for (int r = 0; r < 30; r++) {
        t0 = Clock::now();
        search(a, q, k);
        ta.push_back(since(t0));
        t0 = Clock::now();
        search(b, q, k);
        tb.push_back(since(t0));
      }
      ra.push_back(median(ta));
      rb.push_back(median(tb));
    }
  }
  scipis_index_close(a);
  scipis_index_close(b);
  double sa = 0, sb = 0;
  for (size_t i = 0; i < ra.size(); i++) {
    sa += ra[i];
    sb += rb[i];
  }
  std::printf(
      "{\"tree_bytes\": %llu, \"build_s\": %.4f,\n"
      " \"big_bytes\": %llu, \"reindex_alone_s\": %.4f, \"append_refresh_s\": %.5f,"
      " \"append_bytes_read\": %.1f, \"appended\": %.1f,\n"
      " \"rounds\": %d, \"refresh_s_median\": %.5f, \"refresh_s_p99\": %.5f, \"bytes_read_per_round\": %.0f,"
      " \"merges\": %llu, \"merge_s_median\": %.4f, \"merge_s_max\": %.4f, \"merge_s_total\": %.3f, \"refresh_s_total\": %.3f,"
      " \"segments_end\": %llu, \"segments_max\": %llu, \"fresh_segments\": %llu, \"fresh_build_s\": %.4f,\n"
      " \"query_s_refreshed\": %.6f, \"query_s_fresh\": %.6f, \"query_ratio\": %.3f, \"differing\": %zu}\n",
      static_cast<unsigned long long>(tree_bytes), build_s,
      static_cast<unsigned long long>(fs::file_size(alone + "/big.log")), median(reindex),
      median(append_s), static_cast<double>(append_read) / 20, static_cast<double>(appended) / 20,
      rounds, median(refresh_s),
      [&] {
        auto v = refresh_s;
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : v[v.size() * 99 / 100];
      }(),
      rounds ? static_cast<double>(read) / rounds : 0.0, static_cast<unsigned long long>(merges),
      median(merge_s), merge_s.empty() ? 0.0 : *std::max_element(merge_s.begin(), merge_s.end()),
      std::accumulate(merge_s.begin(), merge_s.end(), 0.0),
      std::accumulate(refresh_s.begin(), refresh_s.end(), 0.0),
      static_cast<unsigned long long>(segments.empty() ? 0 : segments.back()),
      static_cast<unsigned long long>(max_segments), static_cast<unsigned long long>(fresh_segments),
      fresh_build_s, sa, sb, sb > 0 ? sa / sb : 0.0, differing);
  return differing == 0 ? 0 : 3;
}
