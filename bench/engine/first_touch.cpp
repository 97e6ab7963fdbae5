// What a page costs the first time a process touches it, against a page
// it touched before: maps N MiB (2 MiB pages advised, or 4 KiB), writes a
// byte per 4 KiB page, unmaps, three times. On a VM whose host reclaims
// the guest's free memory, the first round pays for the host's faults too.
//   g++ -O2 -o first_touch bench/engine/first_touch.cpp && ./first_touch 512 1
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: first_touch MIB HUGE(0|1)\n");
    return 2;
  }
  const size_t bytes = std::strtoull(argv[1], nullptr, 10) << 20;
  const bool huge = std::atoi(argv[2]) != 0;
  constexpr size_t kHuge = size_t{2} << 20;
  for (int round = 1; round <= 3; round++) {
    void* raw = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
      std::perror("mmap");
      return 1;
    }
    auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
    madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"round\":%d,\"mib\":%zu,\"huge\":%d,\"first_touch_s\":%.3f,\"gb_per_s\":%.2f}\n", round,
                bytes >> 20, huge ? 1 : 0, s, static_cast<double>(bytes) / s / 1e9);
    munmap(raw, bytes + kHuge);
  }
  return 0;
}
