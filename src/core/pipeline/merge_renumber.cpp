// A merge that renumbers beside refreshes: tombstoned documents' records
// dropped while a watcher's refreshes go on committing (a merge beside
// refreshes keeps every number, so only this drops them under churn).
// It merges the snapshot it started on into the stage, as a compaction
// does; its commit, under the lock, publishes that when nothing was
// committed meanwhile, and otherwise refreshes on top of the merged
// generation (unpublished until then) the paths those commits touched
// and publishes the refresh's: what changed since the merge began is
// read again (appended logs from where the merged records end), and
// readers go from the refreshes' state to one at least as fresh.
#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "index/chains.h"
#include "index/deletes.h"
#include "index/gen_paths.h"
#include "index/journal.h"
#include "index/segment_format.h"
#include "index/segment_reader.h"
#include "pipeline/build.h"
#include "pipeline/compact.h"
#include "pipeline/dir_records.h"
#include "pipeline/refresh.h"
#include "query/collection.h"
#include "util/door.h"
#include "util/error.h"
#include "util/fileio.h"

using namespace scipis;

namespace {

// A catch-up naming more paths than this refreshes the whole tree: its
// catalog then reads every block anyway.
constexpr size_t kCatchUpPaths = 1u << 16;

// The paths of the files refreshes committed meanwhile (now against the
// merge's snapshot) may have changed: those of the documents they added
// (numbered after the snapshot's own), of the snapshot's documents they
// tombstoned, and of the snapshot's racy ones (a refresh reads those
// again). Every other file is as the snapshot, and so the merged
// generation, holds it. Empty when too many: the whole tree.
std::vector<std::string> catch_up_paths(const std::string& dir, CurrentState now, CompactState& cs) {
  Collection& then = *cs.snapshot;
  Collection c(dir, std::move(now));
  if (c.indexer_count() != then.indexer_count()) return {};
  std::vector<uint64_t> counts;
  for (uint32_t i = 0; i < then.indexer_count(); i++) counts.push_back(then.indexer(i).docs());
  DeadSeqs racy(counts.size());
  std::string bytes;
  if (cs.state.read_list(kRacyFile, bytes)) racy = decode_deletes(then.gen_dir() + "/" + kRacyFile, bytes, counts);
  std::vector<std::vector<uint64_t>> want(counts.size());
  size_t total = 0;
  for (uint32_t i = 0; i < counts.size(); i++) {
    const uint64_t docs = c.indexer(i).docs();
    if (docs < counts[i]) return {};
    std::vector<uint64_t>& w = want[i];
    const auto& before = then.indexer(i).dead;
    const auto& after = c.indexer(i).dead;
    std::set_difference(after.begin(), std::lower_bound(after.begin(), after.end(), counts[i]), before.begin(),
                        before.end(), std::back_inserter(w));
    w.insert(w.end(), racy[i].begin(), racy[i].end());
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    total += w.size() + (docs - counts[i]);
    if (total > kCatchUpPaths) return {};
    for (uint64_t q = counts[i]; q < docs; q++) w.push_back(q);
  }
  std::vector<std::string> paths;
  DocInfo recs[kFileBlock];
  size_t ends[kFileBlock];
  std::string names;
  for (SegmentState& s : c.segments()) {
    if (s.ref.docs == 0) continue;
    const std::vector<uint64_t>& w = want[s.ref.indexer];
    size_t decoded = SIZE_MAX;
    for (auto it = std::lower_bound(w.begin(), w.end(), s.seq0); it != w.end() && *it < s.seq0 + s.ref.docs;
         ++it) {
      const uint64_t rec = *it - s.seq0;
      if (rec / kFileBlock != decoded) {
        decoded = rec / kFileBlock;
        names.clear();
        c.files(s).decode(decoded, recs, names, ends);
      }
      const size_t k = rec % kFileBlock, at = k ? ends[k - 1] : 0;
      paths.emplace_back(names, at, ends[k] - at);
    }
  }
  if (paths.empty()) return {};
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  return paths;
}

}  // namespace

void scipis::renumber_prepare(scipis_build* b) {
  CompactState& cs = *b->compact;
  stage_open(b);
  cs.plan = plan_compaction(*cs.snapshot, cs.current, cs);
  stage_inputs(b);
  // The segments it keeps must be the same files at its commit.
  const auto old_ix = by_indexer(cs.current);
  for (uint32_t i = 0; i < cs.current.indexers; i++) {
    const size_t keep = cs.plan[i] == SIZE_MAX ? old_ix[i].size() : cs.plan[i];
    for (size_t j = 0; j < keep; j++) {
      const SegmentRef& s = *old_ix[i][j];
      cs.input_ids[{i, s.seg}] =
          file_id(cs.current.home_dir(b->dir, s) + "/" + segment_files(s, cs.current.split_factor)[0]);
    }
  }
  // The generation holding the lists may be gone by the commit.
  for (const char* name : {kDeletesFile, kChainsFile, kRacyFile, kTermsFile, kDirsFile}) {
    if (cs.state.lists.contains(name)) continue;
    std::string bytes;
    cs.state.lists[name] = cs.state.read_list(name, bytes) ? std::make_shared<const std::string>(std::move(bytes))
                                                           : nullptr;
  }
}

void scipis::renumber_commit(scipis_build* b, scipis_build_stats* stats) {
  CompactState& cs = *b->compact;
  const CurrentState state = read_current(b->dir);
  Manifest now = state.m;
  const Manifest& then = cs.current;
  const uint32_t sf = then.split_factor;
  // What it keeps from before its plan is still there, in the same files
  // (refreshes only add after the segments it held).
  bool holds = cs.segments_merged > 0 && now.indexers == then.indexers && now.split_factor == sf;
  const auto old_ix = by_indexer(then), new_ix = by_indexer(now);
  for (uint32_t i = 0; holds && i < then.indexers; i++) {
    const size_t keep = cs.plan[i] == SIZE_MAX ? old_ix[i].size() : cs.plan[i];
    if (new_ix[i].size() < keep) holds = false;
    for (size_t j = 0; holds && j < keep; j++) {
      const SegmentRef& s = *new_ix[i][j];
      holds = same_segment(*old_ix[i][j], s) &&
              file_id(now.home_dir(b->dir, s) + "/" + segment_files(s, sf)[0]) == cs.input_ids.at({i, s.seg});
    }
  }
  if (!holds) {
    remove_tree(cs.stage);
    return compact_stats(*b, now, false, stats);
  }
  const bool moved = now.generation != then.generation || state.records != cs.state.records;
  Manifest m = b->next;
  m.generation = next_generation(b->dir, &now);
  const std::string gen = m.gen_dir(b->dir), out = b->cfg.gen_dir;
  mkdir_p(gen);
  for (SegmentRef& s : m.segments) {
    if (s.home != kOwnGeneration) continue;
    link_segment(out, gen, s, sf, s.seg);
    // Named where they are: a refresh on top refers to them there.
    s.home = m.generation;
    s.file_seg = s.seg;
  }
  if (!cs.dead.empty()) write_file_durable(gen + "/" + kDeletesFile, cs.dead);
  if (!cs.chains.empty()) write_file_durable(gen + "/" + kChainsFile, cs.chains);
  if (!cs.racy_list.empty()) write_file_durable(gen + "/" + kRacyFile, cs.racy_list);
  cs.state.carry_list(kTermsFile, gen);
  cs.state.carry_list(kDirsFile, gen);
  copy_side_file(then.gen_dir(b->dir), gen, kGenPathsFile);
  remove_tree(cs.stage);
  if (!moved) {
    publish_generation(b->dir, gen, m, now);
    return compact_stats(*b, m, true, stats);
  }
  fill_meta_bytes(b->dir, m);
  sync_generation(b->dir, gen);
  CurrentState base;
  base.m = m;
  base.dir = b->dir;
  base.gen_dir = gen;
  const std::vector<std::string> paths = catch_up_paths(b->dir, state, cs);
  scipis_build* r = refresh_on_merged(b->dir, cs.root, b->cfg.opts, std::move(base), paths);
  while (!scipis_build_wait(r, 100)) {
  }
  scipis_build_stats rs;
  scipis_error err;
  if (scipis_build_finish(r, &rs, &err) != 0) throw Error(err.code, err.message);
  compact_stats(*b, read_current(b->dir).m, true, stats);
}

extern "C" scipis_build* scipis_compact_garbage_start(const char* dir, const char* root,
                                                      const scipis_options* opts, scipis_error* err) {
  scipis_build* result = nullptr;
  guarded(err, [&] {
    if (scipis_options_check(opts, err) != 0) throw Error(err->code, err->message);
    auto b = compaction_of(dir, *opts);
    CompactState& cs = *b->compact;
    cs.renumber = true;
    cs.root = checked_root(root);
    renumber_prepare(b.get());
    mkdir_p(b->cfg.gen_dir);
    launch_build(*b);
    result = b.release();
  });
  return result;
}
