// A bounded blocking queue whose waits give up when the build is stopped,
// so no thread sleeps through a cancel.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace scipis {

template <typename T>
class BoundedQueue {
 public:
  BoundedQueue(size_t capacity, const std::atomic<bool>* stop)
      : capacity_(capacity), stop_(stop) {}

  // False when the build stopped before there was room.
  bool push(T v) {
    std::unique_lock<std::mutex> lk(mu_);
    while (items_.size() >= capacity_) {
      if (stop_->load(std::memory_order_relaxed)) return false;
      not_full_.wait_for(lk, std::chrono::milliseconds(50));
    }
    items_.push_back(std::move(v));
    not_empty_.notify_one();
    return true;
  }

  // Moves v in only when there is room now; false leaves v as it was.
  bool try_push(T& v) {
    std::lock_guard<std::mutex> lk(mu_);
    if (items_.size() >= capacity_) return false;
    items_.push_back(std::move(v));
    not_empty_.notify_one();
    return true;
  }

  // Empty when the queue is closed and drained, or the build stopped.
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lk(mu_);
    while (items_.empty()) {
      if (closed_ || stop_->load(std::memory_order_relaxed)) return std::nullopt;
      not_empty_.wait_for(lk, std::chrono::milliseconds(50));
    }
    T v = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return v;
  }

  // Empty at once when nothing is queued: a reader first sends the small
  // files it has packed before it waits (Pipeline::reader_loop).
  std::optional<T> try_pop() {
    std::lock_guard<std::mutex> lk(mu_);
    if (items_.empty()) return std::nullopt;
    T v = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return v;
  }

  // Room for a push now (a hint: other threads may push or pop after).
  bool has_room() {
    std::lock_guard<std::mutex> lk(mu_);
    return items_.size() < capacity_;
  }

  // Nothing queued now (a hint, as has_room).
  bool idle() {
    std::lock_guard<std::mutex> lk(mu_);
    return items_.empty();
  }

  void close() {
    std::lock_guard<std::mutex> lk(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  size_t capacity_;
  const std::atomic<bool>* stop_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace scipis
