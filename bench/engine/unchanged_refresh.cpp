// Whole-tree refreshes of an unchanged tree, ROUNDS times (the index is
// built first when INDEX_DIR does not exist): wall and CPU (getrusage) of each.
//   bench/build/unchanged_refresh TREE INDEX_DIR ROUNDS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include "scipis_engine.h"
static double cpu(){ rusage u; getrusage(RUSAGE_SELF,&u); return u.ru_utime.tv_sec+u.ru_stime.tv_sec+(u.ru_utime.tv_usec+u.ru_stime.tv_usec)*1e-6; }
static int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) { if (!b) return -1; while (!scipis_build_wait(b, 2)) {} return scipis_build_finish(b, st, err); }
int main(int argc, char** argv) {
  if (argc != 4) { fprintf(stderr, "usage: unchanged_refresh TREE INDEX_DIR ROUNDS\n"); return 2; }
  std::string tree = argv[1], idx = argv[2]; int rounds = atoi(argv[3]);
  scipis_options o; scipis_options_init(&o);
  scipis_error err; scipis_build_stats st;
  if (!std::filesystem::exists(idx)) { auto t0 = std::chrono::steady_clock::now(); if (finish(scipis_build_start(idx.c_str(), tree.c_str(), &o, &err), &st, &err)) { puts(err.message); return 1; } printf("built %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); }
  for (int r = 0; r < rounds; r++) {
    auto t0 = std::chrono::steady_clock::now(); double c0 = cpu();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, nullptr, 0, 0, &err), &st, &err)) { puts(err.message); return 1; }
    printf("refresh %.1f ms wall, %.1f ms cpu, checked %llu\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3, (cpu()-c0)*1e3, (unsigned long long)st.files_checked);
  }
}
