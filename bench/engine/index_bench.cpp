// Indexing through the engine alone (no server), for profiling and quick
// comparisons: builds a collection of DIR into a scratch directory RUNS
// times and prints one JSON line per build (files, wall seconds, MiB/s,
// files/s, index bytes, CPU seconds of the whole process per GiB of input
// and per file, the 1-minute load average when the build started).
//   build/index_bench --corpus DIR [--runs 3] [--indexers 2] [--readers 0]
//                     [--writers 0] [--tfidf-mib 256] [--depth 4] [--split 16] [--keep DIR]
// --keep DIR builds into DIR (which must not exist) and leaves the index
// there, to look at its files. --settle then merges the build's segments
// as a collection's merge job does (SCIPIS_COMPACT_SETTLE), outside the
// build's time, and adds its seconds and the merged index to the line.
// Run it under `perf record -g` to see where a build spends its time.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "scipis_engine.h"

namespace {

double cpu_seconds() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

double load_average() {
  double l = -1;
  std::ifstream("/proc/loadavg") >> l;
  return l;
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: index_bench --corpus DIR [--runs N] [--indexers N] [--readers N]\n"
               "                   [--writers N] [--tfidf-mib N] [--depth N] [--block-kib N] [--split N] [--keep DIR]\n"
               "                   [--settle]   (then the merge job's merge, untimed)\n"
               "                   [--flags N]   (scipis_build_start_ex flags: 3 = as jobs build)\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  std::string corpus;
  int runs = 3;
  std::string keep;
  int flags = 0;
  bool settle = false;
  for (int i = 1; i < argc; i++) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--corpus")) corpus = next();
    else if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(next());
    else if (!std::strcmp(argv[i], "--indexers")) o.indexer_threads = std::atoi(next());
    else if (!std::strcmp(argv[i], "--readers")) o.reader_threads = std::atoi(next());
    else if (!std::strcmp(argv[i], "--writers")) o.writer_threads = std::atoi(next());
    else if (!std::strcmp(argv[i], "--tfidf-mib")) o.tfidf_index_size = std::strtoull(next(), nullptr, 10) << 20;
    else if (!std::strcmp(argv[i], "--depth")) o.index_depth = std::atoi(next());
    else if (!std::strcmp(argv[i], "--block-kib")) o.block_size = std::strtoull(next(), nullptr, 10) << 10;
    else if (!std::strcmp(argv[i], "--split")) o.split_factor = std::atoi(next());
    else if (!std::strcmp(argv[i], "--keep")) keep = next();
    else if (!std::strcmp(argv[i], "--flags")) flags = std::atoi(next());
    else if (!std::strcmp(argv[i], "--settle")) settle = true;
    else usage();
  }
  if (corpus.empty() || runs < 1) usage();
  char tmpl[] = "/tmp/scipis-index-bench-XXXXXX";
  if (keep.empty() && !mkdtemp(tmpl)) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string dir = keep.empty() ? std::string(tmpl) : keep;
  int rc = 0;
  for (int r = 1; r <= runs && rc == 0; r++) {
    scipis_error err;
    scipis_build_stats st;
    const double load = load_average();
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    scipis_build* b = scipis_build_start_ex(dir.c_str(), corpus.c_str(), &o, flags, &err);
    if (b) {
      while (!scipis_build_wait(b, 100)) {
      }
      rc = scipis_build_finish(b, &st, &err);
    } else {
      rc = -1;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    if (rc != 0) {
      std::fprintf(stderr, "index_bench: %s\n", err.message);
      break;
    }
    // What a collection's merge job then does (merge_after_build), outside
    // the build's time: its seconds, and the index users then query.
    scipis_build_stats ms{};
    double merge_wall = 0;
    if (settle && scipis_compact_needed(dir.c_str(), SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE) == 1) {
      const auto m0 = std::chrono::steady_clock::now();
      scipis_build* m = scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_BESIDE | SCIPIS_COMPACT_SETTLE, &err);
      if (!m) {
        std::fprintf(stderr, "index_bench: merge: %s\n", err.message);
        rc = -1;
        break;
      }
      while (!scipis_build_wait(m, 100)) {
      }
      if (scipis_build_finish(m, &ms, &err) != 0) {
        std::fprintf(stderr, "index_bench: merge: %s\n", err.message);
        rc = -1;
        break;
      }
      merge_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - m0).count();
    }
    char merged[256] = "";
    if (settle)
      std::snprintf(merged, sizeof merged,
                    ",\"merge_s\":%.3f,\"segments_merged\":%llu,\"merged_segments\":%llu,"
                    "\"merged_index_bytes\":%llu",
                    merge_wall, static_cast<unsigned long long>(ms.segments_merged),
                    static_cast<unsigned long long>(merge_wall > 0 ? ms.segments : st.segments),
                    static_cast<unsigned long long>(merge_wall > 0 ? ms.index_bytes : st.index_bytes));
    const double mib = static_cast<double>(st.bytes) / 1048576.0;
    const double files = static_cast<double>(st.files);
    std::printf(
        "{\"run\":%d,\"files\":%llu,\"bytes\":%llu,\"mib\":%.1f,\"tokens\":%llu,"
        "\"terms\":%llu,\"segments\":%llu,\"skipped\":%llu,\"index_bytes\":%llu,"
        "\"wall_s\":%.3f,\"mib_per_s\":%.1f,\"files_per_s\":%.0f,\"cpu_s_per_gib\":%.2f,"
        "\"cpu_us_per_file\":%.1f,\"load1\":%.2f%s}\n",
        r, static_cast<unsigned long long>(st.files), static_cast<unsigned long long>(st.bytes),
        mib, static_cast<unsigned long long>(st.tokens), static_cast<unsigned long long>(st.terms),
        static_cast<unsigned long long>(st.segments), static_cast<unsigned long long>(st.skipped),
        static_cast<unsigned long long>(st.index_bytes), wall, mib / wall, files / wall,
        cpu / (mib / 1024.0), files > 0 ? cpu * 1e6 / files : 0.0, load, merged);
    std::fflush(stdout);
  }
  scipis_error err;
  if (keep.empty()) scipis_remove_dir(dir.c_str(), &err);
  return rc == 0 ? 0 : 1;
}
