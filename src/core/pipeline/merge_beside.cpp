// Merges beside refreshes: a watcher's tiers merged while its refreshes
// go on committing. Every document keeps its number, so the tombstones
// and racy lists the refreshes wrote meanwhile stay true; the commit
// swaps the merged segments in (renaming the segments after them, so that
// segment numbers keep the documents' order) and applies the merge's
// chain folds to the chains the refreshes left.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/container/flat_hash_map.h"

#include "index/chains.h"
#include "index/deletes.h"
#include "index/segment_format.h"
#include "pipeline/build.h"
#include "pipeline/compact.h"
#include "pipeline/refresh.h"
#include "query/collection.h"
#include "util/error.h"
#include "util/fileio.h"

using namespace scipis;

bool scipis::same_segment(const SegmentRef& a, const SegmentRef& b) {
  return a.indexer == b.indexer && a.seg == b.seg && a.first_seq == b.first_seq && a.docs == b.docs &&
         a.tf_data_bytes == b.tf_data_bytes && a.file_data_bytes == b.file_data_bytes &&
         a.home == b.home && file_seg_of(a) == file_seg_of(b) && a.journal_off == b.journal_off;
}

std::vector<std::vector<const SegmentRef*>> scipis::by_indexer(const Manifest& m) {
  std::vector<std::vector<const SegmentRef*>> out(m.indexers);
  for (const SegmentRef& s : m.segments) out[s.indexer].push_back(&s);
  return out;
}

// The tf data file's identity: refreshes refer to an unchanged segment
// where it is, a rebuild or a full compaction writes new ones.
std::pair<uint64_t, uint64_t> scipis::file_id(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {0, 0};
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

namespace {

// The merge's folds applied to the chains refreshes left meanwhile (links
// only ever follow a chain's last member, or the chain goes with every
// member tombstoned when its file changed or went): each folded member is
// tombstoned and its link dropped, the folded link keeps the retraction
// the merge gave it, and a chain folded from its root is rooted at its
// folded member. False when the chains are not as the merge saw them.
bool apply_folds(const std::vector<CompactState::BesideFold>& folds, std::vector<ChainLink>& links, DeadSeqs& dead) {
  for (auto& d : dead) std::sort(d.begin(), d.end());
  auto is_dead = [&](const DocId& d) {
    return d.indexer < dead.size() && std::binary_search(dead[d.indexer].begin(), dead[d.indexer].end(), d.seq);
  };
  absl::flat_hash_map<DocId, size_t> fold_of;  // by root
  for (size_t k = 0; k < folds.size(); k++) fold_of[folds[k].members.front()] = k;
  std::vector<size_t> seen(folds.size(), 0);
  std::vector<ChainLink> kept;
  kept.reserve(links.size());
  for (ChainLink& l : links) {
    const auto it = fold_of.find(l.root);
    if (it == fold_of.end()) {
      kept.push_back(std::move(l));
      continue;
    }
    const auto& f = folds[it->second];
    const size_t n = f.members.size(), at = ++seen[it->second];  // l.ext is member `at`
    if (at < n && !(l.ext == f.members[at])) return false;
    if (at + 1 < n && at >= f.from) continue;
    if (at + 1 == n) {
      if (f.from == 0) continue;
      l.retract = f.kept_retract;
    }
    if (f.from == 0) l.root = f.members.back();
    kept.push_back(std::move(l));
  }
  DeadSeqs folded(dead.size());
  for (size_t k = 0; k < folds.size(); k++) {
    const auto& f = folds[k];
    const bool present = seen[k] > 0;
    if (present && seen[k] + 1 < f.members.size()) return false;
    if (!present && !is_dead(f.members.back())) return false;
    for (size_t m = f.from; m + 1 < f.members.size(); m++) {
      const DocId& d = f.members[m];
      if (!present && !is_dead(d)) return false;
      if (present) folded.at(d.indexer).push_back(d.seq);
    }
  }
  for (size_t i = 0; i < dead.size(); i++) {
    auto& d = dead[i];
    d.insert(d.end(), folded[i].begin(), folded[i].end());
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
  }
  links = std::move(kept);
  return true;
}

}  // namespace

bool scipis::merge_stage_busy(const std::string& stage) { return merge_stage_held(stage).has_value(); }

std::optional<std::vector<size_t>> scipis::merge_stage_held(const std::string& stage) {
  const int fd = ::open((stage + "/LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  char text[256];
  const ssize_t n = busy ? ::pread(fd, text, sizeof text - 1, 0) : 0;
  ::close(fd);
  if (!busy) return std::nullopt;
  // "held N0 N1 ...\n", written once the merge knows its plan: anything
  // else (not written yet, cut short) holds every segment.
  std::vector<size_t> held;
  if (n <= 5 || text[n - 1] != '\n' || std::memcmp(text, "held", 4) != 0) return held;
  text[n] = '\0';
  for (const char* p = text + 4; *p != '\n';) {
    char* end;
    errno = 0;
    const unsigned long long v = std::strtoull(p, &end, 10);
    if (end == p || errno != 0 || (*end != ' ' && *end != '\n')) return std::vector<size_t>();
    held.push_back(static_cast<size_t>(v));
    p = end;
  }
  return held;
}

CompactState::~CompactState() {
  if (lock_fd >= 0) ::close(lock_fd);
}

void scipis::stage_open(scipis_build* b) {
  CompactState& cs = *b->compact;
  cs.stage = b->dir + "/" + kMergeStage;
  if (merge_stage_busy(cs.stage))
    fail(SCIPIS_E_INVALID, "a merge of the collection in \"%s\" is already running", b->dir.c_str());
  remove_tree(cs.stage);
  mkdir_p(cs.stage);
  cs.lock_fd = ::open((cs.stage + "/LOCK").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (cs.lock_fd < 0) fail_io(errno, "open", cs.stage + "/LOCK");
  if (::flock(cs.lock_fd, LOCK_EX | LOCK_NB) != 0)
    fail(SCIPIS_E_INVALID, "a merge of the collection in \"%s\" is already running", b->dir.c_str());
  b->cfg.gen_dir = cs.stage + "/out";
  // Refreshes meanwhile may take in the segments they add, not these.
  std::vector<size_t> held(cs.current.indexers, 0);
  for (const SegmentRef& s : cs.current.segments) held[s.indexer]++;
  std::string text = "held";
  for (size_t h : held) text += " " + std::to_string(h);
  text += "\n";
  if (::pwrite(cs.lock_fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    fail_io(errno, "write", cs.stage + "/LOCK");
  cs.snapshot = std::make_unique<Collection>(b->dir, cs.state);
  Collection& c = *cs.snapshot;
  if (c.manifest().generation != cs.current.generation || c.journal_records() != cs.state.records)
    fail(SCIPIS_E_IO, "collection index in \"%s\" changed while a compaction started", b->dir.c_str());
}

void scipis::stage_inputs(scipis_build* b) {
  CompactState& cs = *b->compact;
  Collection& c = *cs.snapshot;
  // Everything the merge reads, opened now: mapped files outlive the
  // generation directory a refresh removes.
  for (uint32_t i = 0; i < cs.current.indexers; i++) {
    if (cs.plan[i] == SIZE_MAX) continue;
    IndexerState& ix = c.indexer(i);
    for (size_t j = cs.plan[i]; j < ix.segs.size(); j++) {
      SegmentState& s = *ix.segs[j];
      for (uint32_t sp = 0; sp < cs.current.split_factor; sp++) c.tf_meta(s, sp);
      c.files(s);
      if (!cs.renumber && !cs.settle) c.read_tf_data(s, cs.tf_data[{i, s.ref.seg}]);
      else if (!s.ref.packed) cs.tf_maps[{i, s.ref.seg}] = MappedFile::open(c.tf_data_name(s), s.ref.tf_data_bytes);
      cs.input_ids[{i, s.ref.seg}] = file_id(c.tf_data_file(s));
    }
  }
}

namespace {

// A build's segments that merge in step (pipeline/compact.cpp: every
// document kept as it is, the terms within the in-step bound): indexers
// with a tombstoned or chained document among them are left be, and a run
// of too many terms loses its oldest segments.
std::vector<size_t> settle_plan(CompactState& cs, uint64_t table_bytes) {
  Collection& c = *cs.snapshot;
  std::vector<size_t> from = plan_settle(cs.current, kInStepTableShare * table_bytes);
  for (uint32_t i = 0; i < cs.current.indexers; i++) {
    if (from[i] == SIZE_MAX) continue;
    const IndexerState& ix = c.indexer(i);
    const uint64_t first = ix.first[from[i]];
    auto after = [first](const std::vector<uint64_t>& seqs) {
      return !seqs.empty() && seqs.back() >= first;
    };
    if (after(ix.dead) || after(ix.chained)) {
      from[i] = SIZE_MAX;
      continue;
    }
    std::vector<uint64_t> terms(ix.segs.size(), 0);
    uint64_t total = 0;
    for (size_t j = from[i]; j < ix.segs.size(); j++) {
      for (uint32_t sp = 0; sp < cs.current.split_factor; sp++) terms[j] += c.tf_meta(*ix.segs[j], sp).size();
      total += terms[j];
    }
    size_t k = from[i];
    while (k < ix.segs.size() && (!in_step_fits(total, table_bytes) || first_uncut(cs.current, i, k) != k))
      total -= terms[k++];
    from[i] = ix.segs.size() - k >= 2 ? k : SIZE_MAX;
  }
  return from;
}

}  // namespace

void scipis::beside_prepare(scipis_build* b) {
  CompactState& cs = *b->compact;
  stage_open(b);
  // Full flushes too: a merge that holds up nothing may rewrite a big
  // segment for the small ones after it, once they are half its size
  // (each byte about log2 of the growth times).
  cs.plan = cs.settle ? settle_plan(cs, static_cast<uint64_t>(b->cfg.opts.tfidf_index_size))
                      : plan_merges(cs.current, false, cs.max_bytes, false, kBesideTierRatio);
  if (cs.current.segments.size() > kBesideBacklog) cs.nice = 0;
  stage_inputs(b);
}

void scipis::beside_commit(scipis_build* b, scipis_build_stats* stats) {
  CompactState& cs = *b->compact;
  const CurrentState state = read_current(b->dir);
  Manifest now = state.m;
  const std::string now_gen = now.gen_dir(b->dir);
  fill_meta_bytes(b->dir, now);
  const Manifest& then = cs.current;
  const auto old_ix = by_indexer(then), new_ix = by_indexer(now);
  // Refreshes only add segments after an indexer's last: the merged ones
  // must still be there, as they were.
  bool holds = cs.segments_merged > 0 && now.indexers == then.indexers &&
               now.split_factor == then.split_factor;
  for (uint32_t i = 0; holds && i < then.indexers; i++) {
    if (new_ix[i].size() < old_ix[i].size()) holds = false;
    for (size_t j = 0; holds && j < old_ix[i].size(); j++) holds = same_segment(*old_ix[i][j], *new_ix[i][j]);
    // The very files it read, not others of the same sizes.
    for (size_t j = cs.plan[i]; holds && cs.plan[i] != SIZE_MAX && j < old_ix[i].size(); j++) {
      const SegmentRef& s = *new_ix[i][j];
      holds = file_id(now.home_dir(b->dir, s) + "/" + segment_files(s, now.split_factor)[0]) ==
              cs.input_ids.at({i, s.seg});
    }
  }
  std::vector<uint64_t> docs(now.indexers, 0);
  for (const SegmentRef& s : now.segments) docs[s.indexer] += s.docs;
  std::string bytes;
  DeadSeqs dead(now.indexers);
  std::vector<ChainLink> links;
  if (holds && state.read_list(kDeletesFile, bytes)) dead = decode_deletes(now_gen + "/" + kDeletesFile, bytes, docs);
  if (holds && !cs.folds.empty() && state.read_list(kChainsFile, bytes))
    links = decode_chains(now_gen + "/" + kChainsFile, bytes, docs);
  if (holds && !cs.folds.empty()) holds = apply_folds(cs.folds, links, dead);

  if (!holds) {
    remove_tree(cs.stage);
    return compact_stats(*b, now, false, stats);
  }
  Manifest m = now;
  m.generation = next_generation(b->dir, &now);
  m.segments.clear();
  const std::string gen = m.gen_dir(b->dir), out = b->cfg.gen_dir;
  mkdir_p(gen);
  auto written = by_indexer(then);
  for (auto& w : written) w.clear();
  for (const SegmentRef& s : cs.written) written[s.indexer].push_back(&s);
  for (uint32_t i = 0; i < now.indexers; i++) {
    const size_t from = cs.plan[i] == SIZE_MAX ? old_ix[i].size() : cs.plan[i];
    uint32_t next_seg = 0;
    for (const SegmentRef* s : new_ix[i]) next_seg = std::max(next_seg, s->seg + 1);
    for (const SegmentRef* s : written[i]) next_seg = std::max(next_seg, s->seg + 1);
    // Segments that stay keep their files where they are.
    auto keep = [&](const SegmentRef& s, uint32_t as) {
      SegmentRef r = s;
      r.seg = as;
      m.segments.push_back(r);
    };
    // Before the merge: as they are. Then the merged segments, and the
    // refreshes' since, numbered after every number in use.
    for (size_t j = 0; j < from; j++) keep(*new_ix[i][j], new_ix[i][j]->seg);
    if (cs.plan[i] == SIZE_MAX) {
      for (size_t j = from; j < new_ix[i].size(); j++) keep(*new_ix[i][j], new_ix[i][j]->seg);
      continue;
    }
    for (const SegmentRef* s : written[i]) {
      link_segment(out, gen, *s, m.split_factor, next_seg);
      SegmentRef r = *s;
      r.seg = next_seg++;
      m.segments.push_back(r);
    }
    for (size_t j = old_ix[i].size(); j < new_ix[i].size(); j++) keep(*new_ix[i][j], next_seg++);
  }
  if (cs.folds.empty()) {
    for (const char* list : {kDeletesFile, kChainsFile}) state.carry_list(list, gen);
  } else {
    m.deleted = count_dead(dead);
    m.chain_links = links.size();
    if (m.deleted > 0) write_file_durable(gen + "/" + kDeletesFile, encode_deletes(dead));
    if (!links.empty()) write_file_durable(gen + "/" + kChainsFile, encode_chains(links));
  }
  for (const char* list : {kTermsFile, kDirsFile}) state.carry_list(list, gen);
  copy_side_file(now_gen, gen, kGenPathsFile);
  // Racy documents: those the generation names, and those of the merged
  // segments (racy in their inputs: a merged segment has no run start),
  // less the tombstoned.
  DeadSeqs racy = cs.racy;
  racy.resize(now.indexers);
  if (state.read_list(kRacyFile, bytes)) {
    DeadSeqs old = decode_deletes(now_gen + "/" + kRacyFile, bytes, docs);
    for (uint32_t i = 0; i < now.indexers; i++) racy[i].insert(racy[i].end(), old[i].begin(), old[i].end());
  }
  for (uint32_t i = 0; i < now.indexers; i++) {
    auto& r = racy[i];
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    r.erase(std::remove_if(r.begin(), r.end(),
                           [&](uint64_t q) { return std::binary_search(dead[i].begin(), dead[i].end(), q); }),
            r.end());
  }
  if (count_dead(racy) > 0) write_file_durable(gen + "/" + kRacyFile, encode_deletes(racy));
  publish_generation(b->dir, gen, m, now);
  remove_tree(cs.stage);
  compact_stats(*b, m, true, stats);
}
