#include <chrono>
#include <cstdio>
#include "index/journal.h"
using namespace scipis;
int main(int argc, char** argv) {
  std::string dir = argv[1];
  int n = 2000; double t = 0; uint64_t recs = 0;
  for (int i = 0; i < n; i++) {
    forget_current(dir);
    auto t0 = std::chrono::steady_clock::now();
    CurrentState st = read_current(dir);
    t += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    recs = st.records;
  }
  printf("records %llu: read_current cold %.1f us\n", (unsigned long long)recs, t / n * 1e6);
}
