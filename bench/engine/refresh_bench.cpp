// Times refreshes of a collection's index through the engine alone (no
// server): builds INDEX_DIR from ROOT when it holds no index, then runs
// RUNS refreshes of the tree as it is and prints each one's seconds and
// counts as a JSON line. For profiling a refresh of an unchanged tree.
//
//   bench/build/refresh_bench INDEX_DIR ROOT [RUNS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "scipis_engine.h"

namespace {
int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) {
  if (!b) return -1;
  while (!scipis_build_wait(b, 10)) {
  }
  return scipis_build_finish(b, st, err);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: refresh_bench INDEX_DIR ROOT [RUNS]\n");
    return 2;
  }
  const int runs = argc > 3 ? std::atoi(argv[3]) : 5;
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  scipis_error err;
  scipis_build_stats st;
  int64_t ns;
  if (!scipis_fresh_as_of(argv[1], &ns)) {
    if (finish(scipis_build_start(argv[1], argv[2], &o, &err), &st, &err) != 0) {
      std::fprintf(stderr, "build: %s\n", err.message);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // past the racy window
  }
  for (int r = 0; r < runs; r++) {
    const auto t0 = std::chrono::steady_clock::now();
    if (finish(scipis_refresh_start(argv[1], argv[2], &o, nullptr, 0, 0, &err), &st, &err) != 0) {
      std::fprintf(stderr, "refresh: %s\n", err.message);
      return 1;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"seconds\": %.4f, \"files\": %llu, \"added\": %llu, \"changed\": %llu, \"deleted\": %llu}\n", s,
                static_cast<unsigned long long>(st.files), static_cast<unsigned long long>(st.files_added),
                static_cast<unsigned long long>(st.files_changed),
                static_cast<unsigned long long>(st.files_deleted));
  }
  return 0;
}
