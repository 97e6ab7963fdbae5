// Path patterns through the engine's C door alone: what a new backend pays
// for its first scipis_locate (the collection opened, each segment's file
// data and path trigram index mapped and checked) against a handle that has
// answered before. No PostgreSQL, so the difference is the engine's own.
//
//   locate_open_bench INDEX_DIR PATTERNS [RUNS [fresh]] > OUT.csv
//
// PATTERNS: one pattern a line (bench/paths/locate_bench.py's, or the
// pattern column of its locate.csv). Per pattern, RUNS times each: open +
// locate ("fresh"; the close after it is not timed), and locate on one
// handle kept open ("warm");
// the CSV has the medians in microseconds and the match count. The last
// line on stderr: the medians over all patterns. With "fresh", only the
// fresh runs (for a profile of what a new handle adds).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "scipis_engine.h"

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The number of matches, or -1 (the error printed).
long locate(scipis_index* ix, const std::string& p) {
  scipis_docs d;
  scipis_error err;
  if (scipis_locate(ix, p.data(), p.size(), &d, &err) != 0) {
    std::fprintf(stderr, "locate %s: %s\n", p.c_str(), err.message);
    return -1;
  }
  const long n = static_cast<long>(d.n);
  scipis_docs_free(&d);
  return n;
}

scipis_index* open_or_die(const char* dir) {
  scipis_error err;
  scipis_index* ix = scipis_index_open(dir, &err);
  if (!ix) {
    std::fprintf(stderr, "open %s: %s\n", dir, err.message);
    std::exit(1);
  }
  return ix;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: locate_open_bench INDEX_DIR PATTERNS [RUNS]\n");
    return 2;
  }
  const char* dir = argv[1];
  const int runs = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  const bool fresh_only = argc > 4 && std::string(argv[4]) == "fresh";
  std::vector<std::string> pats;
  std::ifstream in(argv[2]);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) pats.push_back(line);
  scipis_index* warm = open_or_die(dir);
  if (!fresh_only)
    for (const auto& p : pats) locate(warm, p);  // maps everything once
  std::vector<double> all_fresh, all_warm, all_open;
  std::printf("pattern,count,fresh_us,open_us,warm_us\n");
  for (const auto& p : pats) {
    std::vector<double> fresh, opened, hot;
    long n = 0;
    for (int r = 0; r < runs; r++) {
      const double t0 = now_us();
      scipis_index* ix = open_or_die(dir);
      const double t1 = now_us();
      n = locate(ix, p);
      const double t2 = now_us();
      scipis_index_close(ix);  // a backend unmaps at exit, after its query
      fresh.push_back(t2 - t0);
      opened.push_back(t1 - t0);
      if (fresh_only) continue;
      const double t3 = now_us();
      locate(warm, p);
      hot.push_back(now_us() - t3);
    }
    std::string q;
    for (const char c : p) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    std::printf("\"%s\",%ld,%.1f,%.1f,%.1f\n", q.c_str(), n, median(fresh), median(opened),
                median(hot));
    all_fresh.push_back(median(fresh));
    all_open.push_back(median(opened));
    all_warm.push_back(median(hot));
  }
  scipis_index_close(warm);
  std::fprintf(stderr, "%zu patterns, %d runs: p50 fresh %.1f us (open %.1f), warm %.1f us\n",
               pats.size(), runs, median(all_fresh), median(all_open), median(all_warm));
  return 0;
}
