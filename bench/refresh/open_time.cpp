// Times opening a search handle on a collection's index and two top-10
// searches ("error failed") on it, averaged over N rounds: what a backend
// pays after each refresh replaced the generation it had open.
//
//   open_time INDEX_DIR [N] [update]
// With "update", the handle is opened once and each round moves it to the
// manifest again with scipis_index_update (as a backend does after a
// refresh; here every segment is unchanged, the best case).
//
// Build (after make, from the repo):
//   g++ -std=c++20 -O2 -DNDEBUG -pthread -Isrc/core -o open_time bench/refresh/open_time.cpp
//     $(ls src/core/*/*.o src/core/*.o) -lnuma -labsl_raw_hash_set -labsl_hash -labsl_city
//     -labsl_low_level_hash -lpthread   (one line)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "scipis_engine.h"
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: open_time INDEX_DIR [N]\n");
    return 2;
  }
  const char* q = "error failed";
  const int n = argc > 2 ? std::max(1, std::atoi(argv[2])) : 30;
  const bool update = argc > 3 && std::strcmp(argv[3], "update") == 0;
  double to = 0, ts = 0, ts2 = 0;
  scipis_error err;
  scipis_index* kept = update ? scipis_index_open(argv[1], &err) : nullptr;
  if (update && !kept) { printf("open: %s\n", err.message); return 1; }
  for (int i = 0; i < n; i++) {
    double t0 = now();
    scipis_index* ix = kept;
    if (update ? scipis_index_update(ix, &err) != 0 : !(ix = scipis_index_open(argv[1], &err))) {
      printf("open: %s\n", err.message);
      return 1;
    }
    double t1 = now();
    scipis_docs d;
    if (scipis_search(ix, q, strlen(q), 10, SCIPIS_BM25, SCIPIS_MATCH_ANY, &d, &err)) { printf("%s\n", err.message); return 1; }
    scipis_docs_free(&d);
    double t2 = now();
    if (scipis_search(ix, q, strlen(q), 10, SCIPIS_BM25, SCIPIS_MATCH_ANY, &d, &err)) { printf("%s\n", err.message); return 1; }
    scipis_docs_free(&d);
    double t3 = now();
    if (!update) scipis_index_close(ix);
    to += t1 - t0; ts += t2 - t1; ts2 += t3 - t2;
  }
  printf("open %.2f ms, first search %.2f ms, second search %.2f ms\n", 1000 * to / n, 1000 * ts / n, 1000 * ts2 / n);
}
