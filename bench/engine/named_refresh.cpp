// A named refresh of one file after a line was appended to it, N times,
// through the engine alone: what a change log's or a watcher's refresh of
// one path costs on an index (any size; its tombstones and catalog are
// what grows). Prints the median wall time.
//
//   bench/build/named_refresh INDEX_DIR ROOT FILE N
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scipis_engine.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: named_refresh INDEX_DIR ROOT FILE N\n");
    return 2;
  }
  const std::string idx = argv[1], tree = argv[2], file = argv[3];
  const int n = std::max(1, std::atoi(argv[4]));
  scipis_options o;
  scipis_options_init(&o);
  scipis_error err;
  scipis_build_stats st;
  std::vector<double> t;
  for (int i = 0; i < n; i++) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0 || ::write(fd, "more words here ok\n", 19) != 19) return std::perror(file.c_str()), 1;
    ::close(fd);
    const char* p = file.c_str();
    const auto t0 = std::chrono::steady_clock::now();
    scipis_build* b = scipis_refresh_start(idx.c_str(), tree.c_str(), &o, &p, 1, 0, &err);
    if (!b) return std::puts(err.message), 1;
    while (!scipis_build_wait(b, 5)) {
    }
    if (scipis_build_finish(b, &st, &err)) return std::puts(err.message), 1;
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("median %.3f ms (of %d; %llu tombstoned documents at the end)\n", t[t.size() / 2] * 1e3, n,
              static_cast<unsigned long long>(st.deleted_docs));
  return 0;
}
