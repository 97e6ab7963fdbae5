// What memory costs on this machine, for reading the engine's profiles:
// the first touch of a fresh anonymous mapping (on huge pages, the same
// with MADV_POPULATE_WRITE, and on 4 KiB pages) against writing it again,
// and the latency of dependent random loads over regions of growing size
// (a pointer chase on huge pages). One JSON line per measurement.
//   build/page_cost [--touch-mib 256]
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace {

constexpr size_t kHuge = size_t{2} << 20;

char* map_aligned(size_t bytes, bool huge) {
  void* raw = ::mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(uintptr_t{kHuge} - 1));
  (void)::madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return p;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// mode 0: huge pages, touched a byte per 4 KiB; 1: MADV_POPULATE_WRITE;
// 2: 4 KiB pages, touched a byte each.
void first_touch(size_t mib, int mode) {
  const size_t n = mib << 20;
  const auto t0 = std::chrono::steady_clock::now();
  char* p = map_aligned(n, mode != 2);
  if (mode == 1) {
    if (::madvise(p, n, MADV_POPULATE_WRITE) != 0) std::perror("MADV_POPULATE_WRITE");
  } else {
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
  }
  const double first = ms_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  std::memset(p, 2, n);
  const double again = ms_since(t1);
  static const char* const kMode[] = {"huge", "huge_populate", "4k"};
  std::printf("{\"first_touch\":\"%s\",\"mib\":%zu,\"ms\":%.1f,\"ms_per_mib\":%.3f,\"rewrite_ms_per_mib\":%.3f}\n",
              kMode[mode], mib, first, first / static_cast<double>(mib), again / static_cast<double>(mib));
  ::munmap(p, n);
}

void chase(size_t mib) {
  const size_t n = mib << 20, lines = n / 64;
  char* p = map_aligned(n, true);
  std::vector<uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937(1));
  for (size_t i = 0; i < lines; i++) {
    const uint64_t next = uint64_t{order[(i + 1) % lines]} * 64;
    std::memcpy(p + uint64_t{order[i]} * 64, &next, 8);
  }
  uint64_t at = 0;
  const size_t loads = 4000000;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < loads; i++) std::memcpy(&at, p + at, 8);
  const double ns = ms_since(t0) * 1e6 / static_cast<double>(loads);
  std::printf("{\"chase_mib\":%zu,\"ns_per_load\":%.1f,\"end\":%llu}\n", mib, ns,
              static_cast<unsigned long long>(at % 2));
  ::munmap(p, n);
}

}  // namespace

int main(int argc, char** argv) {
  size_t touch = 256;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--touch-mib")) touch = std::strtoull(argv[i + 1], nullptr, 10);
  for (int round = 0; round < 3; round++)
    for (int mode = 0; mode < 3; mode++) first_touch(touch, mode);
  for (size_t mib : {1, 4, 16, 32, 64, 128}) chase(mib);
  return 0;
}
