// The process's CPU time so far (getrusage: user + system of every thread),
// in seconds, for the engine benchmarks that time refreshes and syncs.
#pragma once

#include <sys/resource.h>

inline double process_cpu_s() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
