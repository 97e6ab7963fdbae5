// The refresh door: a build whose walk skips the files the index holds as
// they are, whose segments continue each indexer's, and whose commit links
// the old segments into the new generation beside its tombstones.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "index/chains.h"
#include "index/distinct_terms.h"
#include "index/segment_format.h"
#include "index/term_dict.h"
#include "pipeline/build.h"
#include "pipeline/compact.h"
#include "pipeline/journal_commit.h"
#include "pipeline/kept_docs.h"
#include "query/collection.h"
#include "util/door.h"
#include "util/error.h"
#include "util/fileio.h"

using namespace scipis;

namespace {

// Paths as given, made canonical ("//" and "." dropped, no trailing '/'),
// checked to lie under root, each one that another covers left out.
std::vector<std::string> refresh_scope(const std::string& root, const char* const* paths, int n) {
  std::vector<std::string> all;
  for (int i = 0; i < n; i++) {
    const std::string given = paths[i] ? paths[i] : "";
    if (given.empty() || given[0] != '/')
      fail(SCIPIS_E_INVALID, "path \"%s\" is not an absolute path", given.c_str());
    std::string p;
    size_t at = 0;
    while (at < given.size()) {
      size_t end = given.find('/', at);
      if (end == std::string::npos) end = given.size();
      const std::string_view part(given.data() + at, end - at);
      if (part == "..")
        fail(SCIPIS_E_INVALID, "path \"%s\" must not contain \"..\"", given.c_str());
      if (!part.empty() && part != ".") (p += '/') += part;
      at = end + 1;
    }
    if (p.empty()) p = "/";
    if (!path_in_scope(p, root))
      fail(SCIPIS_E_INVALID, "path \"%s\" is not under the collection's root \"%s\"",
           given.c_str(), root.c_str());
    all.push_back(std::move(p));
  }
  std::sort(all.begin(), all.end(), scope_less);
  std::vector<std::string> kept;
  for (auto& p : all)
    if (kept.empty() || !path_in_scope(p, kept.back())) kept.push_back(std::move(p));
  if (kept.size() == 1 && kept[0] == root) kept.clear();  // the whole tree
  return kept;
}

// Where the walk of each scope path starts: a directory walked whole, a
// file alone; nothing for a path that is gone, excluded, reached through
// a symlink the collection does not follow, or neither.
std::vector<DirWork> walk_starts(const std::string& root, const std::vector<std::string>& scope,
                                 const CrawlRules& rules) {
  std::vector<DirWork> starts;
  for (const std::string& p : scope) {
    if (p == root) {
      starts.push_back({root, "", true, ""});
      continue;
    }
    const std::string rel = p.substr(root == "/" ? 1 : root.size() + 1);
    bool ok = true;
    struct stat st;
    size_t at = 0;
    while (ok) {
      const size_t end = rel.find('/', at);
      const std::string sub = rel.substr(0, end);
      const std::string name = rel.substr(at, end == std::string::npos ? std::string::npos : end - at);
      const std::string full = (root == "/" ? "" : root) + "/" + sub;
      if (::lstat(full.c_str(), &st) != 0) ok = false;
      else if (S_ISLNK(st.st_mode) && (!rules.follow_symlinks || ::stat(full.c_str(), &st) != 0))
        ok = false;
      else if (end != std::string::npos && !S_ISDIR(st.st_mode))
        ok = false;
      else if (S_ISDIR(st.st_mode))
        for (const auto& g : rules.exclude) ok = ok && !glob_matches(g, sub, name);
      if (end == std::string::npos) break;
      at = end + 1;
    }
    if (!ok) continue;
    if (S_ISDIR(st.st_mode)) {
      starts.push_back({p, rel, false, ""});
    } else if (S_ISREG(st.st_mode)) {
      const size_t slash = p.rfind('/');
      const size_t rslash = rel.rfind('/');
      starts.push_back({slash == 0 ? "/" : p.substr(0, slash),
                        rslash == std::string::npos ? "" : rel.substr(0, rslash), false,
                        p.substr(slash + 1)});
    }
  }
  return starts;
}

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// Most refreshes read a few files: a table this small to start with
// (PipelineConfig::tfidf_start) spares them clearing a large one.
constexpr uint64_t kRefreshTableStart = 4u << 20;
// A refresh of named paths (a watcher's batch, a change log's) reads
// fewer still: clearing and ordering even 4 MiB was a tenth of its time.
constexpr uint64_t kScopedTableStart = 512u << 10;
// A batch of many named paths (a watcher's under heavy churn) starts with
// room for them, up to kRefreshTableStart: from the small table each
// indexer flushed a segment more, twice the segments such a refresh left
// for the merges (500 paths of a 1 GiB log tree).
constexpr uint64_t kScopedTablePerPath = 8u << 10;

// The TERMS registers of a few states, decoded: a watcher refreshes one
// collection again and again, and each read and checked the same 64 KiB.
// Keyed by where the state's TERMS lie: a journal record's list (its bytes)
// or the generation's file (named by the MANIFEST bytes the state was read
// from; a generation's files are written before it is published, never
// after).
struct KeptTerms {
  std::string dir;
  std::shared_ptr<const std::string> source;
  std::shared_ptr<const std::vector<uint8_t>> registers;  // empty: none sound
};
std::mutex kept_terms_mu;
std::vector<KeptTerms> kept_terms;  // newest last
constexpr size_t kKeptTerms = 8;

std::shared_ptr<const std::vector<uint8_t>> state_registers(const CurrentState& st) {
  auto it = st.lists.find(kTermsFile);
  const std::shared_ptr<const std::string> source = it != st.lists.end() ? it->second : st.manifest_file;
  if (source) {
    std::lock_guard<std::mutex> lk(kept_terms_mu);
    for (const KeptTerms& k : kept_terms)
      if (k.dir == st.dir && k.source == source) return k.registers;
  }
  std::string bytes;
  auto regs = std::make_shared<const std::vector<uint8_t>>(st.read_list(kTermsFile, bytes) ? decode_terms(bytes)
                                                                                          : std::vector<uint8_t>());
  if (source) {
    std::lock_guard<std::mutex> lk(kept_terms_mu);
    std::erase_if(kept_terms, [&](const KeptTerms& k) { return k.dir == st.dir; });
    if (kept_terms.size() >= kKeptTerms) kept_terms.erase(kept_terms.begin());
    kept_terms.push_back({st.dir, source, regs});
  }
  return regs;
}

}  // namespace

void refresh_prepare(scipis_build* b) {
  RefreshState& r = *b->refresh;
  // The state the refresh started from, not read again.
  r.collection = std::make_unique<Collection>(b->dir, r.state);
  Collection& c = *r.collection;
  r.racy.assign(r.current.indexers, {});
  std::string racy;
  if (c.read_list(kRacyFile, racy)) {
    std::vector<uint64_t> docs;
    for (uint32_t i = 0; i < r.current.indexers; i++) docs.push_back(c.indexer(i).docs());
    r.racy = decode_deletes(c.gen_dir() + "/" + kRacyFile, racy, docs);
  }
  r.catalog.load(c, r.scope, b->pipeline->stop_flag(), r.racy);
  r.dead.assign(r.current.indexers, {});
  // Taken, not copied (it may hold hundreds of thousands): the refresh's
  // collection answers is_dead from its bitmap, which stays.
  for (uint32_t i = 0; i < r.current.indexers; i++) r.dead[i] = std::move(c.indexer(i).dead);
  r.links = c.chain_links();
  // A merge beside refreshes holds the segments there were when it
  // started: taken in, they would be gone at its commit, and its work
  // dropped. Those refreshes added since are taken in as ever (else they
  // piled up while a long merge ran).
  const auto held = merge_stage_held(b->dir + "/" + kMergeStage);
  for (uint32_t i = 0; i < r.current.indexers; i++) {
    IndexerState& ix = c.indexer(i);
    size_t from = take_in_from(r.current, i);
    if (held) {
      if (i >= held->size()) continue;
      from = std::max(from, (*held)[i]);
      if (from < ix.segs.size() && first_uncut(r.current, i, from) != from) continue;
    }
    if (from + kTakeInRun > ix.segs.size()) continue;
    std::vector<SegmentState*> run;
    uint64_t table = 0;
    for (size_t j = from; j < ix.segs.size(); j++) {
      run.push_back(ix.segs[j]);
      r.resume->indexers[i].absorb.push_back(ix.segs[j]->ref);
      const auto kept = kept_docs(b->dir, r.current, ix.segs[j]->ref);
      table = kept && table != UINT64_MAX ? table + kept->table_bytes() : UINT64_MAX;
    }
    if (table != UINT64_MAX) r.resume->indexers[i].absorb_table = table;
    r.resume->indexers[i].absorb_docs = [b, &r, run, i] {
      std::lock_guard<std::mutex> lk(r.absorb_mu);
      std::vector<std::shared_ptr<const AbsorbDocs>> docs;
      for (SegmentState* s : run) {
        std::shared_ptr<const AbsorbDocs> d = kept_docs(b->dir, r.current, s->ref);
        docs.push_back(d ? d : segment_documents(*r.collection, *s));
      }
      r.absorbed_docs[i] = docs;
      return docs;
    };
  }
  r.absorbed_docs.assign(r.current.indexers, {});
}

void refresh_conclude(scipis_build* b) {
  RefreshState& r = *b->refresh;
  // The new segments' racy documents are listed, each judged by when it
  // was read (pipeline/racy.h), not by the run's start: under churn a
  // tenth of the files a refresh read had changed since it began, and the
  // next refresh read each again whole.
  for (const DocId& d : b->pipeline->racy_docs()) r.racy.at(d.indexer).push_back(d.seq);
  // Racy documents of a segment taken in stay racy in the new segment.
  for (uint32_t i = 0; i < r.racy.size(); i++) {
    auto& racy = r.racy[i];
    for (size_t k = 0; i < r.absorbed_docs.size() && k < r.absorbed_docs[i].size(); k++) {
      const AbsorbDocs& a = *r.absorbed_docs[i][k];
      a.each([&](const std::vector<std::string>&, const AbsorbDocs::Doc& d) {
        if (a.ref.run_started_ns != INT64_MIN && d.info.ctime_ns >= a.ref.run_started_ns - kRacyNs)
          racy.push_back(d.info.seq);
      });
    }
    std::sort(racy.begin(), racy.end());
    racy.erase(std::unique(racy.begin(), racy.end()), racy.end());
  }
  r.absorbed_docs.clear();
  r.collection.reset();
  const Manifest& cur = r.current;
  Manifest& m = b->next;
  uint64_t files = cur.files, bytes = cur.bytes, tokens = cur.total_tokens,
           with_tokens = cur.docs_with_tokens;
  absl::flat_hash_set<DocId> gone_roots;
  r.catalog.for_each_gone([&](const KnownFile& k) {
    r.catalog.for_each_member(k, [&](const DocId& d) {
      r.dead[d.indexer].push_back(d.seq);
      r.new_dead++;
    });
    if (k.chain >= 0) gone_roots.insert(k.root);
    r.files_gone++;
    files = minus(files, 1);
    bytes = minus(bytes, k.size);
    tokens = minus(tokens, k.tokens);
    if (k.tokens) with_tokens = minus(with_tokens, 1);
  });
  r.files_deleted = minus(r.files_gone, r.catalog.changed());
  // Chains of files gone are dropped whole; each new link joins its
  // chain's end (a file is read once per refresh), or starts one.
  std::vector<ChainLink> kept;
  for (ChainLink& l : r.links)
    if (!gone_roots.contains(l.root)) kept.push_back(std::move(l));
  std::vector<ChainLink> fresh = b->pipeline->links();
  absl::flat_hash_map<DocId, size_t> fresh_of;
  for (size_t i = 0; i < fresh.size(); i++) fresh_of[fresh[i].root] = i;
  r.links.clear();
  for (size_t i = 0; i < kept.size(); i++) {
    r.links.push_back(std::move(kept[i]));
    const bool chain_ends = i + 1 == kept.size() || !(kept[i + 1].root == r.links.back().root);
    auto it = chain_ends ? fresh_of.find(r.links.back().root) : fresh_of.end();
    if (it != fresh_of.end()) {
      r.links.push_back(std::move(fresh[it->second]));
      fresh_of.erase(it);
    }
  }
  for (size_t i = 0; i < fresh.size(); i++)
    if (fresh_of.contains(fresh[i].root)) r.links.push_back(std::move(fresh[i]));
  // Each list was in order before this refresh's tombstones were added:
  // those are put in order and merged in (the whole list may hold
  // hundreds of thousands).
  for (auto& d : r.dead) {
    const auto tail = std::is_sorted_until(d.begin(), d.end());
    std::sort(tail, d.end());
    std::inplace_merge(d.begin(), tail, d.end());
  }
  const auto& t = b->pipeline->totals();
  m.files = files + t.files;
  m.bytes = bytes + t.bytes;
  m.total_tokens = tokens + t.tokens;
  m.docs_with_tokens = with_tokens + t.docs_with_tokens;
  m.skipped = r.scope.empty() ? t.skipped.load() : std::max(cur.skipped, t.skipped.load());
  // The indexers start from the old registers (the first) and zeros: if
  // no register moved, their merge is the old registers.
  if (r.old_registers && !b->pipeline->terms_moved()) {
    r.registers = r.old_registers;
    r.registers_unmoved = true;
  } else {
    r.registers = std::make_shared<const std::vector<uint8_t>>(b->pipeline->term_registers());
    r.registers_unmoved = r.old_registers && *r.registers == *r.old_registers;
  }
  // Registers no new term moved estimate what they did (the estimate's
  // pass over them was a tenth of a refresh that found nothing to do).
  m.terms = r.registers_unmoved ? cur.terms : DistinctTerms::estimate(*r.registers);
  // Segments the indexers took in are in their new ones.
  const std::vector<SegmentRef> taken = b->pipeline->absorbed();
  m.segments.clear();
  for (const SegmentRef& s : cur.segments)
    if (std::none_of(taken.begin(), taken.end(),
                     [&](const SegmentRef& t) { return t.indexer == s.indexer && t.seg == s.seg; }))
      m.segments.push_back(s);
  // Their racy documents are listed (above): no run start to judge by.
  for (const SegmentRef& s : b->pipeline->segments()) m.segments.push_back(s);
  std::sort(m.segments.begin(), m.segments.end(), [](const auto& x, const auto& y) {
    return x.indexer != y.indexer ? x.indexer < y.indexer : x.seg < y.seg;
  });
  m.deleted = count_dead(r.dead);
  m.chain_links = r.links.size();
}

namespace {

// The lists a refresh's commit writes, encoded once for either kind of
// commit; empty: the generation has none (or, TERMS and DIRS, keeps its own).
struct RefreshLists {
  std::string dead, chains, racy, terms, dirs;
  explicit RefreshLists(scipis_build* b) {
    const RefreshState& r = *b->refresh;
    if (b->next.deleted > 0) dead = encode_deletes(r.dead);
    if (b->next.chain_links > 0) chains = encode_chains(r.links);
    if (count_dead(r.racy) > 0) racy = encode_deletes(r.racy);
    if (!r.registers_unmoved) terms = encode_terms(*r.registers);
    if (b->dirs) dirs = b->dirs->encode(b->rules_id);
  }
};

// A small change goes into the journal of the generation it changed
// (index/journal.h): one record, one file synced (or, deferred, none).
// False when it is too
// large for one (or the journal is full): a new generation then.
bool commit_to_journal(scipis_build* b, const RefreshLists& l) {
  RefreshState& r = *b->refresh;
  const auto& packs = b->pipeline->deferred_packs();
  if (r.on_merged || packs.size() != b->pipeline->segments().size()) return false;
  std::vector<JournalPart> lists{{JournalKind::kList, kDeletesFile, !l.dead.empty(), l.dead},
                                 {JournalKind::kList, kChainsFile, !l.chains.empty(), l.chains},
                                 {JournalKind::kList, kRacyFile, !l.racy.empty(), l.racy}};
  if (!r.registers_unmoved) lists.push_back({JournalKind::kList, kTermsFile, true, l.terms});
  if (b->dirs) lists.push_back({JournalKind::kList, kDirsFile, true, l.dirs});
  uint64_t taken = 0;
  for (const SegmentRef& s : b->pipeline->absorbed()) taken += segment_bytes(s);
  if (!commit_into_journal(r.state, b->next, packs, lists, taken, r.defer_sync)) return false;
  for (const auto& docs : b->pipeline->kept_docs()) keep_docs(b->dir, b->next, docs);
  // What the indexers took in is in the new segments now.
  drop_replaced(b->dir, r.current, b->next);
  return true;
}

void commit_generation(scipis_build* b, const RefreshLists& l) {
  RefreshState& r = *b->refresh;
  Manifest& m = b->next;
  const std::string& gen = b->cfg.gen_dir;
  mkdir_p(gen);
  for (const auto& p : b->pipeline->deferred_packs()) write_file_durable(p.path, p.bytes);
  if (!l.dead.empty()) write_file_durable(gen + "/" + kDeletesFile, l.dead);
  if (!l.chains.empty()) write_file_durable(gen + "/" + kChainsFile, l.chains);
  if (!l.racy.empty()) write_file_durable(gen + "/" + kRacyFile, l.racy);
  // Few new terms move a register: the list is then carried, not written.
  if (r.registers_unmoved) r.state.carry_list(kTermsFile, gen);
  else write_file_durable(gen + "/" + kTermsFile, l.terms);
  // A walk of part of the tree keeps the records: a directory changed
  // since shows a newer mtime.
  if (b->dirs) write_file_durable(gen + "/" + kDirsFile, l.dirs);
  else r.state.carry_list(kDirsFile, gen);
  // The segments it covers are still there; the new ones have their own.
  copy_side_file(r.current_gen, gen, kGenPathsFile);
  publish_generation(b->dir, gen, m, r.current);
}

}  // namespace

void refresh_commit(scipis_build* b, scipis_build_stats* stats) {
  RefreshState& r = *b->refresh;
  Manifest& m = b->next;
  const bool changed = r.on_merged || r.new_dead > 0 || m.segments.size() > r.current.segments.size() ||
                       !b->pipeline->absorbed().empty();
  if (changed) {
    // Racy documents not read again yet stay racy.
    for (uint32_t i = 0; i < m.indexers; i++) {
      auto& v = r.racy[i];
      v.erase(std::remove_if(v.begin(), v.end(),
                             [&](uint64_t q) {
                               return std::binary_search(r.dead[i].begin(), r.dead[i].end(), q);
                             }),
              v.end());
    }
    const RefreshLists lists(b);
    if (!commit_to_journal(b, lists)) commit_generation(b, lists);
  } else {
    remove_tree(b->cfg.gen_dir);
    // The index stays as it was: only what the walk saw is new. Records the
    // journal holds stay as they are (older records only list more).
    if (b->dirs && !r.state.lists.contains(kDirsFile))
      replace_file_atomic(r.current_gen + "/" + kDirsFile, b->dirs->encode(b->rules_id));
  }
  if (r.scope.empty() && !r.keep_fresh) write_fresh_as_of(b->dir, b->started_ns);
  const Manifest& now = changed ? m : r.current;
  const auto& t = b->pipeline->totals();
  stats->files = now.files;
  stats->bytes = now.bytes;
  stats->tokens = now.total_tokens;
  stats->terms = changed ? now.terms : r.current.terms;
  stats->segments = now.segments.size();
  stats->skipped = t.skipped;
  stats->index_bytes = now.index_bytes;
  stats->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - b->started).count();
  stats->files_added = r.catalog.added();
  stats->files_changed = r.catalog.changed();
  stats->files_deleted = r.files_deleted;
  stats->files_appended = r.catalog.appended();
  stats->bytes_read = t.bytes_read;
  stats->deleted_docs = now.deleted;
  stats->chain_links = now.chain_links;
  stats->dirs_skipped = r.catalog.dirs_kept();
  stats->files_checked = r.catalog.files_checked();
}

// A refresh of state's generation (or of base's, on_merged), started.
static std::unique_ptr<scipis_build> start_refresh(const std::string& d, const std::string& r,
                                                   const scipis_options& o, int flags,
                                                   const std::vector<std::string>& scope, CurrentState state,
                                                   bool on_merged) {
  const Manifest* current = &state.m;
  const scipis_options* opts = &o;
  auto b = std::make_unique<scipis_build>();
  b->dir = d;
  configure(*b, r, *opts, flags);
  // New segments continue the indexers' own.
  b->cfg.opts.indexer_threads = static_cast<int>(current->indexers);
  // A few named paths are walked and read by as few threads: starting
  // the rest cost more than their work.
  if (!scope.empty())
    b->cfg.opts.reader_threads =
        std::max(1, std::min(b->cfg.opts.reader_threads, static_cast<int>(scope.size())));
  if (on_merged) b->next.generation = next_generation(d, current);
  else b->garbage = list_garbage(d, current, "", false, &b->next.generation);
  b->next.split_factor = current->split_factor;
  b->next.indexers = current->indexers;
  std::memcpy(b->next.delimiter, current->delimiter, 256);
  b->cfg.gen_dir = b->next.gen_dir(d);

  auto resume = std::make_shared<ResumeState>();
  resume->indexers.resize(current->indexers);
  for (const SegmentRef& s : current->segments) resume->indexers[s.indexer].next_seq += s.docs;
  const std::vector<uint32_t> free_segs = state.first_free_segments();
  for (uint32_t i = 0; i < current->indexers; i++) resume->indexers[i].segs = free_segs[i];
  b->refresh = std::make_unique<RefreshState>();
  RefreshState& rs = *b->refresh;
  rs.on_merged = on_merged;
  rs.resume = resume;
  const auto registers = state_registers(state);
  resume->indexers[0].sketch = registers;
  if (registers->size() == DistinctTerms::kRegisters) rs.old_registers = registers;
  b->cfg.resume = std::move(resume);

  rs.current = *current;
  rs.current_gen = current->gen_dir(d);
  rs.state = std::move(state);
  rs.defer_sync = (flags & SCIPIS_REFRESH_DEFER_SYNC) != 0;
  rs.keep_fresh = (flags & SCIPIS_REFRESH_KEEP_FRESH) != 0;
  rs.scope = scope;
  b->cfg.rules.known = &rs.catalog;
  b->cfg.tfidf_start = scope.empty() ? kRefreshTableStart
                                     : std::clamp<uint64_t>(scope.size() * kScopedTablePerPath,
                                                            kScopedTableStart, kRefreshTableStart);
  b->cfg.pack_segments = true;
  if (!scope.empty()) {
    b->cfg.starts = std::make_shared<const std::vector<DirWork>>(walk_starts(r, scope, b->cfg.rules));
  } else {
    record_dirs(*b);
    std::string dirs;
    if (b->dirs && (flags & SCIPIS_REFRESH_SKIP_DIRS) && rs.state.read_list(kDirsFile, dirs) &&
        rs.dirs.load_bytes(rs.current_gen + "/" + kDirsFile, dirs, b->rules_id)) {
      b->cfg.rules.dirs = &rs.dirs;
      rs.catalog.by_dir = true;
    }
  }
  // Small packs wait for the commit: most go to the journal, with no
  // generation directory made at all.
  b->cfg.defer_packs = true;
  b->pipeline = std::make_unique<Pipeline>(b->cfg);
  launch_build(*b);
  return b;
}

extern "C" scipis_build* scipis_refresh_start(const char* dir, const char* root,
                                              const scipis_options* opts, const char* const* paths,
                                              int n_paths, int flags, scipis_error* err) {
  scipis_build* result = nullptr;
  guarded(err, [&] {
    if (scipis_options_check(opts, err) != 0) throw Error(err->code, err->message);
    const std::string r = checked_root(root);
    const std::string d = dir;
    // A damaged manifest: the build below replaces it.
    std::optional<CurrentState> state = try_read_current(d);
    const Manifest* current = state ? &state->m : nullptr;
    const std::vector<std::string> scope = refresh_scope(r, paths, n_paths);
    // Nothing to refresh, or an index a refresh cannot extend (another
    // tokenizer or split factor): a full build.
    if (!current || current->split_factor != static_cast<uint32_t>(opts->split_factor) ||
        std::memcmp(current->delimiter, opts->delimiter, 256) != 0) {
      result = scipis_build_start_ex(dir, root, opts, flags & SCIPIS_BUILD_COUNT_BYTES, err);
      if (!result) throw Error(err->code, err->message);
      return;
    }
    result = start_refresh(d, r, *opts, flags, scope, std::move(*state), false).release();
  });
  return result;
}

scipis_build* refresh_on_merged(const std::string& dir, const std::string& root, const scipis_options& opts,
                                CurrentState base, const std::vector<std::string>& paths) {
  const std::string r = checked_root(root.c_str());
  std::vector<const char*> given;
  for (const std::string& p : paths) given.push_back(p.c_str());
  const std::vector<std::string> scope = refresh_scope(r, given.data(), static_cast<int>(given.size()));
  return start_refresh(dir, r, opts, 0, scope, std::move(base), true).release();
}

extern "C" int scipis_fresh_as_of(const char* dir, int64_t* ns) {
  try {
    return read_fresh_as_of(dir, *ns) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

extern "C" int scipis_mark_fresh(const char* dir, int64_t ns, scipis_error* err) {
  return guarded(err, [&] {
    int64_t now = 0;
    if (!read_fresh_as_of(dir, now) || ns > now) write_fresh_as_of(dir, ns);
  });
}
