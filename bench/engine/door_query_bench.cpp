// Top-k latency through the engine's C door (scipis_engine.h) alone, so
// that the same source builds against any commit's engine: format_ab.sh
// times an older format against this one on the same tree and queries.
//
//   door_query_bench build TREE INDEX_DIR     (one reader, one indexer)
//   door_query_bench compact INDEX_DIR        (every segment merged, as
//                                             scipis_compact; engines that
//                                             have compaction only)
//   door_query_bench settle INDEX_DIR         (a build's segments merged,
//                                             as the merge job after a
//                                             build does)
//   door_query_bench query INDEX_DIR QUERIES_TSV PASSES K > OUT.csv
//
// query: every query of QUERIES_TSV (pick_queries' output) in PASSES
// passes, query order the same each pass; per query the median
// microseconds of its passes and a digest of its answer (paths and scores
// to the last bit), so that two engines' answers can be compared too.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scipis_engine.h"

namespace {

int build(const char* tree, const char* dir) {
  scipis_options o;
  scipis_options_init(&o);
  // One reader and one indexer: the same segments every build, whichever
  // engine builds them, so that two engines' latencies compare layouts
  // that differ by their format alone.
  o.reader_threads = 1;
  o.indexer_threads = 1;
  scipis_error err;
  scipis_build* b = scipis_build_start(dir, tree, &o, &err);
  if (!b) {
    std::fprintf(stderr, "build: %s\n", err.message);
    return 1;
  }
  while (!scipis_build_wait(b, 100)) {
  }
  scipis_build_stats st;
  if (scipis_build_finish(b, &st, &err)) {
    std::fprintf(stderr, "build: %s\n", err.message);
    return 1;
  }
  return 0;
}

int compact(const char* dir, bool settle) {
#ifdef SCIPIS_COMPACT_ALL
#ifdef SCIPIS_COMPACT_SETTLE
  const int flags = settle ? SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE : SCIPIS_COMPACT_ALL;
#else
  if (settle) {
    std::fprintf(stderr, "settle: this engine has no merge jobs\n");
    return 2;
  }
  const int flags = SCIPIS_COMPACT_ALL;
#endif
  scipis_options o;
  scipis_options_init(&o);
  o.reader_threads = 1;
  o.indexer_threads = 1;
  scipis_error err;
  scipis_build* b = scipis_compact_start(dir, &o, flags, &err);
  if (!b) {
    std::fprintf(stderr, "compact: %s\n", err.message);
    return 1;
  }
  while (!scipis_build_wait(b, 100)) {
  }
  scipis_build_stats st;
  if (scipis_build_finish(b, &st, &err)) {
    std::fprintf(stderr, "compact: %s\n", err.message);
    return 1;
  }
  std::fprintf(stderr, "compact: %llu segments merged into %llu in %.3f s\n",
               static_cast<unsigned long long>(st.segments_merged), static_cast<unsigned long long>(st.segments),
               st.seconds);
  return 0;
#else
  (void)dir;
  (void)settle;
  std::fprintf(stderr, "compact: this engine has no compaction\n");
  return 2;
#endif
}

uint64_t digest(const scipis_docs& d) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  };
  for (size_t i = 0; i < d.n; i++) {
    mix(d.docs[i].path, d.docs[i].path_len);
    mix(&d.docs[i].score, sizeof(double));
  }
  return h;
}

int query(const char* dir, const char* tsv, int passes, int64_t k) {
  scipis_error err;
  scipis_index* ix = scipis_index_open(dir, &err);
  if (!ix) {
    std::fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  struct Q {
    std::string id, kind, text, dfs;
    std::vector<double> us;
    uint64_t digest = 0;
  };
  std::vector<Q> qs;
  std::ifstream in(tsv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream f(line);
    Q q;
    std::getline(f, q.id, '\t');
    std::getline(f, q.kind, '\t');
    std::getline(f, q.text, '\t');
    std::getline(f, q.dfs, '\t');
    qs.push_back(q);
  }
  for (int p = 0; p < passes; p++) {
    for (Q& q : qs) {
      scipis_docs d;
      const auto t0 = std::chrono::steady_clock::now();
      if (scipis_search(ix, q.text.data(), q.text.size(), k, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &d,
                        &err)) {
        std::fprintf(stderr, "search %s: %s\n", q.text.c_str(), err.message);
        return 1;
      }
      const auto t1 = std::chrono::steady_clock::now();
      q.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      q.digest = digest(d);
      scipis_docs_free(&d);
    }
  }
  std::printf("id,kind,dfs,us,digest\n");
  for (Q& q : qs) {
    std::sort(q.us.begin(), q.us.end());
    std::printf("%s,%s,\"%s\",%.2f,%016" PRIx64 "\n", q.id.c_str(), q.kind.c_str(), q.dfs.c_str(),
                q.us[q.us.size() / 2], q.digest);
  }
  scipis_index_close(ix);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "build") == 0) return build(argv[2], argv[3]);
  if (argc == 3 && std::strcmp(argv[1], "compact") == 0) return compact(argv[2], false);
  if (argc == 3 && std::strcmp(argv[1], "settle") == 0) return compact(argv[2], true);
  if (argc == 6 && std::strcmp(argv[1], "query") == 0)
    return query(argv[2], argv[3], std::atoi(argv[4]), std::atoll(argv[5]));
  std::fprintf(stderr,
               "usage: door_query_bench build TREE INDEX_DIR\n"
               "       door_query_bench compact INDEX_DIR\n"
               "       door_query_bench settle INDEX_DIR\n"
               "       door_query_bench query INDEX_DIR QUERIES_TSV PASSES K\n");
  return 2;
}
