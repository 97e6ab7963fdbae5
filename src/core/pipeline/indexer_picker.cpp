#include "pipeline/indexer_picker.h"

#include <algorithm>
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

std::optional<int> IndexerPicker::take(int prefer, const std::function<bool(int)>& has_room,
                                       const std::function<bool(int)>& idle) {
  std::unique_lock<std::mutex> lk(mu_);
  auto take_at = [&](std::deque<int>::iterator it) {
    const int ix = *it;
    free_.erase(it);
    return ix;
  };
  while (true) {
    const auto mine = std::find(free_.begin(), free_.end(), prefer);
    if (mine != free_.end() && idle(prefer)) return take_at(mine);
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (idle(*it)) return take_at(it);
    if (mine != free_.end() && has_room(prefer)) return take_at(mine);
    if (prefer < 0)
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (has_room(*it)) return take_at(it);
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
