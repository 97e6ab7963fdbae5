// CREATE INDEX's engine part without the server: the first N text columns
// of a bench/am rows file fed to scipis_am_build_* by one caller thread,
// as the backend feeds them; wall and process CPU (all threads) per run.
//   bench/build/am_build_bench ROWS.tsv N [threads] [memory MiB] [runs]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "scipis_engine.h"

static double cpu_s() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ROWS.tsv N [threads] [memory MiB] [runs]\n", argv[0]);
    return 2;
  }
  const size_t n = std::strtoull(argv[2], nullptr, 10);
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  const uint64_t memory = (argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1024) << 20;
  const int runs = argc > 5 ? std::atoi(argv[5]) : 3;
  std::vector<std::string> rows;
  std::ifstream in(argv[1]);
  std::string line;
  size_t bytes = 0;
  while (rows.size() < n && std::getline(in, line)) {
    // id, host, ts, text: the text is the fourth field.
    size_t at = 0;
    for (int f = 0; f < 3 && at != std::string::npos; f++) at = line.find('\t', at) + 1;
    if (at == 0 || at > line.size()) continue;
    rows.push_back(line.substr(at));
    bytes += rows.back().size();
  }
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  for (int r = 0; r < runs; r++) {
    scipis_error err;
    const double c0 = cpu_s();
    const auto t0 = std::chrono::steady_clock::now();
    scipis_am_build* b = scipis_am_build_start(delim, threads, memory, 0, &err);
    if (!b) return std::puts(err.message), 1;
    size_t segs = 0, seg_bytes = 0;
    auto take = [&](int ms) {
      scipis_am_blob* blob = nullptr;
      const int t = scipis_am_build_take(b, ms, &blob, &err);
      if (t < 0) std::puts(err.message), std::exit(1);
      if (t == 1) {
        size_t len;
        scipis_am_blob_data(blob, &len);
        segs++;
        seg_bytes += len;
        scipis_am_blob_free(blob);
      }
      return t;
    };
    for (size_t i = 0; i < rows.size(); i++) {
      int a;
      while ((a = scipis_am_build_add(b, (uint64_t{i / 100 + 1} << 16) | (i % 100 + 1), rows[i].data(),
                                      rows[i].size(), 0, nullptr, &err)) == 1)
        take(10);
      if (a < 0) return std::puts(err.message), 1;
    }
    int f;
    while ((f = scipis_am_build_finish_input(b, &err)) == 1) take(10);
    if (f < 0) return std::puts(err.message), 1;
    while (take(100) != 2) {
    }
    scipis_am_build_free(b);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("rows %zu MiB %.1f threads %d: wall %.3f s cpu %.3f s, %zu segments %.1f MiB\n",
                rows.size(), bytes / 1048576.0, threads, wall, cpu_s() - c0, segs,
                seg_bytes / 1048576.0);
  }
}
