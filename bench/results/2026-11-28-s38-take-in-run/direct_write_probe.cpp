// CPU per 16 KiB record: buffered pwrite + fdatasync vs O_DIRECT pwrite + fdatasync, on a zero-filled file.
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <algorithm>
static double tcpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
int main(int argc, char** argv) {
  const char* path = argv[1]; int mode = atoi(argv[2]); int n = atoi(argv[3]);
  const size_t rec = 16384, size = 4u << 20;
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  std::vector<char> z(size, 0); if (pwrite(fd, z.data(), size, 0) != (ssize_t)size) return 1; fsync(fd); close(fd);
  void* buf; posix_memalign(&buf, 4096, rec); memset(buf, 'x', rec);
  fd = open(path, O_RDWR | (mode == 1 ? O_DIRECT : 0));
  std::vector<double> c;
  for (int i = 0; i < n; i++) {
    usleep(120000);
    double t0 = tcpu();
    if (pwrite(fd, buf, rec, (off_t)(i % 200) * rec) != (ssize_t)rec) { perror("pwrite"); return 1; }
    fdatasync(fd);
    c.push_back(tcpu() - t0);
  }
  std::sort(c.begin(), c.end());
  double s = 0; for (double x : c) s += x;
  printf("mode %s: cpu ms p50 %.3f mean %.3f\n", mode ? "direct" : "buffered", c[c.size()/2], s / c.size());
}
