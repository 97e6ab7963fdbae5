#include "util/engine_thread.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "index/huge_pages.h"
#include "index/postings_codec.h"
#include "util/mem_node.h"

namespace scipis {

struct EngineJob {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

namespace {

// A backend between statements keeps at most this many, each for this
// long: enough for a build's threads, nothing held for long by one that
// went quiet.
constexpr size_t kMaxIdle = 16;
constexpr auto kIdleFor = std::chrono::seconds(10);

struct Worker {
  std::condition_variable cv;
  std::function<void()> fn;  // set: a task to run
  std::shared_ptr<EngineJob> job;
};

struct Pool {
  std::mutex mu;
  std::vector<Worker*> idle;
  std::vector<Worker*> lost;  // a forked child's, whose threads it has not
};

// Never destroyed: kept threads wait on it past static destruction.
Pool& pool() {
  static Pool* p = [] {
    auto* made = new Pool;
    // A child of fork has none of the threads: it starts with an empty pool.
    ::pthread_atfork([] { pool().mu.lock(); }, [] { pool().mu.unlock(); },
                     [] {
                       Pool& q = pool();
                       q.lost.insert(q.lost.end(), q.idle.begin(), q.idle.end());
                       q.idle.clear();
                       pool().mu.unlock();
                     });
    return made;
  }();
  return *p;
}

// Runs a task; what it captured and left in its thread's caches is gone
// before anyone learns it ended.
void run_task(std::function<void()>& fn) {
  fn();
  fn = nullptr;
  drop_freed_huge_pages();
  drop_kept_block_lists();
  set_thread_memory_node(-1, nullptr);
}

void signal_done(std::shared_ptr<EngineJob>& job) {
  {
    std::lock_guard<std::mutex> lk(job->mu);
    job->done = true;
  }
  job->cv.notify_all();
  job.reset();
}

void kept_main(Worker* w) {
  Pool& p = pool();
  std::unique_lock<std::mutex> lk(p.mu);
  for (;;) {
    while (!w->fn) {
      if (w->cv.wait_for(lk, kIdleFor) == std::cv_status::timeout && !w->fn) {
        p.idle.erase(std::remove(p.idle.begin(), p.idle.end(), w), p.idle.end());
        lk.unlock();
        delete w;
        return;
      }
    }
    std::function<void()> fn = std::move(w->fn);
    w->fn = nullptr;
    std::shared_ptr<EngineJob> job = std::move(w->job);
    lk.unlock();
    run_task(fn);
    // Idle again before the task's join returns: the caller's next task
    // finds this thread.
    lk.lock();
    const bool keep = p.idle.size() < kMaxIdle;
    if (keep) p.idle.push_back(w);
    lk.unlock();
    signal_done(job);
    if (!keep) {
      delete w;
      return;
    }
    lk.lock();
  }
}

// Threads inherit the creator's signal mask: block everything first.
template <typename F>
void start_blocked(F&& f) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    std::thread(std::forward<F>(f)).detach();
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

}  // namespace

namespace {
std::atomic<uint64_t> tasks_started{0};
}  // namespace

EngineThread::EngineThread(std::function<void()> fn, bool own) : job_(std::make_shared<EngineJob>()) {
  tasks_started.fetch_add(1, std::memory_order_relaxed);
  if (own) {
    auto job = job_;
    start_blocked([fn = std::move(fn), job]() mutable {
      fn();
      fn = nullptr;
      signal_done(job);
    });
    return;
  }
  Pool& p = pool();
  std::unique_lock<std::mutex> lk(p.mu);
  if (!p.idle.empty()) {
    Worker* w = p.idle.back();
    p.idle.pop_back();
    w->fn = std::move(fn);
    w->job = job_;
    w->cv.notify_one();
    return;
  }
  lk.unlock();
  auto* w = new Worker;
  w->fn = std::move(fn);
  w->job = job_;
  try {
    start_blocked([w] { kept_main(w); });
  } catch (...) {
    delete w;
    job_.reset();
    throw;
  }
}

EngineThread& EngineThread::operator=(EngineThread&& o) noexcept {
  if (this != &o) {
    join();
    job_ = std::move(o.job_);
  }
  return *this;
}

EngineThread::~EngineThread() { join(); }

void EngineThread::join() {
  if (!job_) return;
  std::unique_lock<std::mutex> lk(job_->mu);
  job_->cv.wait(lk, [&] { return job_->done; });
  lk.unlock();
  job_.reset();
}

uint64_t engine_tasks_started() { return tasks_started.load(); }

size_t engine_threads_idle() {
  std::lock_guard<std::mutex> lk(pool().mu);
  return pool().idle.size();
}

}  // namespace scipis
