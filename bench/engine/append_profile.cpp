// A 1 KiB append refreshed by path, N times: wall and CPU (getrusage) per
// refresh, for profiling the fixed cost of a refresh (perf, strace). The
// tail tier is merged when it piles up, as the job workers do, outside
// the timed part (reported apart, the check whether to merge included).
//   bench/build/append_profile SCRATCH LOG_DIR N [x: also build the log alone]
// AP_TRACE=1 prints what followed each refresh.
// AP_NO_MERGE=1 leaves the tail alone (segments pile up: a profile of the
// refresh alone, whose cost then grows with them).
// With x, the log is also re-indexed whole by a refresh (a byte rewritten
// in place) and built alone, three times each: the costs an append is
// measured against.
// AP_NO_SYNC=1 turns fsync off (what the commit's syncs cost; not durable).
// AP_DUMP=1 prints each refresh's CPU ms (R <refresh> <ms>).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include <algorithm>
#include <numeric>
#include "scipis_engine.h"
#include "util/fileio.h"
#include <sys/resource.h>
#include "process_cpu.h"
static double cpu() { return process_cpu_s(); }
static double sys_cpu(){ rusage u; getrusage(RUSAGE_SELF,&u); return u.ru_stime.tv_sec+u.ru_stime.tv_usec*1e-6; }
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
static int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) {
  if (!b) return -1;
  while (!scipis_build_wait(b, 2)) {}
  return scipis_build_finish(b, st, err);
}
int main(int argc, char** argv) {
  if (getenv("AP_NO_SYNC")) scipis::set_sync_enabled(false);
  std::string scratch = argv[1], src = argv[2]; int n = atoi(argv[3]);
  std::string tree = scratch + "/tree", idx = scratch + "/idx";
  scipis_options o; scipis_options_init(&o); o.indexer_threads = 2;
  scipis_error err; scipis_build_stats st;
  if (!fs::exists(idx)) {
    fs::create_directories(tree);
    std::string text;
    for (auto& e : fs::recursive_directory_iterator(src)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      text.append(std::istreambuf_iterator<char>(in), {});
      if (text.size() > (21u << 20)) break;
    }
    std::ofstream(tree + "/big.log", std::ios::binary) << text.substr(0, 20u << 20);
    for (int i = 0; i < 199; i++) std::ofstream(tree + "/f" + std::to_string(i) + ".log") << text.substr(i * 65536, 256 << 10);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    if (finish(scipis_build_start(idx.c_str(), tree.c_str(), &o, &err), &st, &err)) { puts(err.message); return 1; }
  }
  std::string big = tree + "/big.log";
  std::vector<double> ts, cs, ss;
  int merges = 0, merged = 0; double merge_cpu = 0; std::string trace;
  for (int r = 0; r < n; r++) {
    std::ofstream(big, std::ios::app | std::ios::binary) << std::string(1000, 'a' + r % 26) + " line " + std::to_string(r) + "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    const char* p = big.c_str();
    auto t0 = Clock::now(); double c0 = cpu(), s0 = sys_cpu();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, &p, 1, 0, &err), &st, &err)) { puts(err.message); return 1; }
    ts.push_back(std::chrono::duration<double>(Clock::now() - t0).count() * 1e3); cs.push_back((cpu()-c0)*1e3); ss.push_back((sys_cpu()-s0)*1e3);
    if (st.files_appended != 1) { puts("not an append"); return 1; }
    if (getenv("AP_DUMP")) printf("R %d %.3f\n", r, cs.back());
    const double c1 = cpu();  // the check counts as the merge's
    if (!getenv("AP_NO_MERGE") && scipis_compact_needed(idx.c_str(), 0)) {
      if (finish(scipis_compact_start(idx.c_str(), &o, 0, &err), &st, &err)) { puts(err.message); return 1; }
      merges++; merge_cpu += (cpu() - c1) * 1e3;
      if (st.segments_merged > 0) merged++;
      trace += st.segments_merged > 0 ? 'M' : 'm';
      if (getenv("AP_TRACE")) printf("merge after refresh %d: %llu segments, %.2f ms cpu, %llu left, %llu chain links\n", r, (unsigned long long)st.segments_merged, (cpu() - c1) * 1e3, (unsigned long long)st.segments, (unsigned long long)st.chain_links);
    } else {
      trace += '.';
      merge_cpu += (cpu() - c1) * 1e3;
    }
  }
  printf("tail merges %d (%d merging segments), cpu ms %.2f in all (%.3f per refresh)\n", merges, merged, merge_cpu, merge_cpu / n);
  if (getenv("AP_TRACE")) printf("after each refresh (. none, m nothing merged, M merged): %s\n", trace.c_str());
  std::sort(ts.begin(), ts.end()); std::sort(cs.begin(), cs.end()); std::sort(ss.begin(), ss.end()); printf("cpu ms p50 %.2f (system p50 %.2f) mean %.3f\n", cs[cs.size()/2], ss[ss.size()/2], std::accumulate(cs.begin(), cs.end(), 0.0) / cs.size());
  // The other way to see the append: the file re-indexed whole by a
  // refresh, as a change that is not an append is (a byte near its start
  // rewritten in place, its size kept).
  if (argc > 4) for (int r = 0; r < 3; r++) {
    { std::fstream f(big, std::ios::in | std::ios::out | std::ios::binary); f.seekp(100 + r); f.put(static_cast<char>('A' + r)); }
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    const char* p = big.c_str();
    auto t0 = Clock::now(); double c0 = cpu();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, &p, 1, 0, &err), &st, &err)) { puts(err.message); return 1; }
    if (st.files_changed != 1 || st.bytes_read < (20u << 20)) { puts("not a re-index"); return 1; }
    printf("refresh re-indexing it: %.2f ms wall, %.2f ms cpu\n", std::chrono::duration<double>(Clock::now() - t0).count() * 1e3, (cpu()-c0)*1e3);
  }
  if (argc > 4) { std::string a = scratch + "/alone", ai = scratch + "/alone-idx"; fs::create_directories(a); fs::copy_file(big, a + "/big.log", fs::copy_options::overwrite_existing);
    for (int r = 0; r < 3; r++) { fs::remove_all(ai); auto t0 = Clock::now(); double c0 = cpu(); if (finish(scipis_build_start(ai.c_str(), a.c_str(), &o, &err), &st, &err)) return 1; printf("build alone: %.2f ms wall, %.2f ms cpu\n", std::chrono::duration<double>(Clock::now() - t0).count() * 1e3, (cpu()-c0)*1e3); } }
  printf("refresh ms: p50 %.2f min %.2f max %.2f segments %llu read %llu\n", ts[ts.size()/2], ts[0], ts.back(), (unsigned long long)st.segments, (unsigned long long)st.bytes_read);
}
