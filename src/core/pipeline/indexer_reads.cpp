// Indexers that read the files they index (PipelineConfig::indexers_read):
// a build through the page cache tokenizes each file on the core that has
// just copied it, and no message passes between threads for it. Files
// are read only from the page cache; one not in it (a small file not all
// there, a large one whose start is not) has its reading started and is
// read later, once more have piled up, so that the device works while
// the indexer does. An indexer that would wait takes files of a batch
// another is working through, so that a directory of a few large files
// is not left to one.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "pipeline/stages.h"

namespace scipis {

namespace {
// Files left for later: once this many wait, the older half is read, so
// that the device always has the newer half (and what the indexer meets
// meanwhile, in this batch or the next) to work on.
constexpr size_t kReadLater = 64;
std::atomic<int> nowait_refusal{0};
std::atomic<uint64_t> read_later_count{0};
}  // namespace

void set_nowait_refusal_for_tests(int how) { nowait_refusal.store(how); }
uint64_t files_read_later() { return read_later_count.load(); }
void count_read_later() { read_later_count.fetch_add(1, std::memory_order_relaxed); }

ssize_t read_cached(int fd, unsigned char* buf, size_t n, off_t off) {
  const int refusal = nowait_refusal.load(std::memory_order_relaxed);
  if (refusal == 1) {
    errno = EAGAIN;
    return -1;
  }
  if (refusal != 2) {
    struct iovec v = {buf, n};
    const ssize_t got = ::preadv2(fd, &v, 1, off, RWF_NOWAIT);
    // A file system that cannot tell: a plain pread.
    if (got >= 0 || (errno != EOPNOTSUPP && errno != EINVAL)) return got;
  }
  return ::pread(fd, buf, n, off);
}

namespace {
// What an indexer that reads a large file asks the device for ahead of
// it: a thread waiting for one block at a time left the device idle
// while it indexed (the 1 GiB logs from a dropped page cache).
constexpr uint64_t kLargeAhead = uint64_t{16} << 20;
}  // namespace

ssize_t read_large(int fd, unsigned char* buf, size_t n, off_t off, uint64_t limit) {
  const ssize_t got = read_cached(fd, buf, n, off);
  if (got >= 0 || errno != EAGAIN) return got;
  const uint64_t at = static_cast<uint64_t>(off);
  if (at < limit)
    ::posix_fadvise(fd, off, static_cast<off_t>(std::min(limit - at, kLargeAhead)), POSIX_FADV_WILLNEED);
  return ::pread(fd, buf, n, off);
}

bool starts_cached(int fd, uint64_t size) {
  unsigned char first;
  if (read_cached(fd, &first, 1, 0) >= 0 || errno != EAGAIN) return true;
  ::posix_fadvise(fd, 0, static_cast<off_t>(std::min(size, kLargeAhead)), POSIX_FADV_WILLNEED);
  count_read_later();
  return false;
}

void Pipeline::reading_indexer_loop(int id) {
  const int node = plan_.indexer_node[static_cast<size_t>(id)];
  place(NumaRole::kIndexer, id, node);
  auto run = std::make_unique<IndexerRun>(*this, id);
  OpenPack pack;
  pack.own = run.get();
  pack.last_indexer = id;
  pack.nowait = true;
  indexer_reads(node, pack);
  // The build's progress turns to flushing once every indexer has read.
  if (reading_left_.fetch_sub(1) == 1) reading_done_.store(true);
  if (stop_.load()) return;
  run->finish();
}

void Pipeline::indexer_reads(int node, OpenPack& p) {
  auto& files = *files_[static_cast<size_t>(node)];
  // popping_ counts the indexers between a pop and the batch's entry in
  // open_, so that one that finds the walk over waits for what they hold.
  while (true) {
    popping_.fetch_add(1);
    auto got = files.try_pop();
    if (!got) {
      popping_.fetch_sub(1);
      // Nothing queued: what is packed is indexed, then another's files
      // are taken, before this indexer waits.
      send_pack(p, node);
      if (auto ob = untaken_batch(node)) {
        work_through(ob, p, node);
        continue;
      }
      // Nor is anything left for later kept waiting.
      read_later(p, node, SIZE_MAX);
      send_pack(p, node);
      popping_.fetch_add(1);
      got = files.pop();
      if (!got) {
        popping_.fetch_sub(1);
        // The walk is over: what others have not taken yet.
        std::shared_ptr<OpenBatch> ob;
        while (!(ob = untaken_batch(node)) && popping_.load() > 0) std::this_thread::yield();
        if (ob) {
          work_through(ob, p, node);
          continue;
        }
        break;
      }
    }
    if (got->node != node) cross_node_++;
    std::shared_ptr<OpenBatch> ob;
    if (got->share) {
      ob = std::move(got->share);
      ob->offered.store(false);
    } else {
      ob = std::make_shared<OpenBatch>(std::move(*got));
      std::lock_guard<std::mutex> lk(open_mu_);
      open_.push_back(ob);
    }
    popping_.fetch_sub(1);
    work_through(ob, p, node);
    if (paused_.load()) {
      // The walk may be waiting for room: what it still hands out goes
      // unread until it sees the pause and ends.
      while (files.pop()) {
      }
      break;
    }
  }
  read_later(p, node, SIZE_MAX);
  send_pack(p, node);
}

void Pipeline::work_through(const std::shared_ptr<OpenBatch>& ob, OpenPack& p, int node) {
  p.open = ob;
  while (const FileBatch::Entry* e = ob->take()) {
    if (stop_.load(std::memory_order_relaxed) || paused_.load(std::memory_order_relaxed)) break;
    read_entry(ob->batch, *e, p, node);
    if (p.later.size() >= kReadLater) read_later(p, node, kReadLater / 2);
  }
  p.open.reset();
  // Its directory's descriptor is closed once no one holds it.
  std::lock_guard<std::mutex> lk(open_mu_);
  const auto it = std::find(open_.begin(), open_.end(), ob);
  if (it != open_.end() && !ob->untaken()) open_.erase(it);
}

void Pipeline::read_later(OpenPack& p, int node, size_t n) {
  n = std::min(n, p.later.size());
  if (n == 0) return;
  const bool nowait = p.nowait;
  const std::shared_ptr<OpenBatch> open = std::move(p.open);
  p.nowait = false;
  for (size_t i = 0; i < n; i++) {
    if (stop_.load(std::memory_order_relaxed) || paused_.load(std::memory_order_relaxed)) break;
    p.open = p.later[i].first;
    read_entry(p.open->batch, *p.later[i].second, p, node);
  }
  p.later.erase(p.later.begin(), p.later.begin() + static_cast<ptrdiff_t>(n));
  p.nowait = nowait;
  p.open = open;
}

// Wakes an indexer that waits for batches, if any, with an offer of the
// rest (one queued at a time; a full queue means no one waits).
void Pipeline::offer_rest(const std::shared_ptr<OpenBatch>& ob, int node) {
  if (!ob->untaken() || ob->offered.exchange(true)) return;
  FileBatch offer;
  offer.node = node;
  offer.share = ob;
  if (!files_[static_cast<size_t>(node)]->try_push(offer)) ob->offered.store(false);
}

std::shared_ptr<OpenBatch> Pipeline::untaken_batch(int node) {
  std::lock_guard<std::mutex> lk(open_mu_);
  for (auto it = open_.begin(); it != open_.end();) {
    if (!(*it)->untaken()) {
      it = open_.erase(it);
    } else if ((*it)->batch.node == node) {
      return *it;
    } else {
      ++it;
    }
  }
  return nullptr;
}

}  // namespace scipis
