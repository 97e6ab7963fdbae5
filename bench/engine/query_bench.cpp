// Engine-only query timing: top-k with block skipping (topk_search) against
// scoring every posting (full_search) on the same index, per query of a
// bench run's queries.tsv, fastest of 7 alternating passes, by df bucket.
//   bench/build/query_bench INDEX_DIR QUERIES_TSV [TREE_TO_BUILD_FIRST]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <algorithm>
#include <unistd.h>
#include "scipis_engine.h"
#include "query/collection.h"
#include "query/search.h"
#include "query/topk.h"
using namespace scipis;
int main(int argc, char** argv) {
  std::string dir = argv[1];
  if (argc > 3) {
    scipis_options o; scipis_options_init(&o); o.indexer_threads = 2;
    scipis_error err;
    scipis_build* b = scipis_build_start(dir.c_str(), argv[3], &o, &err);
    while (!scipis_build_wait(b, 100)) {}
    scipis_build_stats st;
    if (scipis_build_finish(b, &st, &err)) { printf("build: %s\n", err.message); return 1; }
  }
  Collection c(dir);
  std::ifstream q(argv[2]);
  std::string line; std::getline(q, line);
  double sum[2][2][2] = {}; int cnt[2][2] = {};
  while (std::getline(q, line)) {
    std::stringstream ss(line); std::string id, kind, query, dfs;
    std::getline(ss, id, '\t'); std::getline(ss, kind, '\t'); std::getline(ss, query, '\t'); std::getline(ss, dfs, '\t');
    int maxdf = 0; { std::stringstream d(dfs); std::string x; while (std::getline(d, x, ',')) maxdf = std::max(maxdf, std::stoi(x)); }
    std::replace(query.begin(), query.end(), ',', ' ');
    auto terms = parse_query(c.tokenizer(), query);
    double best[2] = {1e9, 1e9};
    for (int rep = 0; rep < 7; rep++) for (int m = 0; m < 2; m++) {
      auto t0 = std::chrono::steady_clock::now();
      auto h = m ? full_search(c, terms, 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY) : topk_search(c, terms, 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY);
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      best[m] = std::min(best[m], us);
    }
    int k = kind == "t3", f = maxdf >= 512;
    sum[k][f][0] += best[0]; sum[k][f][1] += best[1]; cnt[k][f]++;
  }
  for (int k = 0; k < 2; k++) for (int f = 0; f < 2; f++)
    printf("%s %s n=%d: topk mean %.1f us, full mean %.1f us\n", k ? "t3" : "t1", f ? "frequent" : "rest", cnt[k][f], sum[k][f][0]/cnt[k][f], sum[k][f][1]/cnt[k][f]);
}
