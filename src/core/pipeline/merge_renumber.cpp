// A merge that renumbers beside refreshes: tombstoned documents' records
// dropped while a watcher's refreshes go on committing (a merge beside
// refreshes keeps every number, so only this drops them under churn).
// It merges the snapshot it started on into the stage, as a compaction
// does; its commit, under the lock, publishes that when nothing was
// committed meanwhile, and otherwise refreshes the whole tree on top of
// the merged generation (unpublished until then) and publishes the
// refresh's: what changed since the merge began is read again (appended
// logs from where the merged records end), and readers go from the
// refreshes' state to one at least as fresh.
#include <memory>
#include <string>

#include "index/chains.h"
#include "index/deletes.h"
#include "index/gen_paths.h"
#include "index/journal.h"
#include "pipeline/build.h"
#include "pipeline/compact.h"
#include "pipeline/dir_records.h"
#include "pipeline/refresh.h"
#include "query/collection.h"
#include "util/door.h"
#include "util/error.h"
#include "util/fileio.h"

using namespace scipis;

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
  scipis_build* r = refresh_on_merged(b->dir, cs.root, b->cfg.opts, std::move(base));
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
