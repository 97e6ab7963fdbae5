// Helpers for engine tests: scratch directories and a blocking build.
#pragma once

#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "scipis_engine.h"

namespace testutil {

// The tests with the widest grids of cases run every case in the plain
// run and every k-th under AddressSanitizer (several times slower), which
// looks for memory errors the same code paths would show in any case.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
inline bool sampled(size_t i, size_t k) { return !kSanitized || i % k == 0; }

// Whether dir is on ext4, xfs or btrfs: file systems with a page cache of
// their own that O_DIRECT bypasses and POSIX_FADV_DONTNEED empties (tmpfs
// is the page cache; overlay or network ones may keep copies).
inline bool on_block_file_system(const std::string& dir) {
  struct statfs fs;
  if (statfs(dir.c_str(), &fs) != 0) return false;
  const long t = static_cast<long>(fs.f_type);
  return t == 0xEF53 /* ext2-4 */ || t == 0x58465342 /* xfs */ || t == static_cast<long>(0x9123683E) /* btrfs */;
}

inline std::string scratch_dir() {
  char tmpl[] = "/tmp/scipis-engine-XXXXXX";
  char* d = mkdtemp(tmpl);
  return d ? std::string(d) : std::string();
}

inline void write(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

inline std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline void rm_rf(const std::string& path) {
  scipis_error err;
  scipis_remove_dir(path.c_str(), &err);
}

// Builds synchronously; returns the status and fills stats.
inline int build(const std::string& dir, const std::string& root,
                 const scipis_options& o, scipis_build_stats* stats,
                 scipis_error* err) {
  scipis_build* b = scipis_build_start(dir.c_str(), root.c_str(), &o, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, stats, err);
}

struct Result {
  std::string path;
  double score;
  uint64_t tokens;
};

inline std::vector<Result> search(const std::string& dir, const std::string& q,
                                  int64_t k = -1,
                                  scipis_ranking r = SCIPIS_TFIDF,
                                  scipis_match m = SCIPIS_MATCH_ANY,
                                  scipis_error* err_out = nullptr) {
  scipis_error err;
  std::vector<Result> out;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  if (!ix) {
    if (err_out) *err_out = err;
    return out;
  }
  scipis_docs docs;
  if (scipis_search(ix, q.data(), q.size(), k, r, m, &docs, &err) == 0) {
    for (size_t i = 0; i < docs.n; i++)
      out.push_back({std::string(docs.docs[i].path, docs.docs[i].path_len),
                     docs.docs[i].score, docs.docs[i].tokens});
    scipis_docs_free(&docs);
  }
  if (err_out) *err_out = err;
  scipis_index_close(ix);
  return out;
}

}  // namespace testutil
