#include "pipeline/indexer_picker.h"

#include <chrono>

namespace scipis {

namespace {
// Waits wake at least this often to see a stop.
constexpr auto kStopCheck = std::chrono::milliseconds(50);
}  // namespace

void IndexerPicker::give(int indexer) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    free_.push_back(indexer);
  }
  changed_.notify_all();
}

void IndexerPicker::room_made() {
  // Taking the lock orders this after a waiter's look at the queues: the
  // look saw the room, or the waiter is asleep and hears this.
  { std::lock_guard<std::mutex> lk(mu_); }
  changed_.notify_all();
}

std::optional<int> IndexerPicker::take(const std::function<bool(int)>& has_room) {
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (!has_room(*it)) continue;
      const int ix = *it;
      free_.erase(it);
      return ix;
    }
    if (stop_->load(std::memory_order_relaxed)) return std::nullopt;
    changed_.wait_for(lk, kStopCheck);
  }
}

std::optional<int> IndexerPicker::take_any() {
  std::unique_lock<std::mutex> lk(mu_);
  while (free_.empty()) {
    if (stop_->load(std::memory_order_relaxed)) return std::nullopt;
    changed_.wait_for(lk, kStopCheck);
  }
  const int ix = free_.front();
  free_.pop_front();
  return ix;
}

}  // namespace scipis
