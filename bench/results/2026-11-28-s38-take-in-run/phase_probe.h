#pragma once
#include <time.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
namespace scipis::probe {
inline double tcpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
struct Acc { const char* name; std::atomic<long> us{0}; std::atomic<long> n{0}; };
inline Acc accs[28] = {{"start"},{"prepare"},{"run"},{"scope+conf"},{"resume+terms"},{"conclude"},{"commit"},{"pipeline_ctor"},{"catalog"},{"collection"},{"read_current"},{"launch"},{"journal_append"},{"reader_loop"},{"finish"},{"garbage+gen"},{"take_in"},{"take(all)"},{"ixrun_ctor"},{"tf_serialise"},{"paths_serialise"},{"writer_take"},{"ser:reserve"},{"ser:regions"},{"ser:counts"},{"ser:encode"},{"ser:tail"},{"x27"}};
struct Dump { ~Dump() { if (!getenv("PHASES")) return; for (auto& a : accs) if (a.n) fprintf(stderr, "%-14s %8.3f ms/call (%ld)\n", a.name, a.us / 1e3 / a.n, a.n.load()); } };
inline Dump dump;
inline const bool on = getenv("PHASES") != nullptr;
struct Scope { int i; double t0 = on ? tcpu() : 0; explicit Scope(int k) : i(k) {} ~Scope() { if (!on) return; accs[i].us += long((tcpu() - t0) * 1e3); accs[i].n++; } };
}
