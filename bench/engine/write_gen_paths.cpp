// Writes the PATHS file (index/gen_paths.h) into an index's current
// generation, as a build's commit does: for A/B runs of
// locate_open_bench on one index built before PATHS existed.
//
//   write_gen_paths INDEX_DIR
//
// Run it while nothing refreshes the index; the file is then the
// collection's own (chown it to the server's user).
#include <chrono>
#include <cstdio>

#include "index/gen_paths.h"
#include "index/manifest.h"
#include "util/error.h"
#include "util/fileio.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_gen_paths INDEX_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  try {
    std::string bytes;
    if (!scipis::read_file(scipis::manifest_path(dir), bytes)) {
      std::fprintf(stderr, "%s: no manifest\n", dir.c_str());
      return 1;
    }
    const auto m = scipis::Manifest::decode(scipis::manifest_path(dir), bytes);
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t n = scipis::write_gen_paths(dir, m.gen_dir(dir), m);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s/%s: %llu bytes, %zu segments, %.2f s\n", m.gen_dir(dir).c_str(), scipis::kGenPathsFile,
                static_cast<unsigned long long>(n), m.segments.size(), s);
  } catch (const scipis::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
