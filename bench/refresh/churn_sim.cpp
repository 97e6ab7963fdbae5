// The watcher's loop without PostgreSQL: batches of churn (60% a log line
// appended to a random log, 20% a new 2 KiB file, 20% a deletion of one of
// them), each refreshed by its paths, with merges beside the refreshes
// started and committed between batches as watcher.c does. Prints each
// indexer's segments (sizes) and the garbage every REPORT batches, so
// that the segment count under sustained churn can be followed for many
// minutes of churn in far less time.
//
//   churn_sim TREE INDEX_DIR BATCHES OPS_PER_BATCH [REPORT]
//
// TREE is changed (copy a corpus first); INDEX_DIR is built if absent.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "index/manifest.h"
#include "index/journal.h"
#include "scipis_engine.h"

namespace fs = std::filesystem;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) {
  if (!b) return -1;
  while (!scipis_build_wait(b, 2)) {
  }
  return scipis_build_finish(b, st, err);
}

void report(const std::string& idx, int batch, double t, int merges, double merge_s) {
  const scipis::Manifest m = scipis::read_current(idx).m;
  std::printf("batch %d t=%.1fs segments %zu deleted %llu chain_links %llu merges %d (%.1f s)\n", batch, t,
              m.segments.size(), static_cast<unsigned long long>(m.deleted),
              static_cast<unsigned long long>(m.chain_links), merges, merge_s);
  for (uint32_t i = 0; i < m.indexers; i++) {
    std::printf("  indexer %u:", i);
    for (const auto& s : m.segments)
      if (s.indexer == i) std::printf(" %lluk/%llu", static_cast<unsigned long long>(scipis::segment_bytes(s) >> 10),
                                      static_cast<unsigned long long>(s.docs));
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: churn_sim TREE INDEX_DIR BATCHES OPS_PER_BATCH [REPORT]\n");
    return 2;
  }
  const std::string tree = fs::absolute(argv[1]).string(), idx = argv[2];
  const int batches = std::atoi(argv[3]), ops = std::atoi(argv[4]);
  const int every = argc > 5 ? std::atoi(argv[5]) : 10;
  scipis_options o;
  scipis_options_init(&o);
  scipis_error err;
  scipis_build_stats st;
  if (!fs::exists(idx)) {
    if (finish(scipis_build_start(idx.c_str(), tree.c_str(), &o, &err), &st, &err)) {
      std::puts(err.message);
      return 1;
    }
  }
  if (batches == 0) {  // one merge beside, timed, nothing else running
    const double m0 = now_s();
    const int flags = std::getenv("ALL") ? SCIPIS_COMPACT_ALL : std::getenv("UNDER_LOCK") ? 0 : SCIPIS_COMPACT_BESIDE;
    if (finish(scipis_compact_start(idx.c_str(), &o, flags, &err), &st, &err)) {
      std::printf("merge: %s\n", err.message);
      return 1;
    }
    std::printf("merged %llu segments in %.2f s\n", static_cast<unsigned long long>(st.segments_merged), now_s() - m0);
    report(idx, 0, now_s() - m0, 1, st.seconds);
    return 0;
  }
  std::vector<std::string> logs;
  for (auto& e : fs::recursive_directory_iterator(tree))
    if (e.is_regular_file() && e.path().string().find("/new/") == std::string::npos) logs.push_back(e.path().string());
  fs::create_directories(tree + "/new");
  std::mt19937_64 rng(42);
  std::vector<std::string> created;
  const std::string line =
      "2026-11-29 03:40:00 INFO dfs.DataNode$PacketResponder: Received block blk_123 of size 67108864 from "
      "/10.0.0.1\n";
  std::string page;
  while (page.size() < 2048) page += line;
  page.resize(2047);
  page += "\n";
  scipis_build* merge = nullptr;
  int merges = 0, k = 0;
  double merge_s = 0, refresh_s = 0;
  const double t0 = now_s();
  for (int b = 1; b <= batches; b++) {
    // PACE_MS: a batch at most this often, as a watcher's (1,000 ms while
    // segments wait for merges); unset: back to back.
    static const double pace = std::getenv("PACE_MS") ? std::atof(std::getenv("PACE_MS")) / 1000 : 0;
    if (pace > 0) {
      const double wait = t0 + (b - 1) * pace - now_s();
      if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
    std::vector<std::string> paths;
    for (int n = 0; n < ops; n++) {
      const double r = std::uniform_real_distribution<double>(0, 1)(rng);
      if (r < 0.6) {
        const std::string& f = logs[rng() % logs.size()];
        std::ofstream(f, std::ios::app) << line;
        paths.push_back(f);
      } else if (r < 0.8 || created.empty()) {
        const std::string p = tree + "/new/f" + std::to_string(++k) + ".log";
        std::ofstream(p) << page << "token" << k << "\n";
        created.push_back(p);
        paths.push_back(p);
      } else {
        const size_t at = rng() % created.size();
        fs::remove(created[at]);
        paths.push_back(created[at]);
        created[at] = created.back();
        created.pop_back();
      }
    }
    std::vector<const char*> ptrs;
    for (auto& p : paths) ptrs.push_back(p.c_str());
    const double r0 = now_s();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, ptrs.data(), static_cast<int>(ptrs.size()), 0,
                                    &err),
               &st, &err)) {
      std::printf("refresh: %s\n", err.message);
      return 1;
    }
    refresh_s += now_s() - r0;
    if (std::getenv("VERBOSE"))
      std::printf("refresh %d: %llu added %llu changed %llu appended %llu deleted, %llu bytes read, %llu segments\n", b,
                  (unsigned long long)st.files_added, (unsigned long long)st.files_changed,
                  (unsigned long long)st.files_appended, (unsigned long long)st.files_deleted,
                  (unsigned long long)st.bytes_read, (unsigned long long)st.segments);
    // watcher.c's merge(): commit a finished merge, else start one.
    if (merge && scipis_build_wait(merge, 0)) {
      if (scipis_build_finish(merge, &st, &err)) std::printf("merge: %s\n", err.message);
      merge_s += st.seconds;
      merges++;
      merge = nullptr;
    }
    if (!std::getenv("NO_MERGE") && !merge && scipis_compact_needed(idx.c_str(), SCIPIS_COMPACT_BESIDE)) {
      merge = scipis_compact_start(idx.c_str(), &o, SCIPIS_COMPACT_BESIDE, &err);
      if (!merge) std::printf("merge start: %s\n", err.message);
    }
    if (b % every == 0) {
      report(idx, b, now_s() - t0, merges, merge_s);
      std::printf("  refresh mean %.1f ms\n", 1000 * refresh_s / b);
    }
  }
  if (merge) finish(merge, &st, &err);
  return 0;
}
