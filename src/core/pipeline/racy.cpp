#include "pipeline/racy.h"

#include <atomic>

namespace scipis {

namespace {
std::atomic<int64_t> g_racy_tick{kRacyTickNs};
}  // namespace

int64_t racy_tick_ns() { return g_racy_tick.load(std::memory_order_relaxed); }
void set_racy_tick_ns(int64_t ns) { g_racy_tick.store(ns, std::memory_order_relaxed); }

}  // namespace scipis
