// Engine threads kept between builds: a refresh of a few named paths
// started seven threads for a few milliseconds of work. A kept thread blocks
// every signal (the door's rule for every engine thread), runs one task
// at a time and ends after a while unused. A task that changes its
// thread for good (a CPU or memory binding, a nice level it cannot undo)
// asks for a thread of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace scipis {

class EngineThread {
 public:
  EngineThread() = default;
  // Runs fn on a kept idle thread (or a new one that is kept after);
  // own: on a new thread that ends with fn. fn must not throw.
  explicit EngineThread(std::function<void()> fn, bool own = false);
  EngineThread(EngineThread&&) noexcept = default;
  EngineThread& operator=(EngineThread&& o) noexcept;
  ~EngineThread();  // joins
  bool joinable() const { return job_ != nullptr; }
  // Returns once fn has returned and what it captured is destroyed.
  void join();

 private:
  std::shared_ptr<struct EngineJob> job_;
};

// Threads idle in the pool now (tests).
size_t engine_threads_idle();
// Tasks given to engine threads so far, kept or own (tests).
uint64_t engine_tasks_started();

}  // namespace scipis
