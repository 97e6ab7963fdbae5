// Indexers that read the files they index (PipelineConfig::indexers_read):
// a build through the page cache tokenizes each file on the core that has
// just copied it, and no message passes between threads for it. Small
// files are read only from the page cache; those not in it have their
// reading started and are read after the batch's others, so that the
// device works while the indexer does. An indexer that would wait takes
// files of a batch another is working through, so that a directory of a
// few large files is not left to one.
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "pipeline/stages.h"

namespace scipis {

namespace {
// Files left for later are read once this many wait, or at the end of
// their batch: this many reads in flight at once.
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

void Pipeline::reading_indexer_loop(int id) {
  const int node = plan_.indexer_node[static_cast<size_t>(id)];
  place(NumaRole::kIndexer, id, node);
  auto run = std::make_unique<IndexerRun>(*this, id);
  OpenPack pack;
  pack.own = run.get();
  pack.last_indexer = id;
  pack.nowait = true;
  indexer_reads(node, pack);
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
  send_pack(p, node);
}

void Pipeline::work_through(const std::shared_ptr<OpenBatch>& ob, OpenPack& p, int node) {
  p.open = ob;
  while (const FileBatch::Entry* e = ob->take()) {
    if (stop_.load(std::memory_order_relaxed) || paused_.load(std::memory_order_relaxed)) break;
    read_entry(ob->batch, *e, p, node);
    if (p.later.size() >= kReadLater) read_later(ob->batch, p, node);
  }
  read_later(ob->batch, p, node);
  p.open.reset();
  // Its directory's descriptor is closed once no one holds it.
  std::lock_guard<std::mutex> lk(open_mu_);
  const auto it = std::find(open_.begin(), open_.end(), ob);
  if (it != open_.end() && !ob->untaken()) open_.erase(it);
}

void Pipeline::read_later(const FileBatch& b, OpenPack& p, int node) {
  if (p.later.empty()) return;
  const bool nowait = p.nowait;
  p.nowait = false;
  for (const FileBatch::Entry* e : p.later) {
    if (stop_.load(std::memory_order_relaxed) || paused_.load(std::memory_order_relaxed)) break;
    read_entry(b, *e, p, node);
  }
  p.later.clear();
  p.nowait = nowait;
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
