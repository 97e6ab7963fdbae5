// The fixed cost of a refresh: CPU (getrusage) per refresh of one named
// path that did not change, N times, on an index append_profile made
// (SCRATCH/idx of SCRATCH/tree).
//   bench/build/noop_refresh SCRATCH N
#include <cstdio>
#include <cstdlib>
#include <string>

#include "process_cpu.h"

#include "scipis_engine.h"

static double cpu() { return process_cpu_s(); }

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string idx = std::string(argv[1]) + "/idx", tree = std::string(argv[1]) + "/tree",
                    big = tree + "/big.log";
  const int n = atoi(argv[2]);
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  scipis_error err;
  scipis_build_stats st;
  const char* p = big.c_str();
  const double c0 = cpu();
  for (int i = 0; i < n; i++) {
    scipis_build* b = scipis_refresh_start(idx.c_str(), tree.c_str(), &o, &p, 1, 0, &err);
    if (!b) return puts(err.message), 1;
    while (!scipis_build_wait(b, 2)) {
    }
    if (scipis_build_finish(b, &st, &err)) return puts(err.message), 1;
    if (st.files_added + st.files_changed + st.files_appended + st.files_deleted != 0)
      return puts("the path changed"), 1;
  }
  printf("no-op refresh of one path: %.3f ms cpu each\n", (cpu() - c0) / n * 1e3);
  return 0;
}
