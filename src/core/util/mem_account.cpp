#include "util/mem_account.h"

#include <atomic>

namespace scipis::mem {

namespace {
std::atomic<size_t> held_bytes{0};
std::atomic<size_t> peak_bytes{0};
}  // namespace

void charge(size_t bytes) {
  const size_t now = held_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  size_t p = peak_bytes.load(std::memory_order_relaxed);
  while (now > p && !peak_bytes.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
}

void release(size_t bytes) { held_bytes.fetch_sub(bytes, std::memory_order_relaxed); }
size_t held() { return held_bytes.load(std::memory_order_relaxed); }
size_t peak() { return peak_bytes.load(std::memory_order_relaxed); }
void reset_peak() { peak_bytes.store(held(), std::memory_order_relaxed); }

}  // namespace scipis::mem
