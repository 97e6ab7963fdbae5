// Segments a watcher-like batch adds: 300 appended lines to distinct logs,
// 100 new 2 KiB files, 100 deletions of the previous batch's new files,
// refreshed by named paths (as the watcher does), 6 batches.
#include <chrono>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>
#include "scipis_engine.h"
#include "index/manifest.h"
#include "index/journal.h"
namespace fs = std::filesystem;
static int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) { if (!b) return -1; while (!scipis_build_wait(b, 2)) {} return scipis_build_finish(b, st, err); }
int main(int argc, char** argv) {
  const std::string src = argv[1], scratch = argv[2];
  const std::string tree = scratch + "/tree", idx = scratch + "/idx";
  scipis_options o; scipis_options_init(&o);
  scipis_error err; scipis_build_stats st;
  std::vector<std::string> logs;
  if (!fs::exists(idx)) {
    fs::create_directories(tree);
    for (auto& e : fs::recursive_directory_iterator(src)) if (e.is_regular_file()) {
      const std::string to = tree + "/" + e.path().filename().string();
      fs::copy_file(e.path(), to);
    }
    auto t0 = std::chrono::steady_clock::now();
    if (finish(scipis_build_start(idx.c_str(), tree.c_str(), &o, &err), &st, &err)) { puts(err.message); return 1; }
    printf("built %.2f s, %llu segments\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), (unsigned long long)st.segments);
  }
  for (auto& e : fs::directory_iterator(tree)) logs.push_back(e.path().string());
  std::mt19937 rng(7);
  std::vector<std::string> created;
  const std::string line = "2026-11-29 03:40:00 INFO dfs.DataNode$PacketResponder: Received block blk_123 of size 67108864 from /10.0.0.1\n";
  for (int b = 0; b < 6; b++) {
    std::vector<std::string> paths;
    for (int k = 0; k < 300; k++) { const auto& f = logs[rng() % logs.size()]; std::ofstream(f, std::ios::app) << line; paths.push_back(f); }
    std::vector<std::string> fresh;
    for (int k = 0; k < 100; k++) {
      std::string p = tree + "/new-" + std::to_string(b) + "-" + std::to_string(k) + ".log";
      std::string text; while (text.size() < 2048) text += "job " + std::to_string(rng() % 100000) + " step " + std::to_string(rng() % 1000) + " done\n";
      std::ofstream(p) << text; paths.push_back(p); fresh.push_back(p);
    }
    for (const auto& p : created) { fs::remove(p); paths.push_back(p); }
    created = fresh;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    std::vector<const char*> pp; for (auto& p : paths) pp.push_back(p.c_str());
    const scipis::Manifest before = scipis::read_current(idx).m;
    auto t0 = std::chrono::steady_clock::now();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, pp.data(), (int)pp.size(), 0, &err), &st, &err)) { puts(err.message); return 1; }
    const scipis::Manifest after = scipis::read_current(idx).m;
    size_t bi[2] = {0, 0}, ai[2] = {0, 0};
    uint64_t newbytes = 0;
    for (auto& s : before.segments) bi[s.indexer]++;
    for (auto& s : after.segments) { ai[s.indexer]++; }
    printf("batch %d: %.1f ms, read %llu bytes, appended %llu added %llu deleted %llu; segments indexer0 %zu->%zu indexer1 %zu->%zu\n", b,
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3, (unsigned long long)st.bytes_read,
           (unsigned long long)st.files_appended, (unsigned long long)st.files_added, (unsigned long long)st.files_deleted, bi[0], ai[0], bi[1], ai[1]);
    for (auto& s : after.segments) { bool old = false; for (auto& t : before.segments) old = old || (t.indexer == s.indexer && t.seg == s.seg); if (!old) printf("   new seg %u/%u docs %llu bytes %llu\n", s.indexer, s.seg, (unsigned long long)s.docs, (unsigned long long)scipis::segment_bytes(s)); }
    (void)newbytes;
  }
}
