// CREATE INDEX: the caller's thread hands batches of rows (copied) to
// indexer threads; each fills a MemIndex and writes it as a segment when it
// reaches its share of the memory budget, so memory stays bounded however
// large the table is. Its flushes are held back and merged into one while
// they fit in the rest of its share. Segments go back to the caller, who
// writes pages.
#include "am/am_build.h"

#include <algorithm>
#include <chrono>

#include "am/am_merge.h"
#include "am/seg_writer.h"
#include "pipeline/pipeline.h"
#include "util/error.h"

namespace scipis::am {

namespace {
constexpr size_t kBatchBytes = 1 << 20;
constexpr size_t kBatchRows = 4096;
}  // namespace

AmBuild::AmBuild(const unsigned char delimiter[256], int threads, uint64_t memory_bytes, uint32_t nvals)
    : tok_(delimiter),
      threads_(threads >= 1 ? threads : std::max(1u, std::thread::hardware_concurrency())),
      nvals_(nvals),
      in_(static_cast<size_t>(threads_), &stop_),
      running_(threads_) {
  // Batches in flight and a finished segment per indexer take their part.
  const uint64_t per = memory_bytes / static_cast<uint64_t>(threads_) / 2;
  per_indexer_ = per > (64u << 10) ? per : (64u << 10);
  // A segment takes about a third of the index in memory it came from
  // (MemTerms counts its whole table), so an indexer holds two flushes
  // back within its share; their merge runs with the index in memory
  // empty. Held 10 M log lines (1 GiB, two indexers) in two segments.
  hold_bytes_ = per_indexer_ / 10 * 7;
  for (int i = 0; i < threads_; i++) workers_.emplace_back([this] { run(); });
}

AmBuild::~AmBuild() {
  stop_ = true;
  in_.close();
  {
    std::lock_guard<std::mutex> lk(out_mu_);
    out_cv_.notify_all();
  }
  for (auto& t : workers_) t.join();
}

bool AmBuild::add(uint64_t tid, const char* text, size_t len, bool is_null, const uint64_t* vals,
                  const uint8_t* nulls) {
  check_failed();
  if (held_) {
    if (!push_cur()) return false;
    held_ = false;
  }
  if (!cur_) {
    cur_ = std::make_unique<Batch>();
    cur_->vals.ncols = nvals_;
  }
  if (nvals_) cur_->vals.add(vals, nulls);
  cur_->rows.push_back({tid, cur_->text.size(), is_null ? 0 : len, is_null});
  if (!is_null) cur_->text.append(text, len);
  if (cur_->text.size() >= kBatchBytes || cur_->rows.size() >= kBatchRows) held_ = !push_cur();
  return true;
}

bool AmBuild::push_cur() {
  {
    std::lock_guard<std::mutex> lk(out_mu_);
    room_ = false;
  }
  if (!in_.try_push(cur_)) {
    std::lock_guard<std::mutex> lk(out_mu_);
    want_room_ = true;
    return false;
  }
  cur_.reset();
  return true;
}

bool AmBuild::finish_input() {
  check_failed();
  if (closed_) return true;
  if (cur_ && !cur_->rows.empty() && !push_cur()) return false;
  cur_.reset();
  held_ = false;
  in_.close();
  closed_ = true;
  return true;
}

int AmBuild::take(int timeout_ms, std::string& seg) {
  std::unique_lock<std::mutex> lk(out_mu_);
  // Woken, too, when the batch that did not fit now would: waiting out
  // the timeout instead left both indexers idle a fifth of a build.
  out_cv_.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] {
    return !out_.empty() || failed_ || (closed_ && running_ == 0) || (want_room_ && room_);
  });
  want_room_ = false;
  if (failed_) throw Error(fail_code_, fail_msg_);
  if (!out_.empty()) {
    seg = std::move(out_.front());
    out_.pop_front();
    out_cv_.notify_all();
    return 1;
  }
  return closed_ && running_ == 0 ? 2 : 0;
}

void AmBuild::check_failed() {
  std::lock_guard<std::mutex> lk(out_mu_);
  if (failed_) throw Error(fail_code_, fail_msg_);
}

void AmBuild::run() {
  block_all_signals();
  try {
    auto fresh = [this] {
      auto m = std::make_unique<MemIndex>();
      m->set_budget(per_indexer_);
      m->set_nvals(nvals_);
      return m;
    };
    auto mem = fresh();
    // Flushes held back to be merged: a query visits every segment, and
    // a few microseconds each add up (six segments against two: 136 us
    // against 84 us a 1-term query on 10 M rows).
    std::vector<std::string> held;
    size_t held_bytes = 0;
    auto hand_out = [&](std::string seg) {
      std::unique_lock<std::mutex> lk(out_mu_);
      // One finished segment per indexer may wait for the caller.
      out_cv_.wait(lk, [&] { return out_.size() < static_cast<size_t>(threads_) || stop_; });
      if (!stop_) out_.push_back(std::move(seg));
      out_cv_.notify_all();
    };
    auto hand_out_held = [&](std::unique_ptr<MemIndex> tail) {
      std::string seg;
      if (held.size() == 1 && !tail)
        seg = std::move(held.front());
      else if (!held.empty())
        seg = merge_segments(held, std::move(tail), &stop_);
      held.clear();
      held_bytes = 0;
      if (!seg.empty()) hand_out(std::move(seg));
    };
    auto serialize = [&] {
      // The thread's rows as they are: terms in order, postings as counted.
      SegmentWriter w(mem->docs(), mem->bytes() / 2, &mem->all_vals());
      std::string term;
      TermPostings p;
      while (mem->next_term(term, p)) w.term(term, p.ords.data(), p.tfs.data(), p.ords.size());
      mem = fresh();
      flushes_++;
      return w.finish();
    };
    auto emit = [&] {
      std::string seg = serialize();
      if (held_bytes + seg.size() <= hold_bytes_) {
        held_bytes += seg.size();
        held.push_back(std::move(seg));
        return;
      }
      // Past what may be held: the held ones and this one as one segment,
      // merged while the index in memory is empty.
      held.push_back(std::move(seg));
      hand_out_held(nullptr);
    };
    auto finish = [&] {
      if (held.empty()) {
        if (!mem->empty()) hand_out(serialize());
        return;
      }
      // The last rows join the held segments from memory when the merge
      // fits in the indexer's share that way (the index in memory takes
      // about three times what its segment would).
      if (!mem->empty() && mem->bytes() + 2 * held_bytes > 2 * per_indexer_) {
        held.push_back(serialize());
        mem.reset();
      }
      std::unique_ptr<MemIndex> tail;
      if (mem && !mem->empty()) tail = std::move(mem);
      hand_out_held(std::move(tail));
    };
    while (auto b = in_.pop()) {
      {
        // Room in the queue: wake a caller waiting to hand over a batch.
        std::lock_guard<std::mutex> lk(out_mu_);
        room_ = true;
        out_cv_.notify_all();
      }
      Batch& batch = **b;
      for (size_t i = 0; i < batch.rows.size(); i++) {
        const Row& r = batch.rows[i];
        const size_t at = i * nvals_;
        mem->add_own_text(tok_, r.tid, batch.text.data() + r.off, r.len, r.is_null,
                          nvals_ ? batch.vals.v.data() + at : nullptr,
                          nvals_ ? batch.vals.nulls.data() + at : nullptr);
        if (mem->bytes() >= per_indexer_ || mem->crowded()) emit();
      }
    }
    if (!stop_) finish();
  } catch (const Error& e) {
    record_failure(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    record_failure(SCIPIS_E_NOMEM, "scipis index build ran out of memory");
  } catch (const std::exception& e) {
    record_failure(SCIPIS_E_INTERNAL, e.what());
  }
  std::lock_guard<std::mutex> lk(out_mu_);
  running_--;
  out_cv_.notify_all();
}

void AmBuild::record_failure(scipis_status code, const std::string& msg) {
  std::lock_guard<std::mutex> lk(out_mu_);
  if (!failed_) {
    failed_ = true;
    fail_code_ = code;
    fail_msg_ = msg;
  }
  stop_ = true;
  out_cv_.notify_all();
}

}  // namespace scipis::am
