// What a synced append to a journal-like file costs the calling process
// (getrusage CPU) and wall time, three ways: appending (the file grows:
// fsync commits its new size and blocks), overwriting a zero-written
// region with fsync, or with fdatasync (no metadata to commit).
//   bench/build/sync_probe DIR RECORD_BYTES [N]
#include <fcntl.h>
#include "process_cpu.h"
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

static double cpu() { return process_cpu_s(); }

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string path = std::string(argv[1]) + "/sync_probe.dat";
  const size_t rec = static_cast<size_t>(atol(argv[2]));
  const int n = argc > 3 ? atoi(argv[3]) : 200;
  const char* names[] = {"append + fsync", "overwrite zeros + fsync", "overwrite zeros + fdatasync"};
  for (int mode = 0; mode < 3; mode++) {
    unlink(path.c_str());
    const int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0) return perror("open"), 1;
    const size_t step = (rec + 4095) & ~size_t{4095};
    if (mode > 0) {
      const std::string zeros(step * static_cast<size_t>(n), '\0');
      if (pwrite(fd, zeros.data(), zeros.size(), 0) != static_cast<ssize_t>(zeros.size())) return 1;
      fsync(fd);
    }
    const std::string buf(rec, 'x');
    const double c0 = cpu();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++) {
      if (pwrite(fd, buf.data(), rec, static_cast<off_t>(step * static_cast<size_t>(i))) != static_cast<ssize_t>(rec)) return 1;
      if ((mode < 2 ? fsync(fd) : fdatasync(fd)) != 0) return 1;
    }
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("%-28s record %zu B: cpu %.3f ms, wall %.3f ms per synced write\n", names[mode], rec,
           (cpu() - c0) / n * 1e3, w / n * 1e3);
    close(fd);
  }
  unlink(path.c_str());
  return 0;
}
