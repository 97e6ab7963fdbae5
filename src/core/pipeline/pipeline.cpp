#include "pipeline/pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
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
// A resumable build flushes between files once its term table is this full.
constexpr double kResumableFill = 0.9;
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
    plan_ = plan_numa(topo ? *topo : NumaTopology::detect(), cfg_.opts.reader_threads,
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
    files_.push_back(std::make_unique<BoundedQueue<FileBatch>>(
        std::max<size_t>(4, kFileBatches / nodes), &stop_));
    free_indexers_.push_back(std::make_unique<BoundedQueue<int>>(
        static_cast<size_t>(cfg_.opts.indexer_threads), &stop_));
  }
  spare_buffers_.resize(nodes);
  for (int i = 0; i < cfg_.opts.indexer_threads; i++) {
    // A short queue per indexer: an indexer busy serialising a flush holds
    // few buffers, and the shared pool keeps feeding the others.
    to_indexer_.push_back(std::make_unique<BoundedQueue<ReadMsg>>(kIndexerQueue, &stop_));
    sketches_.push_back(std::make_unique<DistinctTerms>());
    if (cfg_.resume && static_cast<size_t>(i) < cfg_.resume->indexers.size())
      sketches_.back()->load(cfg_.resume->indexers[static_cast<size_t>(i)].sketch);
    free_indexers_[static_cast<size_t>(plan_.indexer_node[static_cast<size_t>(i)])]->push(i);
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
  const size_t flushes = 2 * indexers + 2 * writers;
  return pool_buffers(o) * BufferPool::buffer_bytes_for(o.block_size) + indexers * per_indexer +
         flushes * per_flush;
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

void Pipeline::place(NumaRole role, int index, int node) {
  if (!placer_) return;
  const int id = plan_.nodes[static_cast<size_t>(node)];
  placer_->run_on(role, index, id);
  set_thread_memory_node(id, placer_);
}

void Pipeline::run() {
  const auto& o = cfg_.opts;
  const size_t nodes = plan_.node_count();
  for (size_t n = 0; n < nodes; n++) {
    const int node = static_cast<int>(n);
    pools_.push_back(std::make_unique<BufferPool>(
        pool_buffers(plan_.on_node(NumaRole::kReader, node).size(),
                     plan_.on_node(NumaRole::kIndexer, node).size()),
        o.block_size, &stop_, placer_, plan_.nodes[n]));
  }
  // A refresh makes only the directories its segments go to (put_segment;
  // one pack each, mostly): a directory is an inode to create and to sync.
  for (int i = 0; i < o.indexer_threads && !cfg_.pack_segments; i++) {
    mkdir_p(cfg_.gen_dir + "/" + tf_dir(static_cast<uint32_t>(i)));
    mkdir_p(cfg_.gen_dir + "/" + file_dir(static_cast<uint32_t>(i)));
  }
  auto guard = [this](auto fn) {
    return [this, fn] {
      keep_freed_huge_pages();
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
  for (size_t n = 0; n < nodes; n++)
    for (size_t k = 0; k < per_node; k++)
      crawlers.emplace_back(guard([this, n, &work, &crawling] {
        const int node = static_cast<int>(n);
        place(NumaRole::kCrawler, node, node);
        Crawler(cfg_.rules, *files_[n], stop_, found_, node).run(work, totals_.skipped);
        if (--crawling == 0) found_.done.store(!stop_.load() && !paused_.load());
      }), own);
  for (int i = 0; i < o.reader_threads; i++)
    readers.emplace_back(guard([this, i] { reader_loop(i); }), own);
  for (int i = 0; i < o.indexer_threads; i++)
    indexers.emplace_back(guard([this, i] { indexer_loop(i); }), own);
  for (int i = 0; i < o.writer_threads; i++)
    writers.emplace_back(guard([this, i] { writer_loop(i); }), own);

  for (auto& t : crawlers) t.join();
  for (auto& q : files_) q->close();
  for (auto& t : readers) t.join();
  for (auto& q : to_indexer_) q->close();
  reading_done_.store(true);
  for (auto& t : indexers) t.join();
  to_writer_.close();
  for (auto& t : writers) t.join();
  if (error_) std::rethrow_exception(error_);
  if (stop_.load()) fail(SCIPIS_E_CANCELED, "indexing was cancelled");
  if (paused_.load()) fail(SCIPIS_E_CANCELED, "indexing was paused; a resumable build continues it");
}

void Pipeline::reader_loop(int id) {
  const int node = plan_.reader_node[static_cast<size_t>(id)];
  place(NumaRole::kReader, id, node);
  auto& files = *files_[static_cast<size_t>(node)];
  OpenPack pack;
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
  if (e.append && read_appended(fd, st, b, e, node)) return;
  if (!direct && static_cast<uint64_t>(st.st_size) <= pack_limit_) {
    pack_file(fd.get(), static_cast<uint64_t>(st.st_size), attrs_of(st), b, e, p, node);
    return;
  }
  auto& free = *free_indexers_[static_cast<size_t>(node)];
  auto ix = free.pop();
  if (!ix) return;
  read_file(std::move(fd), st, b, e, *ix, node);
  free.push(*ix);
}

void Pipeline::pack_file(int fd, uint64_t size, const FileAttrs& attrs, const FileBatch& b,
                         const FileBatch::Entry& e, OpenPack& p, int node) {
  BufferPool& pool = *pools_[static_cast<size_t>(node)];
  if (p.buffer && p.used + size > cfg_.opts.block_size) send_pack(p, node);
  if (!p.buffer) {
    p.buffer = pool.acquire();
    if (!p.buffer) return;  // stopped
    p.used = 0;
    p.pack = std::make_unique<FilePack>();
  }
  // The file is read as it was when opened: at most the size fstat saw.
  unsigned char* dst = pool.read_area(p.buffer) + p.used;
  uint64_t got = 0;
  bool blocking = false;
  while (got < size) {
    ssize_t n = ::pread(fd, dst + got, size - got, static_cast<off_t>(got));
    if (n > 0) {
      got += static_cast<uint64_t>(n);
      continue;
    }
    if (n == 0) break;  // it shrank since the fstat
    if (errno == EINTR) continue;
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
}

void Pipeline::send_pack(OpenPack& p, int node) {
  if (!p.buffer) return;
  BufferPool& pool = *pools_[static_cast<size_t>(node)];
  auto& free = *free_indexers_[static_cast<size_t>(node)];
  unsigned char* buf = p.buffer;
  const uint64_t bytes = p.used;
  p.buffer = nullptr;
  p.used = 0;
  // Any free indexer of the node will do: a pack holds whole files.
  auto ix = free.pop();
  if (!ix) {
    pool.release(buf);
    return;
  }
  ReadMsg m;
  m.kind = ReadMsg::kFiles;
  m.node = node;
  m.buffer = buf;
  m.pack = std::move(p.pack);
  const bool sent = to_indexer_[static_cast<size_t>(*ix)]->push(std::move(m));
  free.push(*ix);
  if (!sent) {
    pool.release(buf);
    return;
  }
  totals_.bytes += bytes;
}

bool Pipeline::read_appended(Fd& fd, const struct stat& st, const FileBatch& b,
                             const FileBatch::Entry& e, int node) {
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
  auto& free = *free_indexers_[static_cast<size_t>(node)];
  auto ix = free.pop();
  if (!ix) return true;
  read_file(std::move(fd), st, b, e, *ix, node, std::move(plan), window);
  free.push(*ix);
  return true;
}

void Pipeline::read_file(Fd fd, const struct stat& st, const FileBatch& b,
                         const FileBatch::Entry& e, int indexer, int node,
                         std::unique_ptr<AppendRead> append, const std::string& window) {
  const auto& o = cfg_.opts;
  BufferPool& pool = *pools_[static_cast<size_t>(node)];
  bool direct = o.direct_io != 0 && !append;
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  direct = direct && (::fcntl(fd.get(), F_GETFL) & O_DIRECT);

  auto& q = *to_indexer_[static_cast<size_t>(indexer)];
  ReadMsg begin;
  begin.node = node;
  begin.path.reserve(b.dir->path.size() + 1 + e.name_len);
  begin.path.append(b.dir->path).push_back('/');
  begin.path.append(b.name(e), e.name_len);
  begin.attrs = attrs_of(st);
  const uint64_t start = append ? append->plan.start : 0;
  const uint64_t old_size = append ? append->old_size : 0;
  begin.append = std::move(append);
  if (!q.push(std::move(begin))) return;

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
      n = ::pread(fd.get(), area, want, static_cast<off_t>(off));
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
    if (!q.push(std::move(blk))) {
      pool.release(buf);
      return;
    }
  }
  ReadMsg end;
  end.kind = ReadMsg::kEnd;
  end.node = node;
  end.size = off;
  end.tail = tail.value();
  q.push(std::move(end));
  totals_.bytes += off > old_size ? off - old_size : 0;
  totals_.bytes_read += off - start;
}

void Pipeline::indexer_loop(int id) {
  const int node = plan_.indexer_node[static_cast<size_t>(id)];
  // Before the term table and arena are mapped: they come from this node.
  place(NumaRole::kIndexer, id, node);
  const auto& o = cfg_.opts;
  uint64_t budget = cfg_.tfidf_start ? std::min<uint64_t>(cfg_.tfidf_start, o.tfidf_index_size)
                                     : o.tfidf_index_size;
  std::optional<SegmentRef> absorb;
  if (cfg_.resume && static_cast<size_t>(id) < cfg_.resume->indexers.size())
    absorb = cfg_.resume->indexers[static_cast<size_t>(id)].absorb;
  // Room for a segment taken in as a merge makes it: else its documents
  // alone filled a refresh's small table, and the two segments written
  // were merged after every refresh.
  if (absorb)
    budget = std::min<uint64_t>(o.tfidf_index_size,
                                std::max(budget, kMergeTableFactor * segment_bytes(*absorb)));
  TfIdfIndex tf(budget, o.index_depth, sketches_[static_cast<size_t>(id)].get());
  PathIndex paths(o.path_index_size);
  uint64_t next_seq = 0, first_seq = 0;
  uint32_t seg_no = 0;
  // This indexer's complete files so far, for the marks; in_doc: a file's
  // tokens are being added and its record is not yet.
  uint64_t my_files = 0, my_bytes = 0, my_tokens = 0, my_with_tokens = 0;
  bool in_doc = false;
  if (cfg_.resume && static_cast<size_t>(id) < cfg_.resume->indexers.size()) {
    const auto& r = cfg_.resume->indexers[static_cast<size_t>(id)];
    seg_no = r.segs;
    next_seq = first_seq = r.next_seq;
    my_files = r.files;
    my_bytes = r.bytes;
    my_tokens = r.tokens;
    my_with_tokens = r.docs_with_tokens;
  }
  std::string cur_path;
  DocInfo cur{};
  std::unique_ptr<AppendRead> cur_append;
  uint32_t since_check = 0;
  constexpr size_t kBatch = 512;
  TermKey batch[kBatch];
  uint32_t counts[kBatch];
  // Made at the first file: an indexer a small refresh gives nothing
  // clears neither.
  std::unique_ptr<BlockCounter> counter_mem;
  std::unique_ptr<ScanScratch> scratch;

  auto flush = [&] {
    FlushJob job;
    job.ref.indexer = static_cast<uint32_t>(id);
    job.ref.seg = seg_no++;
    job.ref.first_seq = first_seq;
    job.ref.docs = paths.count();
    if (cfg_.marks) {
      job.partial = in_doc;
      job.next_seq = next_seq;
      job.files = my_files;
      job.bytes = my_bytes;
      job.tokens = my_tokens;
      job.docs_with_tokens = my_with_tokens;
      job.sketch = sketches_[static_cast<size_t>(id)]->registers();
    }
    {
      std::lock_guard<std::mutex> lk(spare_mu_);
      auto& spares = spare_buffers_[static_cast<size_t>(node)];
      if (!spares.empty()) {
        job.tf_data = std::move(spares.back().tf_data);
        job.tf_meta = std::move(spares.back().tf_meta);
        spares.pop_back();
      }
    }
    tf.serialise(o.split_factor, job.tf_data, job.tf_meta, &paths);
    paths.serialise(o.split_factor, job.file_data, job.file_meta, &job.path_trigrams);
    size_t file_bytes = job.file_data.capacity() + job.path_trigrams.capacity();
    for (const auto& m : job.file_meta) file_bytes += m.capacity();
    job.file_bytes.set(file_bytes);
    budget = std::min<uint64_t>(4 * budget, o.tfidf_index_size);
    tf.clear(budget);
    paths.clear();
    first_seq = next_seq;
    if (!to_writer_.push(std::move(job))) fail(SCIPIS_E_CANCELED, "indexing was cancelled");
  };

  // Before the first new document: the small last segment's documents,
  // under their own numbers, as a merge would add them.
  auto take_in = [&] {
    const std::shared_ptr<const AbsorbDocs> docs = cfg_.resume->indexers[static_cast<size_t>(id)].absorb_docs();
    const AbsorbDocs& a = *docs;
    if (a.ref.first_seq + a.docs.size() != next_seq || first_seq != next_seq)
      fail(SCIPIS_E_INTERNAL, "a refresh lost count of the documents it takes in");
    next_seq = first_seq = a.ref.first_seq;
    for (const AbsorbDocs::Doc& d : a.docs) {
      if (d.info.seq != next_seq) fail(SCIPIS_E_INTERNAL, "a refresh lost count of the documents it takes in");
      next_seq++;  // as a new document's begins: a flush inside it is continued
      for (const auto& [term, n] : d.terms) {
        tf.add(TermKey::of(a.names[term]), d.info.seq, n);
        if (++since_check % TfIdfIndex::kAddsPerFullCheck == 0 && tf.full()) flush();
      }
      paths.add(d.info, d.path);
      if (paths.full() || tf.full()) flush();
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      absorbed_.push_back(a.ref);
    }
    absorb.reset();
  };

  // Tokens are counted in the block counter first; its distinct terms then
  // reach the index in batches whose lookups are worked ahead
  // (TfIdfIndex::add_batch), so that their misses overlap. readable: the
  // bytes from data on that may be read (the rest of the pool buffer).
  auto index_bytes = [&](unsigned char* data, size_t len, size_t readable) {
    if (!scratch) {
      counter_mem = std::make_unique<BlockCounter>();
      // Written before it is read: no 330 KiB zeroed per indexer and refresh.
      scratch = std::make_unique_for_overwrite<ScanScratch>();
    }
    BlockCounter& counter = *counter_mem;
    const char* base = reinterpret_cast<const char*>(data);
    auto drain = [&] {
      size_t batched = 0;
      auto add_batch = [&] {
        tf.add_batch(batch, counts, batched, cur.seq, [&] {
          if (++since_check % TfIdfIndex::kAddsPerFullCheck == 0 && tf.full()) flush();
        });
        batched = 0;
      };
      counter.drain(base, [&](const char* s, size_t n, uint64_t pre, uint32_t count) {
        batch[batched] = TermKey{s, n, pre, token_hash(s, n, pre), nullptr, 0};
        counts[batched++] = count;
        if (batched == kBatch) add_batch();
      });
      add_batch();
    };
    uint64_t tokens = 0;
    tokenizer_.tokenize_block(data, len, readable, *scratch, [&](BlockToken* t, size_t nt) {
      counter.add_tokens(base, t, nt, drain);
      tokens += nt;
    });
    drain();
    cur.tokens += tokens;
  };

  auto& q = *to_indexer_[static_cast<size_t>(id)];
  while (auto m = q.pop()) {
    if (m->node != node) cross_node_++;
    BufferPool& pool = *pools_[static_cast<size_t>(m->node)];
    switch (m->kind) {
      case ReadMsg::kBegin:
        if (absorb) take_in();
        cur = DocInfo::of(next_seq++, 0, m->attrs);
        cur_path = std::move(m->path);
        cur_append = std::move(m->append);
        in_doc = true;
        break;
      case ReadMsg::kBlock:
        index_bytes(m->data, m->len,
                    static_cast<size_t>(m->buffer + pool.buffer_bytes() - m->data));
        pool.release(m->buffer);
        break;
      case ReadMsg::kEnd:
        cur.size = m->size;
        cur.tail = m->tail;
        paths.add(cur, cur_path);
        in_doc = false;
        if (cur_append) {
          // A link: the file is counted already; its length grows by the
          // link's tokens less the piece it counts again.
          const AppendRead& a = *cur_append;
          const uint64_t again = std::min<uint64_t>(a.plan.retract.empty() ? 0 : 1, cur.tokens);
          const uint64_t chain = a.chain_tokens + cur.tokens - again;
          totals_.tokens += cur.tokens - again;
          if (a.chain_tokens == 0 && chain > 0) totals_.docs_with_tokens++;
          {
            std::lock_guard<std::mutex> lk(mu_);
            links_.push_back(ChainLink{DocId{static_cast<uint32_t>(id), cur.seq}, a.root, chain,
                                       again ? a.plan.retract : std::string()});
          }
          cur_append.reset();
          if (paths.full() || tf.full()) flush();
          break;
        }
        my_files++;
        my_bytes += cur.size;
        my_tokens += cur.tokens;
        my_with_tokens += cur.tokens != 0;
        totals_.files++;
        totals_.tokens += cur.tokens;
        if (cur.tokens) totals_.docs_with_tokens++;
        if (paths.full() || tf.full() || (cfg_.marks && tf.nearly_full(kResumableFill))) flush();
        break;
      case ReadMsg::kFiles: {
        // Each packed file is a document, as if it had come as Begin, one
        // block, End; the shared totals are added to once per pack.
        const FilePack& pack = *m->pack;
        unsigned char* area = pool.read_area(m->buffer);
        const unsigned char* end = m->buffer + pool.buffer_bytes();
        uint64_t tokens = 0, with_tokens = 0;
        if (absorb) take_in();
        for (const PackedFile& f : pack.files) {
          cur = DocInfo::of(next_seq++, f.len, f.attrs);
          in_doc = true;
          if (f.len) index_bytes(area + f.off, f.len, static_cast<size_t>(end - (area + f.off)));
          paths.add(cur, std::string_view(pack.paths).substr(f.path_off, f.path_len));
          in_doc = false;
          my_files++;
          my_bytes += cur.size;
          my_tokens += cur.tokens;
          my_with_tokens += cur.tokens != 0;
          tokens += cur.tokens;
          with_tokens += cur.tokens != 0;
          if (paths.full() || tf.full() || (cfg_.marks && tf.nearly_full(kResumableFill))) flush();
        }
        totals_.files += pack.files.size();
        totals_.tokens += tokens;
        totals_.docs_with_tokens += with_tokens;
        pool.release(m->buffer);
        break;
      }
    }
  }
  if (stop_.load()) return;
  if (!tf.empty() || !paths.empty()) flush();
}

void Pipeline::writer_loop(int id) {
  place(NumaRole::kWriter, id, plan_.writer_node[static_cast<size_t>(id)]);
  // fsyncs wait for the end of the build: after the first one has committed
  // the file system journal holding every new inode, the rest are cheap.
  std::vector<std::string> written;
  // A resumable build's marks go out in groups, at most one a second, each
  // after the files of its segments are durable: a stop loses at most the
  // last second's segments, and fsyncs stay few. The first segment's goes
  // out at once: a build stopped in its first second keeps it too.
  std::vector<std::string> unsynced;
  std::vector<std::pair<std::string, SegmentMark>> pending;
  auto last_marks = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto put = [&](const std::string& path, std::string_view data) {
    write_file_durable(path, data, false);
    written.push_back(path);
    if (cfg_.marks) unsynced.push_back(path);
  };
  auto write_marks = [&] {
    for (const auto& path : unsynced) fsync_file(path);
    unsynced.clear();
    for (const auto& [path, mark] : pending) {
      write_file_durable(path, mark.encode(), false);
      written.push_back(path);
      if (cfg_.stop_after_marks && ++marks_written_ >= cfg_.stop_after_marks) stop();
    }
    pending.clear();
    last_marks = std::chrono::steady_clock::now();
  };
  while (auto job = to_writer_.pop()) {
    const std::string fdir = cfg_.gen_dir + "/" + file_dir(job->ref.indexer) + "/";
    SegmentParts parts{job->tf_data.view(), {}, job->file_data, {}, job->path_trigrams};
    for (const auto& m : job->tf_meta) parts.tf_meta.push_back(m.view());
    for (const auto& m : job->file_meta) parts.file_meta.push_back(m);
    put_segment(cfg_.gen_dir, parts, cfg_.pack_segments, &job->ref,
                [&](const std::string& path, std::string_view data) {
                  if (!cfg_.defer_packs || !job->ref.packed) return put(path, data);
                  std::lock_guard<std::mutex> lk(mu_);
                  deferred_.push_back({job->ref.indexer, job->ref.seg, path, std::string(data)});
                });
    if (cfg_.marks) {
      SegmentMark mark;
      mark.ref = job->ref;
      mark.partial = job->partial;
      mark.next_seq = job->next_seq;
      mark.files = job->files;
      mark.bytes = job->bytes;
      mark.tokens = job->tokens;
      mark.docs_with_tokens = job->docs_with_tokens;
      mark.sketch = std::move(job->sketch);
      pending.emplace_back(fdir + seg_mark(job->ref.seg), std::move(mark));
      if (cfg_.stop_after_marks ||
          std::chrono::steady_clock::now() - last_marks >= std::chrono::seconds(1))
        write_marks();
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      segments_.push_back(job->ref);
    }
    // Back to the flushing indexer's node, whose memory they are.
    const int node = plan_.indexer_node[job->ref.indexer];
    std::lock_guard<std::mutex> lk(spare_mu_);
    auto& spares = spare_buffers_[static_cast<size_t>(node)];
    if (spares.size() < plan_.on_node(NumaRole::kIndexer, node).size())
      spares.push_back(FlushBuffers{std::move(job->tf_data), std::move(job->tf_meta)});
  }
  // Stopped or paused: what is written is kept for a resume.
  if ((stop_.load() || paused_.load()) && !pending.empty() && !cfg_.stop_after_marks) write_marks();
  for (const auto& path : written) {
    if (stop_.load(std::memory_order_relaxed)) return;
    fsync_file(path);
  }
}
}  // namespace scipis
