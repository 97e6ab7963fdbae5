// File times as the catalog keeps them: signed 64-bit nanoseconds since
// the Unix epoch, which span 1677-09-21 to 2262-04-11; a time outside
// (ext4 allows 1901 to 2446) is clamped to the nearest end rather than
// wrapped into a wrong date.
#pragma once

#include <sys/stat.h>
#include <time.h>

#include <cstdint>

namespace scipis {

inline int64_t timespec_ns(const struct timespec& t) {
  constexpr int64_t kNs = 1000000000;
  const int64_t s = static_cast<int64_t>(t.tv_sec);
  if (s > (INT64_MAX - t.tv_nsec) / kNs) return INT64_MAX;
  if (s < INT64_MIN / kNs) return INT64_MIN;
  return s * kNs + t.tv_nsec;  // tv_nsec in [0, 1e9): no overflow below
}

// CLOCK_REALTIME now, in the same units.
inline int64_t realtime_ns() {
  struct timespec t;
  ::clock_gettime(CLOCK_REALTIME, &t);
  return timespec_ns(t);
}

}  // namespace scipis
