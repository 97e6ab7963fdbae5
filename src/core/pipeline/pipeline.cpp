#include "pipeline/pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "index/block_counter.h"
#include "index/huge_pages.h"
#include "index/path_index.h"
#include "index/segment_format.h"
#include "index/segment_pack.h"
#include "index/tfidf_index.h"
#include "pipeline/compact.h"
#include "pipeline/racy.h"
#include "pipeline/stages.h"
#include "util/engine_thread.h"
#include "util/time_ns.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/fileio.h"

namespace scipis {

namespace {
constexpr size_t kIndexerQueue = 4;
// Batches of up to FileBatch::kMaxFiles files, each holding its directory
// open: with the readers' batches, some 20 descriptors at most, as a
// backend's descriptor budget belongs to PostgreSQL (max_files_per_process).
constexpr size_t kFileBatches = 16;
size_t file_batches(size_t nodes) { return std::max<size_t>(4, kFileBatches / nodes); }
// What a refresh of named files reads on the calling thread at most
// (Pipeline::walk_here): some milliseconds of one thread's work.
constexpr uint64_t kHereBytes = 2u << 20;
// Its read blocks are at least this large (and at most the options' block).
constexpr uint64_t kHereBlock = 64u << 10;
}

Pipeline::Pipeline(PipelineConfig cfg)
    : cfg_(std::move(cfg)),
      tokenizer_(cfg_.opts.delimiter),
      // A quarter of a block: a pack holds at least four files, and bigger
      // files, which have bytes enough to pay for their messages, stream.
      pack_limit_(cfg_.opts.block_size / 4),
      to_writer_(static_cast<size_t>(cfg_.opts.writer_threads), &stop_) {
  found_.count_bytes = cfg_.count_found_bytes;
  {
    auto topo = numa_override_topology();
    // Indexers that read are their node's readers too.
    plan_ = plan_numa(topo ? *topo : NumaTopology::detect(),
                      indexers_read() ? cfg_.opts.indexer_threads : cfg_.opts.reader_threads,
                      cfg_.opts.indexer_threads, cfg_.opts.writer_threads);
    if (plan_.pinned()) {
      placer_ = numa_override_placer();
      if (!placer_) placer_ = &libnuma_placer();
      cfg_.rules.largest_first = true;
    }
  }
  const size_t nodes = plan_.node_count();
  for (size_t n = 0; n < nodes; n++) {
    // The descriptor budget of the batches is shared out over the nodes.
    files_.push_back(std::make_unique<BoundedQueue<FileBatch>>(file_batches(nodes), &stop_));
    pickers_.push_back(std::make_unique<IndexerPicker>(&stop_));
  }
  spare_buffers_.resize(nodes);
  for (int i = 0; i < cfg_.opts.indexer_threads; i++) {
    // A short queue per indexer: an indexer busy serialising a flush holds
    // few buffers, and the shared pool keeps feeding the others.
    to_indexer_.push_back(std::make_unique<BoundedQueue<ReadMsg>>(kIndexerQueue, &stop_));
    sketches_.push_back(std::make_unique<DistinctTerms>());
    if (cfg_.resume && static_cast<size_t>(i) < cfg_.resume->indexers.size())
      sketches_.back()->load(cfg_.resume->indexers[static_cast<size_t>(i)].sketch);
    pickers_[static_cast<size_t>(plan_.indexer_node[static_cast<size_t>(i)])]->give(i);
  }
  if (cfg_.resume) {
    // What the kept segments hold counts as done.
    totals_.files = cfg_.resume->files;
    totals_.bytes = cfg_.resume->bytes;
    totals_.tokens = cfg_.resume->tokens;
    totals_.docs_with_tokens = cfg_.resume->docs_with_tokens;
    cfg_.rules.done = &cfg_.resume->done;
  }
}

namespace {
size_t pool_buffers(size_t readers, size_t indexers) {
  return readers * 2 + indexers * (kIndexerQueue + 2);
}
size_t pool_buffers(const scipis_options& o) {
  return pool_buffers(static_cast<size_t>(o.reader_threads), static_cast<size_t>(o.indexer_threads));
}
}  // namespace

size_t Pipeline::memory_bound(const scipis_options& o) {
  const size_t indexers = static_cast<size_t>(o.indexer_threads);
  const size_t writers = static_cast<size_t>(o.writer_threads);
  const size_t per_indexer = TfIdfIndex::held_bound(o.tfidf_index_size, o.index_depth) +
                             PathIndex::held_bound(o.path_index_size);
  const size_t per_flush =
      TfIdfIndex::flush_bound(o.tfidf_index_size, o.index_depth, o.split_factor) +
      PathIndex::flush_bound(o.path_index_size, o.split_factor);
  // Flushes alive at once: one being made or handed over by each indexer,
  // one waiting in the writers' queue and one being written per writer,
  // and the written ones' buffers kept for reuse (at most one per indexer).
  // Each writer may hold a bounce buffer for direct writes.
  const size_t flushes = 2 * indexers + 2 * writers;
  return pool_buffers(o) * BufferPool::buffer_bytes_for(o.block_size) + indexers * per_indexer +
         flushes * per_flush + (o.direct_writes ? writers * DirectBounce::kBytes : 0);
}

void Pipeline::record_error(std::exception_ptr e) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!error_) error_ = e;
  stop_.store(true);
}

uint64_t Pipeline::distinct_terms() const { return DistinctTerms::estimate(term_registers()); }

std::vector<uint8_t> Pipeline::term_registers() const {
  DistinctTerms all;
  for (const auto& s : sketches_) all.merge(*s);
  return all.registers();
}

bool Pipeline::terms_moved() const {
  return std::any_of(sketches_.begin(), sketches_.end(), [](const auto& s) { return s->moved(); });
}

std::vector<SegmentRef> Pipeline::segments() const {
  std::lock_guard<std::mutex> lk(mu_);
  return segments_;
}

std::vector<SegmentRef> Pipeline::absorbed() const {
  std::lock_guard<std::mutex> lk(mu_);
  return absorbed_;
}

std::vector<ChainLink> Pipeline::links() const {
  std::lock_guard<std::mutex> lk(mu_);
  return links_;
}

std::vector<DocId> Pipeline::racy_docs() const {
  std::lock_guard<std::mutex> lk(mu_);
  return racy_;
}

void Pipeline::note_racy(DocId d) {
  std::lock_guard<std::mutex> lk(mu_);
  racy_.push_back(d);
}

void Pipeline::place(NumaRole role, int index, int node) {
  if (!placer_) return;
  const int id = plan_.nodes[static_cast<size_t>(node)];
  placer_->run_on(role, index, id);
  set_thread_memory_node(id, placer_);
}

void Pipeline::run(bool on_caller) {
  const auto& o = cfg_.opts;
  const size_t nodes = plan_.node_count();
  // A refresh makes only the directories its segments go to (put_segment;
  // one pack each, mostly): a directory is an inode to create and to sync.
  for (int i = 0; i < o.indexer_threads && !cfg_.pack_segments; i++) {
    mkdir_p(cfg_.gen_dir + "/" + tf_dir(static_cast<uint32_t>(i)));
    mkdir_p(cfg_.gen_dir + "/" + file_dir(static_cast<uint32_t>(i)));
  }
  auto guard = [this](auto fn, bool keep = true) {
    return [this, fn, keep] {
      if (keep) keep_freed_huge_pages();
      try {
        fn();
      } catch (...) {
        record_error(std::current_exception());
      }
    };
  };
  CrawlWork work = cfg_.starts ? CrawlWork(*cfg_.starts) : CrawlWork(cfg_.root);
  // A refresh's walk is most of its work (a stat per file, few reads):
  // as many crawlers per node as readers. A build keeps one, walking in
  // name order, as a resume expects.
  const size_t per_node = cfg_.rules.known ? static_cast<size_t>(std::max(1, o.reader_threads)) : 1;
  std::atomic<size_t> crawling{nodes * per_node};
  // A pinned thread stays pinned: the plan's threads are the build's own.
  const bool own = placer_ != nullptr;
  std::vector<EngineThread> crawlers, readers, indexers, writers;
  const bool walked = walked_ || walk_here();
  if (walked) {
    const int node = plan_.reader_node[0];
    if (!walked_) {
      keep_freed_huge_pages();
      walk(node);
    }
    if (fits_here()) {
      // Blocks the size of what is read, not of a build's: a buffer
      // under malloc's mapping threshold is neither mapped nor unmapped
      // (with a shootdown of every thread's TLB) at each refresh.
      const size_t want = (std::max<uint64_t>(found_.to_read.load(), kHereBlock) + 4095) & ~size_t{4095};
      cfg_.opts.block_size = std::min(cfg_.opts.block_size, want);
      pack_limit_ = cfg_.opts.block_size / 4;
      make_pools();
      guard([this, node] { run_here(node); }, !on_caller)();
      here_indexers_.clear();
      here_writer_.reset();
      return end_run();
    }
  }
  make_pools();
  for (size_t n = 0; n < nodes && !walked; n++)
    for (size_t k = 0; k < per_node; k++)
      crawlers.emplace_back(guard([this, n, &work, &crawling] {
        const int node = static_cast<int>(n);
        place(NumaRole::kCrawler, node, node);
        Crawler(cfg_.rules, *files_[n], stop_, found_, node).run(work, totals_.skipped);
        if (--crawling == 0) found_.done.store(!stop_.load() && !paused_.load());
      }), own);
  if (indexers_read()) {
    reading_left_.store(o.indexer_threads);
    for (int i = 0; i < o.indexer_threads; i++)
      indexers.emplace_back(guard([this, i] { reading_indexer_loop(i); }), own);
  } else {
    for (int i = 0; i < o.reader_threads; i++)
      readers.emplace_back(guard([this, i] { reader_loop(i); }), own);
    for (int i = 0; i < o.indexer_threads; i++)
      indexers.emplace_back(guard([this, i] { indexer_loop(i); }), own);
  }
  for (int i = 0; i < o.writer_threads; i++)
    writers.emplace_back(guard([this, i] { writer_loop(i); }), own);

  for (auto& t : crawlers) t.join();
  for (auto& q : files_) q->close();
  for (auto& t : readers) t.join();
  for (auto& q : to_indexer_) q->close();
  // (Indexers that read say so themselves, before their last flush.)
  if (!indexers_read()) reading_done_.store(true);
  for (auto& t : indexers) t.join();
  to_writer_.close();
  for (auto& t : writers) t.join();
  end_run();
}

void Pipeline::walk(int node) {
  found_.count_to_read = true;
  try {
    CrawlWork work(*cfg_.starts);
    Crawler(cfg_.rules, *files_[static_cast<size_t>(node)], stop_, found_, node).run(work, totals_.skipped);
    found_.done.store(!stop_.load() && !paused_.load());
  } catch (...) {
    record_error(std::current_exception());
  }
}

bool Pipeline::fits_here() const { return !stop_.load() && found_.to_read.load() <= kHereBytes; }

bool Pipeline::walk_first() {
  if (walked_ || !may_walk_first()) return false;
  walked_ = true;
  walk(plan_.reader_node[0]);
  return fits_here();
}

void Pipeline::end_run() {
  if (error_) std::rethrow_exception(error_);
  if (stop_.load()) fail(SCIPIS_E_CANCELED, "indexing was cancelled");
  if (paused_.load()) fail(SCIPIS_E_CANCELED, "indexing was paused; a resumable build continues it");
}

bool Pipeline::indexers_read() const {
  // A refresh keeps its readers: its walk is most of its work, on as many
  // crawlers as readers, and it reads few bytes. O_DIRECT reads always
  // wait for the device: readers overlap them with the indexing.
  return cfg_.indexers_read && !cfg_.rules.known && cfg_.opts.direct_io == 0;
}

void Pipeline::make_pools() {
  for (size_t n = 0; n < plan_.node_count(); n++) {
    const int node = static_cast<int>(n);
    // An indexer that reads holds at most its pack and a large file's
    // block, none queued.
    pools_.push_back(std::make_unique<BufferPool>(
        pool_buffers(plan_.on_node(NumaRole::kReader, node).size(),
                     indexers_read() ? 0 : plan_.on_node(NumaRole::kIndexer, node).size()),
        cfg_.opts.block_size, &stop_, placer_, plan_.nodes[n]));
  }
}

bool Pipeline::walk_here() const {
  if (!cfg_.starts || !cfg_.rules.known) return false;
  // Each named file is a batch: all of them fit in the queue, so the walk
  // never waits for a reader.
  if (cfg_.starts->size() > file_batches(plan_.node_count())) return false;
  return std::all_of(cfg_.starts->begin(), cfg_.starts->end(),
                     [](const DirWork& w) { return !w.only.empty(); });
}

void Pipeline::run_here(int node) {
  here_indexers_.resize(static_cast<size_t>(cfg_.opts.indexer_threads));
  here_writer_ = std::make_unique<WriterRun>(*this);
  for (auto& q : files_) q->close();
  const auto reader = std::find(plan_.reader_node.begin(), plan_.reader_node.end(), node);
  reader_loop(static_cast<int>(reader - plan_.reader_node.begin()));
  reading_done_.store(true);
  for (auto& ix : here_indexers_)
    if (ix && !stop_.load()) ix->finish();
  here_writer_->finish();
}

bool Pipeline::deliver(const OpenPack& p, int indexer, ReadMsg m) {
  if (p.own) {
    p.own->take(m);
    return true;
  }
  if (!here_writer_) return to_indexer_[static_cast<size_t>(indexer)]->push(std::move(m));
  auto& run = here_indexers_[static_cast<size_t>(indexer)];
  // Made when first given work: an indexer given none allocates nothing.
  if (!run) run = std::make_unique<IndexerRun>(*this, indexer);
  run->take(m);
  return true;
}

bool Pipeline::send_flush(FlushJob job) {
  if (!here_writer_) return to_writer_.push(std::move(job));
  here_writer_->take(job);
  return true;
}

Pipeline::~Pipeline() = default;

void Pipeline::reader_loop(int id) {
  const int node = plan_.reader_node[static_cast<size_t>(id)];
  place(NumaRole::kReader, id, node);
  OpenPack pack;
  read_batches(node, pack);
}

void Pipeline::read_batches(int node, OpenPack& pack) {
  auto& files = *files_[static_cast<size_t>(node)];
  while (true) {
    auto batch = files.try_pop();
    if (!batch) {
      // Nothing queued: the files packed so far go to an indexer before
      // this reader waits, so that no indexer idles for want of them.
      send_pack(pack, node);
      batch = files.pop();
      if (!batch) break;
    }
    if (batch->node != node) cross_node_++;
    for (const auto& e : batch->files) {
      if (stop_.load(std::memory_order_relaxed) || paused_.load(std::memory_order_relaxed)) break;
      read_entry(*batch, e, pack, node);
    }
    if (paused_.load()) {
      // The walk may be waiting for room: what it still hands out goes
      // unread until it sees the pause and ends.
      while (files.pop()) {
      }
      break;
    }
  }
  send_pack(pack, node);
}

namespace {

// Opened relative to the crawled directory: no walk of the whole path.
int open_for_reading(int dirfd, const char* name, bool nofollow, bool direct) {
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
  if (direct) {
    int fd = ::openat(dirfd, name, flags | O_DIRECT);
    if (fd >= 0 || errno != EINVAL) return fd;
    // The file system refuses O_DIRECT: read through the page cache.
  }
  return ::openat(dirfd, name, flags);
}

FileAttrs attrs_of(const struct stat& st) {
  FileAttrs a;
  a.mtime_ns = timespec_ns(st.st_mtim);
  a.ctime_ns = timespec_ns(st.st_ctim);
  a.ino = static_cast<uint64_t>(st.st_ino);
  a.uid = static_cast<uint32_t>(st.st_uid);
  a.gid = static_cast<uint32_t>(st.st_gid);
  a.mode = static_cast<uint32_t>(st.st_mode);
  // Called before the file's bytes are read.
  a.racy = read_racy(a, realtime_ns());
  return a;
}

}  // namespace

void Pipeline::read_entry(const FileBatch& b, const FileBatch::Entry& e, OpenPack& p,
                          int node) {
  const bool direct = cfg_.opts.direct_io != 0;
  Fd fd(open_for_reading(b.dir->fd, b.name(e), !e.via_symlink, direct));
  if (!fd) {
    totals_.skipped++;  // vanished, unreadable, or replaced by a symlink
    return;
  }
  struct stat st;
  // Checked on the open descriptor: a FIFO or device swapped in after the
  // crawl is never read (O_NONBLOCK kept the open itself from blocking).
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    totals_.skipped++;
    return;
  }
  if (e.append && read_appended(fd, st, b, e, p, node)) return;
  if (!direct && static_cast<uint64_t>(st.st_size) <= pack_limit_) {
    if (!pack_file(fd.get(), static_cast<uint64_t>(st.st_size), attrs_of(st), b, e, p, node)) {
      // Its reading starts now, while cached files are indexed; it is
      // opened and read again later (read_later).
      ::posix_fadvise(fd.get(), 0, st.st_size, POSIX_FADV_WILLNEED);
      p.later.emplace_back(p.open, &e);
    }
    return;
  }
  // An indexer that reads leaves a large file whose start is not cached
  // for later too, its reading started.
  if (p.nowait && !starts_cached(fd.get(), static_cast<uint64_t>(st.st_size))) {
    p.later.emplace_back(p.open, &e);
    return;
  }
  // A large file takes a while: the rest of the batch is offered to
  // indexers that would wait.
  if (p.open) offer_rest(p.open, node);
  const auto ix = take_indexer(node, p);
  if (!ix) return;
  read_file(std::move(fd), st, b, e, *ix, node, p);
  give_back(node, p, *ix);
}

void Pipeline::give_back(int node, const OpenPack& p, int indexer) {
  if (!p.own) pickers_[static_cast<size_t>(node)]->give(indexer);
}

std::optional<int> Pipeline::take_indexer(int node, OpenPack& p) {
  if (p.own) return p.last_indexer;
  IndexerPicker& picker = *pickers_[static_cast<size_t>(node)];
  if (here_writer_) return picker.take_any();
  const auto ix = picker.take(
      p.last_indexer, [this](int i) { return to_indexer_[static_cast<size_t>(i)]->has_room(); },
      [this](int i) { return to_indexer_[static_cast<size_t>(i)]->idle(); });
  if (ix) p.last_indexer = *ix;
  return ix;
}

bool Pipeline::pack_file(int fd, uint64_t size, const FileAttrs& attrs, const FileBatch& b,
                         const FileBatch::Entry& e, OpenPack& p, int node) {
  BufferPool& pool = *pools_[static_cast<size_t>(node)];
  if (p.buffer && p.used + size > cfg_.opts.block_size) send_pack(p, node);
  if (!p.buffer) {
    p.buffer = pool.acquire();
    if (!p.buffer) return true;  // stopped
    p.used = 0;
    p.pack = std::make_unique<FilePack>();
  }
  // The file is read as it was when opened: at most the size fstat saw.
  unsigned char* dst = pool.read_area(p.buffer) + p.used;
  uint64_t got = 0;
  bool blocking = false;
  while (got < size) {
    ssize_t n = p.nowait ? read_cached(fd, dst + got, size - got, static_cast<off_t>(got))
                         : ::pread(fd, dst + got, size - got, static_cast<off_t>(got));
    if (n > 0) {
      got += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) break;  // it shrank since the fstat
    if (errno == EINTR) continue;
    if (errno == EAGAIN && p.nowait) {
      // Not all in the page cache (or O_NONBLOCK means something to this
      // file system): read later, blocking.
      count_read_later();
      return false;
    }
    if (errno == EAGAIN && !blocking) {
      // O_NONBLOCK means something to this file system: read blocking.
      // (Clearing it up front cost two syscalls per file.)
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      blocking = true;
      continue;
    }
    totals_.skipped++;  // an I/O error: the file is indexed as far as it was read
    break;
  }
  FilePack& pack = *p.pack;
  FileAttrs a = attrs;
  if (got == size) {
    const size_t w = static_cast<size_t>(std::min<uint64_t>(got, kTailWindow));
    a.tail = uint64_t{crc32c(dst + got - w, w)} + 1;
  }
  const size_t path_off = pack.paths.size();
  pack.paths.append(b.dir->path).push_back('/');
  pack.paths.append(b.name(e), e.name_len);
  pack.files.push_back(PackedFile{static_cast<uint32_t>(p.used), static_cast<uint32_t>(got),
                                  static_cast<uint32_t>(path_off),
                                  static_cast<uint32_t>(pack.paths.size() - path_off), a});
  p.used += got;
  totals_.bytes_read += got;
  return true;
}

void Pipeline::send_pack(OpenPack& p, int node) {
  if (!p.buffer) return;
  BufferPool& pool = *pools_[static_cast<size_t>(node)];
  unsigned char* buf = p.buffer;
  const uint64_t bytes = p.used;
  p.buffer = nullptr;
  p.used = 0;
  // Any indexer of the node could take it (a pack holds whole files); the
  // reader's last is preferred (indexer_picker.h).
  const auto ix = take_indexer(node, p);
  if (!ix) {
    pool.release(buf);
    return;
  }
  ReadMsg m;
  m.kind = ReadMsg::kFiles;
  m.node = node;
  m.buffer = buf;
  m.pack = std::move(p.pack);
  const bool sent = deliver(p, *ix, std::move(m));
  give_back(node, p, *ix);
  if (!sent) {
    pool.release(buf);
    return;
  }
  totals_.bytes += bytes;
}

bool Pipeline::read_appended(Fd& fd, const struct stat& st, const FileBatch& b,
                             const FileBatch::Entry& e, OpenPack& p, int node) {
  RefreshCatalog& known = *cfg_.rules.known;
  const uint32_t i = e.append - 1;
  const KnownFile& k = known.file(i);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto plan = std::make_unique<AppendRead>();
  bool ok = static_cast<uint64_t>(st.st_ino) == k.ino && size > k.size;
  std::string window;
  const uint64_t at = k.size - std::min<uint64_t>(k.size, kTailWindow);
  if (ok) {
    // Unaligned reads from here on.
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~(O_NONBLOCK | O_DIRECT));
    window.resize(static_cast<size_t>(k.size - at));
    size_t got = 0;
    while (got < window.size()) {
      const ssize_t n = ::pread(fd.get(), window.data() + got, window.size() - got,
                                static_cast<off_t>(at + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ok = got == window.size();
    totals_.bytes_read += window.size();
    ok = ok && uint64_t{crc32c(window.data(), window.size())} + 1 == k.tail &&
         plan_append(tokenizer_, reinterpret_cast<const unsigned char*>(window.data()),
                     window.size(), at, plan->plan);
  }
  known.resolve_append(i, ok);
  if (!ok) return false;  // read whole, as a changed file
  plan->known = i;
  plan->root = k.root;
  plan->old_size = k.size;
  plan->chain_tokens = k.tokens;
  window.resize(static_cast<size_t>(plan->plan.start - at));  // what precedes the reading
  const auto ix = take_indexer(node, p);
  if (!ix) return true;
  read_file(std::move(fd), st, b, e, *ix, node, p, std::move(plan), window);
  give_back(node, p, *ix);
  return true;
}

void Pipeline::read_file(Fd fd, const struct stat& st, const FileBatch& b,
                         const FileBatch::Entry& e, int indexer, int node, const OpenPack& p,
                         std::unique_ptr<AppendRead> append, const std::string& window) {
  const auto& o = cfg_.opts;
  BufferPool& pool = *pools_[static_cast<size_t>(node)];
  bool direct = o.direct_io != 0 && !append;
  // An append's read cleared O_NONBLOCK and O_DIRECT already.
  if (!append) {
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags >= 0 && (flags & O_NONBLOCK)) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    direct = direct && flags >= 0 && (flags & O_DIRECT);
  }

  ReadMsg begin;
  begin.node = node;
  begin.path.reserve(b.dir->path.size() + 1 + e.name_len);
  begin.path.append(b.dir->path).push_back('/');
  begin.path.append(b.name(e), e.name_len);
  begin.attrs = attrs_of(st);
  const uint64_t start = append ? append->plan.start : 0;
  const uint64_t old_size = append ? append->old_size : 0;
  begin.append = std::move(append);
  if (!deliver(p, indexer, std::move(begin))) return;

  // The file is read as it was when opened: growth after that is not read.
  const uint64_t limit = static_cast<uint64_t>(st.st_size);
  uint64_t off = start;
  TailCrc tail(limit);
  tail.feed(start - window.size(), reinterpret_cast<const unsigned char*>(window.data()),
            window.size());
  unsigned char carry[kMaxToken];
  size_t carry_len = 0;
  bool eof = limit == 0;
  while (!eof) {
    if (stop_.load(std::memory_order_relaxed)) return;
    unsigned char* buf = pool.acquire();
    if (!buf) return;
    unsigned char* area = pool.read_area(buf);
    size_t want = direct ? o.block_size
                         : static_cast<size_t>(std::min<uint64_t>(o.block_size, limit - off));
    ssize_t n;
    while (true) {
      n = p.own ? read_large(fd.get(), area, want, static_cast<off_t>(off), limit)
                : ::pread(fd.get(), area, want, static_cast<off_t>(off));
      if (n >= 0) break;
      if (errno == EINTR) continue;
      if (errno == EINVAL && direct) {
        // Refused at read time (alignment rules of this file system).
        fd = Fd(open_for_reading(b.dir->fd, b.name(e), !e.via_symlink, false));
        direct = false;
        want = static_cast<size_t>(std::min<uint64_t>(o.block_size, limit - off));
        if (fd) continue;
      }
      break;
    }
    if (n < 0) {
      // An I/O error mid-file: the file is indexed as far as it was read.
      pool.release(buf);
      totals_.skipped++;
      break;
    }
    size_t got = static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(n), limit - off));
    tail.feed(off, area, got);
    off += got;
    eof = got == 0 || off >= limit;
    unsigned char* data = area - carry_len;
    std::memcpy(data, carry, carry_len);
    size_t len = carry_len + got;
    size_t cut = eof ? len : tokenizer_.safe_cut(data, len);
    carry_len = len - cut;
    std::memcpy(carry, data + cut, carry_len);
    if (cut == 0) {
      pool.release(buf);
      continue;
    }
    ReadMsg blk;
    blk.kind = ReadMsg::kBlock;
    blk.node = node;
    blk.buffer = buf;
    blk.data = data;
    blk.len = cut;
    if (!deliver(p, indexer, std::move(blk))) {
      pool.release(buf);
      return;
    }
  }
  ReadMsg end;
  end.kind = ReadMsg::kEnd;
  end.node = node;
  end.size = off;
  end.tail = tail.value();
  deliver(p, indexer, std::move(end));
  totals_.bytes += off > old_size ? off - old_size : 0;
  totals_.bytes_read += off - start;
}

}  // namespace scipis
