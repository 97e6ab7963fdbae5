#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "am/am_source.h"
#include "pipeline/queue.h"
#include "scipis_engine.h"

namespace scipis::am {

class AmBuild {
 public:
  // nvals: filter values per row (the index's columns after the first).
  AmBuild(const unsigned char delimiter[256], int threads, uint64_t memory_bytes, uint32_t nvals = 0);
  ~AmBuild();
  // False when the row was not taken: the queue is full; take, then retry.
  bool add(uint64_t tid, const char* text, size_t len, bool is_null, const uint64_t* vals = nullptr,
           const uint8_t* nulls = nullptr);
  // False when the last batch did not fit yet: take, then retry.
  bool finish_input();
  // 1 with a segment, 0 when none is ready within timeout_ms, 2 when done.
  int take(int timeout_ms, std::string& seg);
  uint64_t flushes() const { return flushes_; }

 private:
  struct Row {
    uint64_t tid;
    size_t off, len;
    bool is_null;
  };
  struct Batch {
    std::string text;
    std::vector<Row> rows;
    Vals vals;  // row i's at i * nvals_
  };
  void run();
  // Queues cur_; false (cur_ kept) when the queue is full.
  bool push_cur();
  void check_failed();
  void record_failure(scipis_status code, const std::string& msg);

  Tokenizer tok_;
  int threads_;
  uint32_t nvals_;
  uint64_t per_indexer_;
  uint64_t hold_bytes_;  // flushes an indexer holds back to merge
  std::atomic<uint64_t> flushes_{0};
  std::atomic<bool> stop_{false};
  BoundedQueue<std::unique_ptr<Batch>> in_;
  std::unique_ptr<Batch> cur_;
  bool held_ = false;    // cur_ is full and waits for room
  bool closed_ = false;  // finish_input done
  // The caller waits for room in the queue; an indexer that took a batch
  // since says so (under out_mu_), so take returns at once.
  bool want_room_ = false;
  bool room_ = false;
  std::mutex out_mu_;
  std::condition_variable out_cv_;
  std::deque<std::string> out_;
  int running_;
  bool failed_ = false;
  scipis_status fail_code_ = SCIPIS_OK;
  std::string fail_msg_;
  std::vector<std::thread> workers_;
};

}  // namespace scipis::am
