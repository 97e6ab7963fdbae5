// The build door: runs a pipeline on engine threads while the caller polls,
// then commits the new generation by replacing the manifest.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <optional>
#include <thread>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "index/gen_paths.h"
#include "index/manifest.h"
#include "pipeline/build.h"

#include "index/journal.h"
#include "query/collection.h"
#include "pipeline/compact.h"
#include "index/segment_format.h"
#include "index/segment_pack.h"
#include "pipeline/pipeline.h"
#include "scipis_engine.h"
#include "util/door.h"
#include "util/fileio.h"
#include "util/mem_account.h"
#include "util/time_ns.h"

using namespace scipis;

namespace {
// The larger of gen and the generation an entry named name is (g<N>).
uint64_t max_generation(uint64_t gen, const char* name) {
  if (name[0] != 'g') return gen;
  char* end;
  const unsigned long long g = std::strtoull(name + 1, &end, 10);
  return *end == '\0' && g > gen ? g : gen;
}
}  // namespace

// Generations named by directories g<N>; a new build takes the next number.
uint64_t next_generation(const std::string& dir, const Manifest* current) {
  uint64_t gen = current ? current->generation : 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) gen = max_generation(gen, e->d_name);
    ::closedir(d);
  }
  return gen + 1;
}

// Files no manifest names are left-overs of a cancelled, failed or crashed
// build: garbage, removed while the next build runs.
std::vector<std::string> list_garbage(const std::string& dir, const Manifest* current,
                                      const std::string& resumed, bool thorough, uint64_t* next_gen) {
  uint64_t gen = current ? current->generation : 0;
  absl::flat_hash_set<std::string> keep{"MANIFEST", resumed};
  absl::flat_hash_map<uint64_t, absl::flat_hash_set<std::string>> homes;  // of segments, then their files
  if (current) {
    keep.insert("g" + std::to_string(current->generation));
    for (const SegmentRef& s : current->segments) {
      keep.insert("g" + std::to_string(current->home_of(s)));
      // A refresh's look stays at the top level: no file names for it.
      if (!thorough) continue;
      auto& files = homes[current->home_of(s)];
      for (std::string& f : segment_files(s, current->split_factor)) files.insert(std::move(f));
    }
  }
  std::vector<std::string> doomed;
  DIR* d = ::opendir(dir.c_str());
  if (next_gen) *next_gen = gen + 1;
  if (!d) return doomed;
  while (struct dirent* e = ::readdir(d)) {
    gen = max_generation(gen, e->d_name);
    std::string n = e->d_name;
    if (n == "." || n == ".." || n.rfind("FRESH", 0) == 0 || keep.contains(n)) continue;
    if (n == kMergeStage && merge_stage_busy(dir + "/" + n)) continue;
    doomed.push_back(dir + "/" + n);
  }
  ::closedir(d);
  if (next_gen) *next_gen = gen + 1;
  // Inside older generations that still hold live segments: what a commit
  // interrupted before dropping it left (the files of merged segments,
  // the generation's own tombstones and lists).
  if (!thorough || !current) return doomed;
  for (const auto& [home, files] : homes) {
    if (home == current->generation) continue;
    const std::string g = dir + "/g" + std::to_string(home);
    for (const std::string& name : list_dir(g)) {
      bool is_index_dir = false;
      for (uint32_t i = 0; i < current->indexers && !is_index_dir; i++)
        is_index_dir = name == tf_dir(i) || name == file_dir(i);
      if (!is_index_dir) {
        if (!files.contains(name)) doomed.push_back(g + "/" + name);  // a live pack stays
        continue;
      }
      for (const std::string& f : list_dir(g + "/" + name))
        if (!files.contains(name + "/" + f)) doomed.push_back(g + "/" + name + "/" + f);
    }
  }
  return doomed;
}

std::string checked_root(const char* root) {
  std::string r = root;
  if (r.empty() || r[0] != '/') fail(SCIPIS_E_INVALID, "root \"%s\" is not an absolute path", root);
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  struct stat st;
  if (::stat(r.c_str(), &st) != 0) fail_io(errno, "open directory", r);
  if (!S_ISDIR(st.st_mode)) fail(SCIPIS_E_INVALID, "root \"%s\" is not a directory", r.c_str());
  if (::access(r.c_str(), R_OK | X_OK) != 0) fail_io(errno, "read directory", r);
  return r;
}

void configure(scipis_build& b, const std::string& root, const scipis_options& opts, int flags) {
  b.cfg.root = root;
  b.cfg.opts = opts;
  b.cfg.indexers_read = opts.reader_threads == 0 && opts.direct_io == 0;
  resolve_threads(b.cfg.opts);
  for (int i = 0; i < opts.n_include; i++) b.cfg.rules.include.emplace_back(opts.include[i]);
  for (int i = 0; i < opts.n_exclude; i++) b.cfg.rules.exclude.emplace_back(opts.exclude[i]);
  b.cfg.opts.include = nullptr;
  b.cfg.opts.exclude = nullptr;
  b.cfg.rules.follow_symlinks = opts.follow_symlinks != 0;
  b.cfg.count_found_bytes = (flags & SCIPIS_BUILD_COUNT_BYTES) != 0;
}

void resolve_threads(scipis_options& o) {
  if (o.indexer_threads != 0 && o.reader_threads != 0 && o.writer_threads != 0) return;
  // Read once per process (glibc reads it from /sys on every call: an
  // open and a read that each small refresh paid).
  static const int cpus = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (o.indexer_threads == 0) o.indexer_threads = cpus;
  if (o.reader_threads == 0) o.reader_threads = std::min(cpus, 4);
  if (o.writer_threads == 0) o.writer_threads = 1;
}

namespace {

// What must match for a generation to be continued: everything that
// decides which files are read and how segments are laid out.
std::string fingerprint(const PipelineConfig& c) {
  std::string f = "scipis build 1\nroot " + c.root + "\n";
  f += "split " + std::to_string(c.opts.split_factor) + " indexers " +
       std::to_string(c.opts.indexer_threads) + " depth " + std::to_string(c.opts.index_depth) +
       " symlinks " + std::to_string(c.rules.follow_symlinks) + "\ndelimiters ";
  f.append(reinterpret_cast<const char*>(c.opts.delimiter), 256);
  for (const auto& g : c.rules.include) f += "\ninclude " + g;
  for (const auto& g : c.rules.exclude) f += "\nexclude " + g;
  return f;
}

// The newest generation after current that a build with this fingerprint
// left uncommitted: "g<N>", or empty.
std::string resumable_generation(const std::string& dir, const Manifest* current,
                                 const std::string& fp) {
  uint64_t best = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      if (e->d_name[0] != 'g') continue;
      char* end;
      unsigned long long g = std::strtoull(e->d_name + 1, &end, 10);
      if (*end != '\0' || g <= (current ? current->generation : 0) || g <= best) continue;
      std::string bytes;
      if (read_file(dir + "/" + e->d_name + "/" + kBuildFingerprintFile, bytes) && bytes == fp)
        best = g;
    }
    ::closedir(d);
  }
  return best ? "g" + std::to_string(best) : "";
}

// The marks are of no use once the generation is live.
void remove_marks(const PipelineConfig& c) {
  for (int i = 0; i < c.opts.indexer_threads; i++) {
    const std::string fdir = c.gen_dir + "/" + file_dir(static_cast<uint32_t>(i)) + "/";
    for (uint32_t s = 0;; s++)
      if (::unlink((fdir + seg_mark(s)).c_str()) != 0) break;
  }
  ::unlink((c.gen_dir + "/" + kBuildFingerprintFile).c_str());
}

void coordinate(scipis_build* b) {
  std::exception_ptr cleaning_error;
  // Most refreshes leave nothing to clean: no thread woken for it.
  EngineThread cleaner;
  if (!b->garbage.empty()) cleaner = EngineThread([b, &cleaning_error] {
    try {
      for (const auto& g : b->garbage)
        remove_tree(g, b->pipeline ? &b->pipeline->stop_flag() : &b->compact->stop);
    } catch (...) {
      cleaning_error = std::current_exception();
    }
  });
  try {
    if (b->refresh && !b->prepared) refresh_prepare(b);
    if (b->compact) {
      compact_run(b);
    } else {
      b->pipeline->run();
    }
    if (b->compact) {
    } else if (b->refresh) {
      refresh_conclude(b);
    } else {
      auto& m = b->next;
      m.segments = b->pipeline->segments();
      if (b->cfg.resume)
        m.segments.insert(m.segments.end(), b->cfg.resume->kept.begin(), b->cfg.resume->kept.end());
      // Kept segments' run began earlier: a later time only makes more of
      // their files count as racy (read again by a refresh), never fewer.
      for (auto& seg : m.segments) seg.run_started_ns = b->started_ns;
      std::sort(m.segments.begin(), m.segments.end(), [](const auto& x, const auto& y) {
        return x.indexer != y.indexer ? x.indexer < y.indexer : x.seg < y.seg;
      });
      const auto& t = b->pipeline->totals();
      m.files = t.files;
      m.bytes = t.bytes;
      m.docs_with_tokens = t.docs_with_tokens;
      m.total_tokens = t.tokens;
      m.skipped = t.skipped;
      m.terms = b->pipeline->distinct_terms();
      m.index_bytes = tree_bytes(b->cfg.gen_dir);
    }
  } catch (...) {
    b->error = std::current_exception();
  }
  cleaner.join();
  if (!b->error && cleaning_error) b->error = cleaning_error;
  std::lock_guard<std::mutex> lk(b->mu);
  b->done = true;
  b->cv.notify_all();
}

}  // namespace

namespace {
uint64_t minus_resumed(uint64_t all, uint64_t resumed) { return all > resumed ? all - resumed : 0; }
}  // namespace

void copy_side_file(const std::string& from, const std::string& to, const char* name) {
  if (::access((from + "/" + name).c_str(), F_OK) == 0) link_or_copy(from + "/" + name, to + "/" + name);
}

std::vector<std::string> segment_files(const SegmentRef& s, uint32_t splits) {
  const std::string t = tf_dir(s.indexer) + "/", f = file_dir(s.indexer) + "/";
  const uint32_t n = file_seg_of(s);
  if (s.in_journal()) return {kJournalFile};
  if (s.packed) return {pack_file(s)};
  std::vector<std::string> out{t + seg_data(n), f + seg_data(n)};
  for (uint32_t sp = 0; sp < splits; sp++) {
    out.push_back(t + seg_meta(n, sp));
    out.push_back(f + seg_meta(n, sp));
  }
  out.push_back(f + seg_paths(n));
  return out;
}

void fill_meta_bytes(const std::string& dir, Manifest& m) {
  for (SegmentRef& s : m.segments) {
    if (s.meta_bytes != kUnknownBytes) continue;
    const std::string home = m.home_dir(dir, s);
    const std::vector<std::string> files = segment_files(s, m.split_factor);
    uint64_t sum = 0;
    for (size_t i = 2; i < files.size(); i++) {
      struct stat st;
      if (::stat((home + "/" + files[i]).c_str(), &st) != 0) fail_io(errno, "stat", home + "/" + files[i]);
      sum += static_cast<uint64_t>(st.st_size);
    }
    s.meta_bytes = sum;
  }
}

std::vector<std::string> replaced_paths(const std::string& dir, const Manifest& old, const Manifest& m) {
  std::vector<std::string> out;
  absl::flat_hash_set<uint64_t> homes{m.generation}, journals;
  absl::flat_hash_set<std::tuple<uint64_t, uint32_t, uint32_t>> live;
  for (const SegmentRef& s : m.segments) {
    homes.insert(m.home_of(s));
    live.insert({m.home_of(s), s.indexer, file_seg_of(s)});
    if (s.in_journal()) journals.insert(m.home_of(s));
  }
  absl::flat_hash_set<uint64_t> whole;
  absl::flat_hash_set<std::string> journals_gone;
  for (const SegmentRef& s : old.segments) {
    const uint64_t h = old.home_of(s);
    if (!homes.contains(h)) {
      whole.insert(h);
    } else if (!live.contains({h, s.indexer, file_seg_of(s)})) {
      // A journal holds other packs too: it goes when none is live.
      if (s.in_journal()) {
        if (!journals.contains(h) && h != m.generation) journals_gone.insert(old.home_dir(dir, s) + "/" + kJournalFile);
        continue;
      }
      const std::string home = old.home_dir(dir, s);
      for (const std::string& f : segment_files(s, old.split_factor)) out.push_back(home + "/" + f);
    }
  }
  out.insert(out.end(), journals_gone.begin(), journals_gone.end());
  const std::string old_gen = old.gen_dir(dir);
  if (old.generation == m.generation) return out;
  if (!homes.contains(old.generation)) {
    whole.insert(old.generation);
  } else {
    // Its segments stay; its tombstones and lists are the new generation's
    // now, and its journal unless a live pack is in it.
    for (const std::string& name : list_dir(old_gen))
      if (name.rfind("tfidf_index_", 0) != 0 && name.rfind("file_index_", 0) != 0 &&
          (name != kJournalFile || !journals.contains(old.generation)))
        out.push_back(old_gen + "/" + name);
  }
  for (uint64_t h : whole) out.push_back(dir + "/g" + std::to_string(h));
  return out;
}

void drop_replaced(const std::string& dir, const Manifest& old, const Manifest& m) {
  for (const std::string& p : replaced_paths(dir, old, m)) remove_tree(p);
}

void record_dirs(scipis_build& b) {
  const CrawlRules& r = b.cfg.rules;
  if (r.follow_symlinks) return;
  b.dirs = std::make_unique<DirRecorder>();
  b.rules_id = crawl_rules_id(b.cfg.root, r.include, r.exclude, r.follow_symlinks);
  b.cfg.rules.record = b.dirs.get();
}

void write_dirs(scipis_build& b, const std::string& gen) {
  if (b.dirs) write_file_durable(gen + "/" + kDirsFile, b.dirs->encode(b.rules_id));
}

void sync_generation(const std::string& dir, const std::string& gen) {
  // The segments' names are entries of the index directories.
  for (const std::string& name : list_dir(gen)) {
    struct stat st;
    if (::lstat((gen + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) fsync_dir(gen + "/" + name);
  }
  fsync_dir(gen);
  fsync_dir(dir);
}

void publish_generation(const std::string& dir, const std::string& gen, Manifest& m, const Manifest& old) {
  fill_meta_bytes(dir, m);
  // Packs it keeps in the journal it replaces may lie in records written
  // without a sync (older journals were synced when it was published).
  if (std::any_of(m.segments.begin(), m.segments.end(),
                  [&](const SegmentRef& s) { return s.in_journal() && m.home_of(s) == old.generation; }))
    fsync_file(old.gen_dir(dir) + "/" + kJournalFile);
  sync_generation(dir, gen);
  // The generation's own files, and the segments it refers to elsewhere.
  m.index_bytes = tree_bytes(gen);
  for (const SegmentRef& s : m.segments)
    if (m.home_of(s) != m.generation) m.index_bytes += segment_bytes(s);
  std::string enc = m.encode();
  m.index_bytes += enc.size();
  enc = m.encode();
  replace_file_atomic(manifest_path(dir), enc);
  drop_replaced(dir, old, m);
}

namespace {

// A refresh of a few named files that needs little read (an append, most
// often) runs on the calling thread: handing it to the coordinator and
// back was about a tenth of its time. It does not block the caller for
// long: the catalog of those paths and a stat each, then (only when what
// they need read is small, Pipeline::walk_first) the rest. False when the
// coordinator is to go on from where it stopped.
bool refresh_on_caller(scipis_build& b) {
  if (!b.refresh || b.refresh->scope.empty() || !b.garbage.empty() || !b.pipeline->may_walk_first())
    return false;
  bool fits = false;
  try {
    refresh_prepare(&b);
    b.prepared = true;
    fits = b.pipeline->walk_first();
    if (fits) {
      b.pipeline->run(true);
      refresh_conclude(&b);
    }
  } catch (...) {
    b.error = std::current_exception();
  }
  if (!fits && !b.error) return false;
  std::lock_guard<std::mutex> lk(b.mu);
  b.done = true;
  b.cv.notify_all();
  return true;
}

}  // namespace

void launch_build(scipis_build& b) {
  b.started = std::chrono::steady_clock::now();
  b.started_ns = realtime_ns();
  if (refresh_on_caller(b)) return;
  try {
    b.coordinator = EngineThread([pb = &b] { coordinate(pb); });
  } catch (...) {
    remove_tree(b.cfg.gen_dir);
    throw;
  }
}

extern "C" scipis_build* scipis_build_start(const char* dir, const char* root,
                                            const scipis_options* opts,
                                            scipis_error* err) {
  return scipis_build_start_ex(dir, root, opts, 0, err);
}

extern "C" scipis_build* scipis_build_start_ex(const char* dir, const char* root,
                                               const scipis_options* opts, int flags,
                                               scipis_error* err) {
  scipis_build* result = nullptr;
  guarded(err, [&] {
    if (scipis_options_check(opts, err) != 0) throw Error(err->code, err->message);
    const std::string r = checked_root(root);

    auto b = std::make_unique<scipis_build>();
    b->dir = dir;
    mkdir_p(b->dir);
    // A damaged manifest is replaced by this build.
    std::optional<CurrentState> state = try_read_current(b->dir);
    std::optional<Manifest> current;
    if (state) current = std::move(state->m);
    configure(*b, r, *opts, flags);
    b->cfg.marks = (flags & SCIPIS_BUILD_RESUME) != 0;
    b->cfg.stop_after_marks = static_cast<uint32_t>(flags >> 8) & 0xffff;
    const Manifest* cur = current ? &*current : nullptr;
    const std::string fp = fingerprint(b->cfg);
    const std::string resumed = b->cfg.marks ? resumable_generation(b->dir, cur, fp) : "";
    b->garbage = list_garbage(b->dir, cur, resumed, true);
    b->next.generation =
        resumed.empty() ? next_generation(b->dir, cur) : std::strtoull(resumed.c_str() + 1, nullptr, 10);
    b->cfg.gen_dir = b->next.gen_dir(b->dir);
    if (!resumed.empty()) {
      auto st = std::make_shared<ResumeState>(
          plan_resume(b->cfg.gen_dir, static_cast<uint32_t>(b->cfg.opts.indexer_threads)));
      b->resumed_files = st->files;
      b->resumed_bytes = st->bytes;
      b->cfg.resume = std::move(st);
    } else if (b->cfg.marks) {
      mkdir_p(b->cfg.gen_dir);
      write_file_durable(b->cfg.gen_dir + "/" + kBuildFingerprintFile, fp, true);
    }
    b->next.split_factor = static_cast<uint32_t>(opts->split_factor);
    b->next.indexers = static_cast<uint32_t>(b->cfg.opts.indexer_threads);
    std::memcpy(b->next.delimiter, opts->delimiter, 256);
    mkdir_p(b->cfg.gen_dir);
    record_dirs(*b);
    b->pipeline = std::make_unique<Pipeline>(b->cfg);
    launch_build(*b);
    result = b.release();
  });
  return result;
}

extern "C" int scipis_build_wait(scipis_build* b, int timeout_ms) {
  std::unique_lock<std::mutex> lk(b->mu);
  b->cv.wait_for(lk, std::chrono::milliseconds(timeout_ms), [b] { return b->done; });
  return b->done ? 1 : 0;
}

extern "C" void scipis_build_cancel(scipis_build* b) {
  // Before finish nothing is committed: a cancel that comes after the
  // threads ended (a small build) still discards it.
  b->aborted = true;
  if (b->compact)
    b->compact->stop = true;
  else
    b->pipeline->stop();
}

// A compaction is not paused: a shutdown drops it whole.
extern "C" void scipis_build_pause(scipis_build* b) {
  if (b->compact)
    scipis_build_cancel(b);
  else
    b->pipeline->pause();
}

extern "C" void scipis_build_get_progress(scipis_build* b, scipis_build_progress* p) {
  if (b->compact) {
    *p = scipis_build_progress{};
    p->phase = SCIPIS_PHASE_FLUSHING;
    p->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - b->started).count();
    return;
  }
  const Pipeline& pl = *b->pipeline;
  // Done counters first: read before the found ones, they never exceed them.
  p->files_done = pl.totals().files.load();
  p->bytes_done = pl.totals().bytes.load();
  p->skipped = pl.totals().skipped.load();
  p->crawl_done = pl.found().done.load() ? 1 : 0;
  p->files_found = std::max(pl.found().files.load(), p->files_done);
  p->bytes_found = pl.found().count_bytes ? std::max(pl.found().bytes.load(), p->bytes_done) : 0;
  p->phase = pl.reading_done() ? SCIPIS_PHASE_FLUSHING
             : p->files_done || p->bytes_done ? SCIPIS_PHASE_INDEXING
                                              : SCIPIS_PHASE_CRAWLING;
  p->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - b->started).count();
  p->resumed_files = b->resumed_files;
  p->resumed_bytes = b->resumed_bytes;
}

extern "C" int scipis_build_finish(scipis_build* b, scipis_build_stats* stats,
                                   scipis_error* err) {
  std::unique_ptr<scipis_build> owned(b);
  int rc = guarded(err, [&] {
    b->coordinator.join();
    if (b->aborted && !b->error)
      b->error = std::make_exception_ptr(Error(SCIPIS_E_CANCELED, "indexing was cancelled"));
    // The unfinished generation is garbage now: removing thousands of
    // files here would hold up a cancel, so the next build removes it.
    if (b->error) std::rethrow_exception(b->error);
    if (b->refresh) return refresh_commit(b, stats);
    if (b->compact) return compact_commit(b, stats);
    std::optional<Manifest> old;
    if (std::optional<CurrentState> st = try_read_current(b->dir)) old = std::move(st->m);
    // Marks stay until the commit: a build stopped after its last flush
    // is resumed whole.
    if (b->cfg.marks) {
      remove_marks(b->cfg);
      b->next.index_bytes = tree_bytes(b->cfg.gen_dir);
    }
    fill_meta_bytes(b->dir, b->next);
    b->next.index_bytes += write_gen_paths(b->dir, b->cfg.gen_dir, b->next);
    write_file_durable(b->cfg.gen_dir + "/" + kTermsFile,
                       encode_terms(b->pipeline->term_registers()));
    write_dirs(*b, b->cfg.gen_dir);
    sync_generation(b->dir, b->cfg.gen_dir);
    std::string enc = b->next.encode();
    b->next.index_bytes += enc.size();
    enc = b->next.encode();
    replace_file_atomic(manifest_path(b->dir), enc);
    write_fresh_as_of(b->dir, b->started_ns);
    // The new generation is live; the old one is garbage now.
    if (old) drop_replaced(b->dir, *old, b->next);
    const Manifest& m = b->next;
    stats->files = m.files;
    stats->bytes = m.bytes;
    stats->tokens = m.total_tokens;
    stats->terms = m.terms;
    stats->segments = m.segments.size();
    stats->skipped = m.skipped;
    stats->index_bytes = m.index_bytes;
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                   b->started)
                         .count();
    stats->resumed_files = b->resumed_files;
    stats->resumed_bytes = b->resumed_bytes;
    stats->files_added = m.files;
    stats->files_changed = stats->files_deleted = stats->deleted_docs = 0;
    stats->files_appended = stats->chain_links = 0;
    stats->bytes_read = minus_resumed(m.bytes, b->resumed_bytes);
  });
  return rc;
}

extern "C" void scipis_build_abort(scipis_build* b) {
  b->aborted = true;
  scipis_build_cancel(b);
  scipis_error ignored;
  scipis_build_stats stats;
  while (!scipis_build_wait(b, 100)) {
  }
  scipis_build_finish(b, &stats, &ignored);
}

extern "C" int scipis_remove_dir(const char* dir, scipis_error* err) {
  return guarded(err, [&] { remove_tree(dir); });
}

extern "C" uint64_t scipis_build_memory_bound(const scipis_options* opts) {
  scipis_options o = *opts;
  resolve_threads(o);
  return Pipeline::memory_bound(o);
}

extern "C" uint64_t scipis_memory_held(void) { return mem::held(); }
extern "C" uint64_t scipis_memory_peak(void) { return mem::peak(); }
extern "C" void scipis_memory_reset_peak(void) { mem::reset_peak(); }
