#include "pipeline/append.h"

#include <atomic>

namespace scipis {

namespace {
std::atomic<uint64_t> g_append_min{kAppendMinBytes};
}

uint64_t append_min_bytes() { return g_append_min.load(std::memory_order_relaxed); }
void set_append_min_bytes(uint64_t n) { g_append_min.store(n, std::memory_order_relaxed); }

bool plan_append(const Tokenizer& tok, const unsigned char* window, size_t n, uint64_t window_at,
                 AppendPlan& plan) {
  size_t r = n;
  while (r > 0 && tok.is_token_byte(window[r - 1])) r--;
  // The run of token bytes at the end reaches the window's start: where
  // its token, and so its pieces, begin is not known.
  if (r == 0 && window_at > 0 && n > 0) return false;
  const size_t cut = r + ((n - r) / kMaxToken) * kMaxToken;
  plan.start = window_at + cut;
  plan.retract.clear();
  if (cut < n) {
    std::string piece(reinterpret_cast<const char*>(window + cut), n - cut);
    tok.tokenize_in_place(reinterpret_cast<unsigned char*>(piece.data()), piece.size(),
                          [&](const char* s, size_t len) { plan.retract.assign(s, len); });
  }
  return true;
}

}  // namespace scipis
