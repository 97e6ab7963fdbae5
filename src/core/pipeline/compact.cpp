#include "pipeline/compact.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "index/chains.h"
#include "index/deletes.h"
#include "index/path_index.h"
#include "index/segment_format.h"
#include "index/segment_pack.h"
#include "index/tf_merge.h"
#include "index/tfidf_index.h"
#include "pipeline/build.h"
#include "pipeline/dir_records.h"
#include "pipeline/resume.h"
#include "query/collection.h"
#include "util/engine_thread.h"
#include "util/door.h"
#include "util/error.h"
#include "util/fileio.h"
#include "util/time_ns.h"

using namespace scipis;

namespace scipis {

size_t first_uncut(const Manifest& m, uint32_t indexer, size_t j) {
  // Each segment's first_seq and the seq its first document has; on the
  // stack for the usual few segments (every refresh and merge check asks).
  absl::InlinedVector<std::pair<uint64_t, uint64_t>, 32> segs;
  uint64_t a = 0;
  for (const SegmentRef& s : m.segments) {
    if (s.indexer != indexer) continue;
    segs.emplace_back(s.first_seq, a);
    a += s.docs;
  }
  while (j > 0 && segs[j].first == segs[j].second + 1) j--;
  return j;
}

uint64_t absorb_max_bytes(uint32_t split_factor) {
  return kTierRatio * (uint64_t{split_factor} * kCodeTableBytes + (4u << 10));
}

size_t take_in_from(const Manifest& m, uint32_t indexer) {
  absl::InlinedVector<const SegmentRef*, 32> segs;
  for (const SegmentRef& s : m.segments)
    if (s.indexer == indexer) segs.push_back(&s);
  const uint64_t bound = absorb_max_bytes(m.split_factor);
  size_t j = segs.size();
  uint64_t bytes = 0;
  for (; j > 1; j--) {
    const SegmentRef& s = *segs[j - 1];
    if (s.docs == 0 || s.meta_bytes == kUnknownBytes || bytes + segment_bytes(s) > bound ||
        first_uncut(m, indexer, j - 1) != j - 1)
      break;
    bytes += segment_bytes(s);
  }
  return j;
}

namespace {

// Each indexer's segments of m, in flush order.
std::vector<std::vector<const SegmentRef*>> refs_by_indexer(const Manifest& m) {
  std::vector<std::vector<const SegmentRef*>> refs(m.indexers);
  for (const SegmentRef& s : m.segments) refs[s.indexer].push_back(&s);
  return refs;
}

}  // namespace

std::vector<size_t> plan_merges(const Manifest& m, bool all, uint64_t max_bytes, bool keep_full, uint64_t ratio) {
  const auto by_ix = refs_by_indexer(m);
  std::vector<size_t> from(m.indexers, SIZE_MAX);
  for (uint32_t i = 0; i < m.indexers; i++) {
    const auto& segs = by_ix[i];
    if (segs.empty()) continue;
    size_t k;
    if (all) {
      k = 0;
    } else {
      // Segments of half the largest's size or more are full flushes (a
      // build's, or a merge's): merged again only for their garbage. Not
      // below kTierFloor: there a segment's fixed costs (dictionary
      // headers) make every small segment look alike.
      uint64_t largest = 0;
      for (const SegmentRef* s : segs) largest = std::max(largest, segment_bytes(*s));
      const uint64_t bound =
          segs.size() > kSmallMergeSegments ? std::max(max_bytes, kMaxAutoMergeBytes) : max_bytes;
      // Those a refresh will take in wait for it.
      const size_t run_from = take_in_from(m, i);
      const size_t end = segs.size() - run_from <= kTakeInRun ? run_from : segs.size();
      uint64_t after = 0;
      k = end;
      while (k > 0) {
        const SegmentRef& s = *segs[k - 1];
        const uint64_t bytes = segment_bytes(s);
        if (k < end && (bytes > ratio * after || (keep_full && 2 * bytes >= largest && bytes > kTierFloor) ||
                        after + bytes > bound))
          break;
        after += bytes;
        k--;
      }
      if (end - k < kTierWidth) continue;
      // A tier that begins inside a document a flush cut reaches back to
      // the segment holding its start; when that is far larger than the
      // tier, the tier after the cut merges alone (else a merge whose
      // output a flush cut would pull a large segment into every tail
      // merge after it).
      const size_t back = first_uncut(m, i, k);
      uint64_t extra = 0;
      for (size_t j = back; j < k; j++) extra += segment_bytes(*segs[j]);
      if (back < k && extra > kTierRatio * after) {
        while (k < end && first_uncut(m, i, k) != k) k++;
        if (end - k < kTierWidth) continue;
      }
    }
    k = first_uncut(m, i, k);
    if (all || segs.size() - k >= kTierWidth) from[i] = k;
  }
  return from;
}

std::vector<size_t> plan_settle(const Manifest& m, uint64_t max_bytes) {
  const auto by_ix = refs_by_indexer(m);
  std::vector<size_t> from(m.indexers, SIZE_MAX);
  for (uint32_t i = 0; i < m.indexers; i++) {
    const auto& segs = by_ix[i];
    // Their postings and records, which the merge writes again in memory
    // (a tiny table's segments are mostly code tables, which it does not).
    size_t k = segs.size();
    uint64_t bytes = 0;
    auto held = [](const SegmentRef& s) { return s.tf_data_bytes + s.file_data_bytes; };
    while (k > 0 && bytes + held(*segs[k - 1]) <= max_bytes) bytes += held(*segs[--k]);
    k = first_uncut(m, i, k);
    if (segs.size() - k >= 2) from[i] = k;
  }
  return from;
}

}  // namespace scipis

namespace {

struct Fwd {
  uint64_t seq;
  uint32_t term;
  uint32_t tf;
};

using TermCounts = std::vector<std::pair<std::string, uint64_t>>;

// Every posting of segment s, as (seq, term, tf) with terms into names, in
// dictionary order.
// What a merge beside refreshes reads of an input's TF data: read whole
// at its start, or (renumbering) from the mapping made then, a segment at
// a time; null: read it now (not beside, or a pack kept mapped).
const std::string* staged_input(const CompactState& cs, uint32_t i, const SegmentState& s, std::string& buf) {
  if (cs.beside && !cs.settle) return &cs.tf_data.at({i, s.ref.seg});
  const auto it = cs.tf_maps.find({i, s.ref.seg});
  if (!(cs.renumber || cs.settle) || it == cs.tf_maps.end()) return nullptr;
  buf.assign(it->second->bytes());
  return &buf;
}

void invert(Collection& c, SegmentState& s, const IndexerState& ix, uint32_t splits,
            std::vector<std::string>& names, std::vector<Fwd>& out, const std::string* read = nullptr) {
  std::vector<Posting> ps;
  // The data file read once: a read per term would be a system call for
  // each of millions.
  const std::string& path = c.tf_data_name(s);
  std::string own;
  if (!read) c.read_tf_data(s, own);
  const std::string& data = read ? *read : own;
  if (data.size() != s.ref.tf_data_bytes)
    fail_corrupt(path, "file size differs from the manifest (truncated or overwritten)");
  check_header(path, kMagicTfData, data.data(), data.size());
  for (uint32_t sp = 0; sp < splits; sp++) {
    for (auto& [term, ref] : c.tf_meta(s, sp).all()) {
      const uint32_t id = static_cast<uint32_t>(names.size());
      names.push_back(std::move(term));
      ps.clear();
      if (ref.len == 0) {
        if (ref.seq >= ix.docs())
          fail_corrupt(c.tf_meta_name(s, sp), "posting names an unknown document");
        ps.push_back({ref.seq, ref.tf});
      } else {
        const uint64_t at = ref.read_offset(), len = ref.read_len();
        if (at < kHeaderSize || len > data.size() || at > data.size() - len)
          fail_corrupt(path, "dictionary points outside the data file");
        decode_postings(path, region_in(path, std::string_view(data).substr(at, len), ref), ref,
                        ix.docs(), ps);
      }
      for (const Posting& p : ps) out.push_back({p.seq, id, p.tf});
    }
  }
}

// Postings in document order, each document's in the order given (the
// terms then go into the merged table as a build would add them). Seqs of
// a segment are dense: a counting sort, not a comparison sort.
void sort_by_seq(std::vector<Fwd>& v) {
  if (v.empty()) return;
  uint64_t lo = v[0].seq, hi = v[0].seq;
  for (const Fwd& f : v) {
    lo = std::min(lo, f.seq);
    hi = std::max(hi, f.seq);
  }
  if (hi - lo > 4 * v.size() + 1024 || v.size() >= UINT32_MAX) {
    std::stable_sort(v.begin(), v.end(), [](const Fwd& a, const Fwd& b) { return a.seq < b.seq; });
    return;
  }
  std::vector<uint32_t> at(hi - lo + 2, 0);
  for (const Fwd& f : v) at[f.seq - lo + 1]++;
  for (size_t k = 1; k < at.size(); k++) at[k] += at[k - 1];
  std::vector<Fwd> out(v.size());
  for (const Fwd& f : v) out[at[f.seq - lo]++] = f;
  v.swap(out);
}

// Writes segment seg of gen from its TF parts and its documents' records.
// defer: a pack is kept there (under mu), not written.
SegmentRef put_merged(const std::string& gen, uint32_t indexer, uint32_t seg, uint64_t first_seq,
                      const OutBuffer& tf_data, const std::vector<OutBuffer>& tf_meta, PathIndex& paths,
                      int split_factor, std::vector<DeferredPack>* defer, std::mutex* mu) {
  std::string file_data, trigrams;
  std::vector<std::string> file_meta;
  paths.serialise(split_factor, file_data, file_meta, &trigrams);
  SegmentRef r;
  r.indexer = indexer;
  r.seg = seg;
  r.first_seq = first_seq;
  r.docs = paths.count();
  SegmentParts parts{tf_data.view(), {}, file_data, {}, trigrams};
  for (const auto& m : tf_meta) parts.tf_meta.push_back(m.view());
  for (const auto& m : file_meta) parts.file_meta.push_back(m);
  // A merge of small segments (the refreshes' tail) stays one file.
  put_segment(gen, parts, true, &r, [&](const std::string& path, std::string_view data) {
    if (!defer || !r.packed) return write_file_durable(path, data);
    std::lock_guard<std::mutex> lk(*mu);
    defer->push_back({indexer, seg, path, std::string(data)});
  });
  return r;
}

// Writes one flush of an indexer's merge as segment seg of gen. last:
// nothing follows, so the tables are not cleared (nor grown) for more.
SegmentRef write_segment(const std::string& gen, uint32_t indexer, uint32_t seg, uint64_t first_seq,
                         TfIdfIndex& tf, PathIndex& paths, int split_factor, uint64_t& budget,
                         uint64_t max_budget, std::vector<DeferredPack>* defer, std::mutex* mu,
                         bool last) {
  OutBuffer tf_data;
  std::vector<OutBuffer> tf_meta;
  tf.serialise(split_factor, tf_data, tf_meta, &paths);
  const SegmentRef r =
      put_merged(gen, indexer, seg, first_seq, tf_data, tf_meta, paths, split_factor, defer, mu);
  if (!last) {
    budget = std::min(4 * budget, max_budget);
    tf.clear(budget);
    paths.clear();
  }
  return r;
}

}  // namespace

std::shared_ptr<AbsorbDocs> scipis::segment_documents(Collection& c, SegmentState& s) {
  auto out = std::make_shared<AbsorbDocs>();
  out->ref = s.ref;
  const IndexerState& ix = c.indexer(s.ref.indexer);
  std::vector<Fwd> fwd;
  invert(c, s, ix, c.manifest().split_factor, out->names, fwd);
  sort_by_seq(fwd);
  DocInfo docs[kFileBlock];
  size_t ends[kFileBlock];
  std::string paths;
  const FileBlocks& fb = c.files(s);
  size_t at = 0;
  for (size_t blk = 0; blk < fb.blocks(); blk++) {
    paths.clear();
    fb.decode(blk, docs, paths, ends);
    for (size_t r = 0, pat = 0; r < fb.records_in(blk); pat = ends[r++]) {
      AbsorbDocs::Doc d;
      d.info = docs[r];
      d.info.seq = s.seq0 + blk * kFileBlock + r;
      d.path.assign(paths, pat, ends[r] - pat);
      if (at < fwd.size() && fwd[at].seq < d.info.seq)
        fail_corrupt(c.tf_data_name(s), "postings name a document before the segment's");
      for (; at < fwd.size() && fwd[at].seq == d.info.seq; at++) d.terms.emplace_back(fwd[at].term, fwd[at].tf);
      out->docs.push_back(std::move(d));
    }
  }
  if (at != fwd.size()) fail_corrupt(c.tf_data_name(s), "postings name a document past the segment's");
  return out;
}

void scipis::link_segment(const std::string& from, const std::string& to, const SegmentRef& s,
                          uint32_t splits, uint32_t as_seg) {
  if (!s.packed || !s.pack_root) {
    mkdir_p(to + "/" + tf_dir(s.indexer));
    if (!s.packed) mkdir_p(to + "/" + file_dir(s.indexer));
  }
  SegmentRef named = s;
  named.seg = as_seg;
  const std::vector<std::string> src = segment_files(s, splits), dst = segment_files(named, splits);
  for (size_t f = 0; f < src.size(); f++) link_or_copy(from + "/" + src[f], to + "/" + dst[f]);
}

namespace {

std::mutex forced_plan_mu;
std::vector<size_t> forced_plan_from;

std::vector<size_t> forced_plan() {
  std::lock_guard<std::mutex> lk(forced_plan_mu);
  return forced_plan_from;
}

}  // namespace

namespace {
std::atomic<bool> merge_in_step_on{true};
}  // namespace

void scipis::set_merge_in_step(bool on) { merge_in_step_on.store(on); }

void scipis::set_compaction_plan(std::vector<size_t> from) {
  std::lock_guard<std::mutex> lk(forced_plan_mu);
  forced_plan_from = std::move(from);
}

// Where each indexer's merge starts, as compact_run merges: the tail
// tiers (or the beside merge's plan), an indexer of one segment with
// nothing to reclaim left be, reaching back to garbage and forward to the
// members of chains whose roots it holds.
std::vector<size_t> scipis::plan_compaction(Collection& c, const Manifest& cur, const CompactState& cs) {
  const uint32_t ni = cur.indexers;
  if (auto forced = forced_plan(); !cs.beside && forced.size() == ni) return forced;
  std::vector<size_t> from_seg = cs.beside ? cs.plan : plan_merges(cur, cs.all, cs.max_bytes);
  const auto refs = refs_by_indexer(cur);  // with their sizes filled
  // An indexer of one segment with nothing to drop or fold is left be,
  // unless the segment is a journal's pack and the compaction is whole:
  // that leaves no journal behind (its generation's directory went on
  // holding it when an indexer's only segment came from a refresh).
  for (uint32_t i = 0; i < ni; i++) {
    const IndexerState& ix = c.indexer(i);
    if (from_seg[i] == 0 && ix.segs.size() == 1 && ix.dead.empty() && ix.chained.empty() &&
        !(cs.all && refs[i][0]->in_journal()))
      from_seg[i] = SIZE_MAX;
  }
  if (!cs.all && !cs.beside) {
    // Garbage (tombstoned documents, chain members) costs every query:
    // a merge reaches back to the first segment from which on what it
    // would reclaim is half or more of the documents, then forward again
    // past segments whose only reclaim is a chain's root: the links of a
    // long chain fold among themselves in a merge of the small segments
    // that hold them, without the root's (the appended file's first
    // version, costly to rewrite after every few appends).
    std::vector<std::vector<size_t>> touching(ni);  // chains with a member in each indexer
    for (size_t ch = 0; ch < c.chains().size(); ch++)
      for (const DocId& d : c.chains()[ch].members) touching[d.indexer].push_back(ch);
    for (auto& t : touching) t.erase(std::unique(t.begin(), t.end()), t.end());
    for (uint32_t i = 0; i < ni; i++) {
      const IndexerState& ix = c.indexer(i);
      // Bytes of the segments from j on: a reach-back stays within the
      // automatic merge's bound.
      std::vector<uint64_t> tail_bytes(ix.segs.size() + 1, 0);
      for (size_t j = ix.segs.size(); j-- > 0;)
        tail_bytes[j] = tail_bytes[j + 1] + segment_bytes(*refs[i][j]);
      auto reclaim = [&](size_t j) {
        auto merged = [&](const DocId& d) {
          if (d.indexer == i) return d.seq >= ix.first[j];
          const size_t f = from_seg[d.indexer];
          return f != SIZE_MAX && d.seq >= c.indexer(d.indexer).first[f];
        };
        uint64_t n = static_cast<uint64_t>(
            ix.dead.end() - std::lower_bound(ix.dead.begin(), ix.dead.end(), ix.first[j]));
        for (size_t ch : touching[i]) {
          const auto& mem = c.chains()[ch].members;
          size_t k = mem.size();
          while (k > 0 && merged(mem[k - 1])) k--;
          if (mem.size() - k >= 2) n += mem.size() - k - 1;
        }
        return n;
      };
      auto qualifies = [&](size_t j, uint64_t garbage) {
        return garbage > 0 && garbage * kGarbageShareDenominator >= ix.docs() - ix.first[j] &&
               tail_bytes[j] <= cs.max_bytes;
      };
      const size_t stop = std::min(ix.segs.size(), from_seg[i]);
      for (size_t j = 0; j < stop; j++) {
        uint64_t garbage = reclaim(j);
        if (!qualifies(j, garbage)) continue;
        while (j + 1 < stop) {
          uint64_t roots = 0;
          for (size_t ch : touching[i]) {
            const DocId& r = c.chains()[ch].members.front();
            roots += r.indexer == i && r.seq >= ix.first[j] && r.seq < ix.first[j + 1];
          }
          const uint64_t next = reclaim(j + 1);
          if (!qualifies(j + 1, next) || next + roots < garbage) break;
          j++;
          garbage = next;
        }
        from_seg[i] = first_uncut(cur, i, j);
        break;
      }
    }
    // A chain folds only when each of its members takes part: a merge
    // that holds its root (the oldest, costly to reach) reaches forward to
    // the others, which are newer; one that holds only newer members does
    // not reach back.
    for (bool grew = true; grew;) {
      grew = false;
      for (const Chain& chain : c.chains()) {
        const DocId& root = chain.members.front();
        if (from_seg[root.indexer] == SIZE_MAX ||
            root.seq < c.indexer(root.indexer).first[from_seg[root.indexer]])
          continue;
        for (const DocId& d : chain.members) {
          const IndexerState& ix = c.indexer(d.indexer);
          const size_t j = static_cast<size_t>(
              std::upper_bound(ix.first.begin(), ix.first.end(), d.seq) - ix.first.begin() - 1);
          const size_t k = first_uncut(cur, d.indexer, j);
          if (k < from_seg[d.indexer]) {
            from_seg[d.indexer] = k;
            grew = true;
          }
        }
      }
    }
  }
  return from_seg;
}

namespace {

}  // namespace

void compact_run(scipis_build* b) {
  CompactState& cs = *b->compact;
  std::unique_ptr<Collection> own;
  const bool staged = cs.beside || cs.renumber;  // beside refreshes: read from what the start opened
  if (!staged) own = std::make_unique<Collection>(b->dir, cs.state);
  Collection& c = staged ? *cs.snapshot : *own;
  const Manifest& cur = cs.current;
  if (c.manifest().generation != cs.current.generation || c.journal_records() != cs.state.records)
    fail(SCIPIS_E_IO, "collection index in \"%s\" changed while a compaction started", b->dir.c_str());
  const uint32_t ni = cur.indexers, sf = cur.split_factor;
  const std::vector<size_t> from_seg = cs.renumber ? cs.plan : plan_compaction(c, cur, cs);
  const auto refs = refs_by_indexer(cur);  // with their sizes filled
  std::vector<uint64_t> from(ni, UINT64_MAX);
  for (uint32_t i = 0; i < ni; i++)
    if (from_seg[i] != SIZE_MAX) from[i] = c.indexer(i).first[from_seg[i]];
  auto merged = [&](const DocId& d) { return from[d.indexer] != UINT64_MAX && d.seq >= from[d.indexer]; };
  // A merge of a few small segments (the tiers refreshes leave) writes
  // about what it reads: it may fit one journal record.
  uint64_t input = 0;
  for (uint32_t i = 0; i < ni; i++)
    for (size_t j = from_seg[i]; from_seg[i] != SIZE_MAX && j < refs[i].size(); j++)
      input += segment_bytes(*refs[i][j]);
  cs.defer = !staged && !cs.all && journal_enabled() && input <= kJournalMaxRecord;
  const std::string& gen_dir = b->cfg.gen_dir;
  if (!cs.defer && !cs.beside) mkdir_p(gen_dir);

  // A chain's last members that take part fold into its last: all of
  // them (the chain becomes one document), or two or more of its links
  // (the chain keeps its members before them, the folded link the first
  // folded one's retraction). fold_from: the first member that folds.
  const auto& chains = c.chains();
  std::vector<size_t> fold_from(chains.size(), SIZE_MAX);
  absl::flat_hash_map<DocId, size_t> folded_member;  // non-last members of folded chains
  for (size_t ch = 0; ch < chains.size(); ch++) {
    const auto& mem = chains[ch].members;
    size_t k = mem.size();
    while (k > 0 && merged(mem[k - 1])) k--;
    if (k > 0 && mem.size() - k < 2) continue;
    fold_from[ch] = k;
    cs.chains_folded++;
    for (size_t m = k; m + 1 < mem.size(); m++) folded_member[mem[m]] = ch;
  }
  auto folds = [&](int64_t ch) { return ch >= 0 && fold_from[static_cast<size_t>(ch)] != SIZE_MAX; };
  // Per folded chain, the retractions its folded document applies (those
  // of the links after the first that folds) and the one its link keeps.
  std::vector<std::vector<std::string>> fold_retract(chains.size());
  std::vector<std::string> kept_retract(chains.size());
  {
    std::vector<size_t> member(chains.size(), 0);
    for (const ChainLink& l : c.chain_links()) {
      const int64_t ch = c.chain_of(l.root.indexer, l.root.seq);
      if (!folds(ch)) continue;
      const size_t u = static_cast<size_t>(ch), at = ++member[u];
      if (at == fold_from[u]) kept_retract[u] = l.retract;
      else if (at > fold_from[u] && !l.retract.empty()) fold_retract[u].push_back(l.retract);
    }
  }

  // New numbers: the merged ranges' documents in order, less the dropped.
  std::vector<std::vector<uint64_t>> renum(ni);
  for (uint32_t i = 0; i < ni; i++) {
    IndexerState& ix = c.indexer(i);
    if (from[i] == UINT64_MAX) continue;
    uint64_t next = from[i];
    renum[i].resize(ix.docs() - from[i]);
    for (uint64_t q = from[i]; q < ix.docs(); q++) {
      const bool drop = !cs.beside && (ix.is_dead(q) || folded_member.contains(DocId{i, q}));
      renum[i][q - from[i]] = drop ? UINT64_MAX : next++;
      cs.docs_dropped += drop;
    }
    cs.segments_merged += ix.segs.size() - from_seg[i];
  }
  auto new_id = [&](const DocId& d) {
    return merged(d) ? DocId{d.indexer, renum[d.indexer][d.seq - from[d.indexer]]} : d;
  };

  // Terms of the folded chains' earlier members, gathered first: a chain
  // may end in an indexer merged before the one holding its root.
  absl::flat_hash_map<DocId, TermCounts> stash;
  absl::flat_hash_map<DocId, uint64_t> stash_tokens;  // their own lengths
  if (!folded_member.empty()) {
    for (uint32_t i = 0; i < ni; i++) {
      if (from[i] == UINT64_MAX) continue;
      IndexerState& ix = c.indexer(i);
      for (size_t j = from_seg[i]; j < ix.segs.size(); j++) {
        SegmentState& s = *ix.segs[j];
        bool holds = false;
        for (uint64_t q = ix.first[j]; q < ix.first[j + 1] && !holds; q++)
          holds = folded_member.contains(DocId{i, q});
        // A member cut by the flush before has postings here too.
        if (!holds && ix.first[j + 1] < ix.docs())
          holds = folded_member.contains(DocId{i, ix.first[j + 1]});
        if (!holds) continue;
        std::vector<std::string> names;
        std::vector<Fwd> fwd;
        std::string staged_buf;
        invert(c, s, ix, sf, names, fwd, staged_input(cs, i, s, staged_buf));
        for (const Fwd& f : fwd)
          if (folded_member.contains(DocId{i, f.seq}))
            stash[DocId{i, f.seq}].emplace_back(names[f.term], f.tf);
        const FileBlocks& fb = c.files(s);
        DocInfo recs[kFileBlock];
        size_t ends[kFileBlock];
        std::string recpaths;
        for (size_t blk = 0; blk < fb.blocks(); blk++) {
          const uint64_t q0 = ix.first[j] + blk * kFileBlock;
          bool any = false;
          for (size_t r = 0; r < fb.records_in(blk) && !any; r++)
            any = folded_member.contains(DocId{i, q0 + r});
          if (!any) continue;
          fb.decode(blk, recs, recpaths, ends);
          for (size_t r = 0; r < fb.records_in(blk); r++)
            if (folded_member.contains(DocId{i, q0 + r})) stash_tokens[DocId{i, q0 + r}] = recs[r].tokens;
        }
        if (cs.stop.load()) fail(SCIPIS_E_CANCELED, "compaction was cancelled");
      }
    }
  }

  Manifest& m = b->next;
  const uint64_t generation = m.generation;
  m = cur;
  m.generation = generation;
  m.segments.clear();
  // Segments before each merge keep their numbers, and their files where
  // they are.
  const std::string old_gen = cs.current.gen_dir(b->dir);
  for (uint32_t i = 0; i < ni; i++) {
    IndexerState& ix = c.indexer(i);
    const size_t keep = from_seg[i] == SIZE_MAX ? ix.segs.size() : from_seg[i];
    for (size_t j = 0; j < keep; j++) m.segments.push_back(ix.segs[j]->ref);
  }
  const scipis_options& o = b->cfg.opts;
  const std::string& gen = b->cfg.gen_dir;
  DeadSeqs dead(ni);
  std::vector<std::vector<uint64_t>> racy(ni);
  std::vector<std::vector<SegmentRef>> written(ni);
  // Merged segments take numbers past every one the generation used (c
  // holds cs.state's segments, checked above).
  const std::vector<uint32_t> free_segs = cs.state.first_free_segments();
  // No merged segment has a term its inputs lack; a chain folds into its
  // last member, which may be another indexer's: each indexer's table is
  // sized for the terms of every merged segment.
  size_t most_terms = 0;
  for (uint32_t i = 0; i < ni; i++) {
    IndexerState& ix = c.indexer(i);
    for (size_t j = from_seg[i] == SIZE_MAX ? ix.segs.size() : from_seg[i]; j < ix.segs.size(); j++)
      for (uint32_t split = 0; split < sf; split++) most_terms += c.tf_meta(*ix.segs[j], split).size();
  }
  // A run that keeps every document as it is (none dropped or folded,
  // every number the same) merges its TF parts in step (index/tf_merge.h)
  // into one segment, however many terms it holds, when its records fit
  // one path index: adding its postings to a table cut a merge of the log
  // corpus's four segments into four again. False, nothing written, when
  // the run does not qualify.
  auto merge_in_step = [&](uint32_t i) -> bool {
    if (!merge_in_step_on.load()) return false;
    IndexerState& ix = c.indexer(i);
    // (Beside refreshes a tombstoned document keeps its number and loses
    // its postings: not kept as it is.)
    for (uint64_t q = from[i]; q < ix.docs(); q++)
      if (renum[i][q - from[i]] != q || c.chain_of(i, q) >= 0 || ix.is_dead(q)) return false;
    uint64_t terms = 0;
    for (size_t j = from_seg[i]; j < ix.segs.size(); j++)
      for (uint32_t split = 0; split < sf; split++) terms += c.tf_meta(*ix.segs[j], split).size();
    // It holds a df and the dictionary's notes per term (46 bytes a term
    // of its inputs on the log corpus): past kInStepTableShare times the
    // table a merge may hold, the table's flushes bound it instead.
    if (!in_step_fits(terms, static_cast<uint64_t>(o.tfidf_index_size))) return false;
    PathIndex paths(static_cast<uint64_t>(o.path_index_size));
    std::vector<uint64_t> run_racy;
    uint64_t next_seq = from[i];
    DocInfo docs[kFileBlock];
    size_t ends[kFileBlock];
    std::string recpaths;
    for (size_t j = from_seg[i]; j < ix.segs.size(); j++) {
      if (cs.stop.load()) fail(SCIPIS_E_CANCELED, "compaction was cancelled");
      SegmentState& s = *ix.segs[j];
      const FileBlocks& fb = c.files(s);
      for (size_t blk = 0; blk < fb.blocks(); blk++) {
        recpaths.clear();
        fb.decode(blk, docs, recpaths, ends);
        for (size_t r = 0, pat = 0; r < fb.records_in(blk); pat = ends[r++]) {
          DocInfo d = docs[r];
          d.seq = next_seq++;
          if (s.ref.run_started_ns != INT64_MIN && d.ctime_ns >= s.ref.run_started_ns - kRacyNs)
            run_racy.push_back(d.seq);
          paths.add(d, std::string_view(recpaths).substr(pat, ends[r] - pat));
          if (paths.full()) return false;
        }
      }
    }
    if (next_seq != ix.docs()) fail(SCIPIS_E_INTERNAL, "compaction lost count of its documents");
    std::vector<TfMergeInput> in;
    // A merge beside refreshes reads the TF data it staged when it began
    // (refreshes may replace the files since), as invert() does.
    std::vector<std::string> staged_bufs(ix.segs.size());
    for (size_t j = from_seg[i]; j < ix.segs.size(); j++) {
      SegmentState& s = *ix.segs[j];
      TfMergeInput t;
      for (uint32_t split = 0; split < sf; split++) t.splits.push_back(&c.tf_meta(s, split));
      t.data_path = c.tf_data_name(s);
      t.data_bytes = s.ref.tf_data_bytes;
      if (const auto mapped = cs.settle ? cs.tf_maps.find({i, s.ref.seg}) : cs.tf_maps.end();
          mapped != cs.tf_maps.end()) {
        // A settling merge reads its inputs in place: they may be gigabytes.
        const std::string_view bytes = mapped->second->bytes();
        t.region = [bytes, path = t.data_path](const TermRef& r) {
          if (r.read_offset() > bytes.size()) fail_corrupt(path, "posting region outside the file");
          return region_in(path, bytes.substr(r.read_offset(), r.read_len()), r);
        };
      } else if (const std::string* staged = staged_input(cs, i, s, staged_bufs[j])) {
        if (staged->size() != s.ref.tf_data_bytes)
          fail_corrupt(t.data_path, "file size differs from the manifest (truncated or overwritten)");
        t.region = [staged, path = t.data_path](const TermRef& r) {
          if (r.read_offset() > staged->size()) fail_corrupt(path, "posting region outside the file");
          return region_in(path, std::string_view(*staged).substr(r.read_offset(), r.read_len()), r);
        };
      } else {
        t.region = [&c, &s, path = t.data_path](const TermRef& r) {
          return region_in(path, c.region_bytes(s, r), r, c.verified(s));
        };
      }
      in.push_back(std::move(t));
    }
    OutBuffer tf_data;
    std::vector<OutBuffer> tf_meta;
    TfMetaWriter meta;
    merge_tf(in, sf, ix.docs(), &paths, tf_data, tf_meta, meta);
    if (cs.stop.load()) fail(SCIPIS_E_CANCELED, "compaction was cancelled");
    const uint32_t seg_no = free_segs[i];
    written[i].push_back(put_merged(gen, i, seg_no, from[i], tf_data, tf_meta, paths, static_cast<int>(sf),
                                    cs.defer ? &cs.packs : nullptr, &cs.packs_mu));
    racy[i].insert(racy[i].end(), run_racy.begin(), run_racy.end());
    return true;
  };
  auto merge_indexer = [&](uint32_t i) {
    IndexerState& ix = c.indexer(i);
    for (uint64_t q : ix.dead)
      if (from[i] == UINT64_MAX || q < from[i]) dead[i].push_back(q);
    if (from[i] == UINT64_MAX) return;
    if (merge_in_step(i)) return;
    // Room for all it merges from the start (a segment's table takes a
    // few times its bytes): a merge that flushed at a small budget would
    // write as many segments as it read, planned again after every
    // refresh. No more: clearing pages it does not need costs time.
    uint64_t input = 0;
    for (size_t j = from_seg[i]; j < ix.segs.size(); j++) input += segment_bytes(*refs[i][j]);
    uint64_t budget = std::min(static_cast<uint64_t>(o.tfidf_index_size),
                               std::max<uint64_t>(4u << 20, kMergeTableFactor * input));
    TfIdfIndex tf(budget, o.index_depth, nullptr, most_terms);
    PathIndex paths(static_cast<uint64_t>(o.path_index_size));
    uint32_t seg_no = free_segs[i];
    uint64_t first_seq = from[i], next_seq = from[i];
    uint32_t since_check = 0;
    auto flush = [&](bool last = false) {
      SegmentRef r = write_segment(gen, i, seg_no++, first_seq, tf, paths, static_cast<int>(sf), budget,
                                   static_cast<uint64_t>(o.tfidf_index_size),
                                   cs.defer ? &cs.packs : nullptr, &cs.packs_mu, last);
      written[i].push_back(r);
      first_seq = next_seq;
    };
    auto add = [&](std::string_view term, uint64_t seq, uint64_t n) {
      tf.add(TermKey::of(term), seq, static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX)));
      if (++since_check % TfIdfIndex::kAddsPerFullCheck == 0 && tf.full()) flush();
    };
    auto after_add = [&] {
      if (++since_check % TfIdfIndex::kAddsPerFullCheck == 0 && tf.full()) flush();
    };
    std::vector<Fwd> carry;  // postings of the document the last segment's flush cut
    std::vector<std::string> carry_names;
    // A segment's terms hashed once, a document's added as one batch (its
    // table lookups overlap): a lookup per posting was a fifth of a merge.
    std::vector<TermKey> keys, batch;
    std::vector<uint32_t> counts;
    DocInfo docs[kFileBlock];
    size_t ends[kFileBlock];
    std::string recpaths;
    for (size_t j = from_seg[i]; j < ix.segs.size(); j++) {
      if (cs.stop.load()) fail(SCIPIS_E_CANCELED, "compaction was cancelled");
      SegmentState& s = *ix.segs[j];
      std::vector<std::string> names = std::move(carry_names);
      std::vector<Fwd> fwd;
      std::string staged_buf;
      invert(c, s, ix, sf, names, fwd, staged_input(cs, i, s, staged_buf));
      for (const Fwd& f : carry) fwd.push_back(f);
      sort_by_seq(fwd);
      keys.clear();
      for (const std::string& t : names) keys.push_back(TermKey::of(t));
      size_t at = 0;
      const FileBlocks& fb = c.files(s);
      for (size_t blk = 0; blk < fb.blocks(); blk++) {
        recpaths.clear();
        fb.decode(blk, docs, recpaths, ends);
        for (size_t r = 0, pat = 0; r < fb.records_in(blk); pat = ends[r++]) {
          const uint64_t q = ix.first[j] + blk * kFileBlock + r;
          const size_t begin = at;
          while (at < fwd.size() && fwd[at].seq == q) at++;
          const uint64_t nq = renum[i][q - from[i]];
          if (nq == UINT64_MAX) continue;
          DocInfo d = docs[r];
          d.seq = next_seq++;
          if (nq != d.seq) fail(SCIPIS_E_INTERNAL, "compaction lost count of its documents");
          const int64_t ch = c.chain_of(i, q);
          // Only the chain's last member takes the fold in: one merged
          // here before a member that another indexer keeps unmerged is
          // copied as it is (it stays a link of the chain).
          if (folds(ch) && chains[static_cast<size_t>(ch)].last() == DocId{i, q}) {
            // The folded members as one document: their counts summed,
            // less what the links after the first of them retracted.
            const size_t u = static_cast<size_t>(ch);
            const Chain& chain = chains[u];
            // Hashed, not ordered: a long log's fold sums its every term
            // (a std::map's string compares were a sixth of the merge).
            absl::flat_hash_map<std::string_view, uint64_t> sum;
            for (size_t x = begin; x < at; x++) sum[names[fwd[x].term]] += fwd[x].tf;
            uint64_t own = d.tokens;
            for (size_t mm = fold_from[u]; mm + 1 < chain.members.size(); mm++) {
              if (auto it = stash.find(chain.members[mm]); it != stash.end())
                for (const auto& [t, n] : it->second) sum[t] += n;
              if (auto it = stash_tokens.find(chain.members[mm]); it != stash_tokens.end()) own += it->second;
            }
            for (const std::string& t : fold_retract[u]) {
              auto it = sum.find(std::string_view(t));
              if (it != sum.end() && --it->second == 0) sum.erase(it);
            }
            for (const auto& [t, n] : sum) add(t, d.seq, n);
            own -= std::min<uint64_t>(own, fold_retract[u].size());
            d.tokens = fold_from[u] == 0 ? chain.tokens : own;
          } else if (!(cs.beside && ((ix.is_dead(q) && !ix.is_chained(q)) || folded_member.contains(DocId{i, q})))) {
            // A merge beside refreshes keeps the number and record of a
            // tombstoned document and of a chain's folded member (the
            // commit tombstones it), not their postings.
            batch.clear();
            counts.clear();
            for (size_t x = begin; x < at; x++) {
              batch.push_back(keys[fwd[x].term]);
              counts.push_back(fwd[x].tf);
            }
            tf.add_batch(batch.data(), counts.data(), batch.size(), d.seq, after_add);
          }
          if (s.ref.run_started_ns != INT64_MIN && d.ctime_ns >= s.ref.run_started_ns - kRacyNs)
            racy[i].push_back(d.seq);
          paths.add(d, std::string_view(recpaths).substr(pat, ends[r] - pat));
          if (paths.full() || tf.full()) flush();
        }
      }
      // What is left belongs to the document whose record the next
      // segment holds.
      carry.clear();
      carry_names.clear();
      for (; at < fwd.size(); at++) {
        carry.push_back({fwd[at].seq, static_cast<uint32_t>(carry_names.size()), fwd[at].tf});
        carry_names.push_back(names[fwd[at].term]);
      }
    }
    if (!carry.empty()) fail_corrupt(ix.segs.back()->tf_dir, "postings name a document past the last");
    if (!tf.empty() || !paths.empty()) flush(true);
  };
  // Indexers merge in parallel, as many at once as a build runs: each
  // reads only its own segments (and what the passes above prepared).
  {
    const uint32_t nt = std::max<uint32_t>(
        1, std::min<uint32_t>(ni, static_cast<uint32_t>(std::max(1, o.indexer_threads))));
    std::atomic<uint32_t> next{0};
    std::vector<std::exception_ptr> errors(nt);
    std::vector<EngineThread> threads;
    // A nice level cannot be undone: merges beside refreshes get their own.
    for (uint32_t t = 0; t < nt; t++)
      threads.emplace_back([&, t] {
        // Beside refreshes, a merge takes the cores the refreshes leave:
        // they decide how fresh the collection is.
        if (staged && cs.nice != 0) (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), cs.nice);
        try {
          for (uint32_t i; (i = next.fetch_add(1)) < ni;) merge_indexer(i);
        } catch (...) {
          errors[t] = std::current_exception();
          next = ni;
        }
      }, staged);
    for (auto& th : threads) th.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
  for (const auto& w : written) m.segments.insert(m.segments.end(), w.begin(), w.end());
  if (cs.beside) {
    // The commit writes the rest, into the generation it finds then.
    for (const auto& w : written) cs.written.insert(cs.written.end(), w.begin(), w.end());
    cs.racy = std::move(racy);
    for (size_t ch = 0; ch < chains.size(); ch++)
      if (folds(static_cast<int64_t>(ch))) cs.folds.push_back({chains[ch].members, fold_from[ch], kept_retract[ch]});
    return;
  }
  std::sort(m.segments.begin(), m.segments.end(), [](const auto& x, const auto& y) {
    return x.indexer != y.indexer ? x.indexer < y.indexer : x.seg < y.seg;
  });

  // Chains left: their members renumbered.
  std::vector<ChainLink> links;
  for (const ChainLink& l : c.chain_links()) {
    const int64_t ch = c.chain_of(l.root.indexer, l.root.seq);
    if (folds(ch) && (fold_from[static_cast<size_t>(ch)] == 0 || folded_member.contains(l.ext))) continue;
    ChainLink n = l;
    // The link a partial fold folded into keeps the first folded one's
    // retraction (of the piece the member before cut); those before the
    // fold keep their own.
    if (folds(ch) && chains[static_cast<size_t>(ch)].last() == l.ext)
      n.retract = kept_retract[static_cast<size_t>(ch)];
    n.root = new_id(l.root);
    n.ext = new_id(l.ext);
    links.push_back(std::move(n));
  }
  // Racy documents of the merged segments, and those a compaction before
  // named, are read again by the next refresh.
  std::string bytes;
  if (cs.state.read_list(kRacyFile, bytes)) {
    std::vector<uint64_t> docs;
    for (uint32_t i = 0; i < ni; i++) docs.push_back(c.indexer(i).docs());
    DeadSeqs old = decode_deletes(cs.current.gen_dir(b->dir) + "/" + kRacyFile, bytes, docs);
    for (uint32_t i = 0; i < ni; i++)
      for (uint64_t q : old[i]) {
        const DocId d = new_id(DocId{i, q});
        if (d.seq != UINT64_MAX && !c.indexer(i).is_dead(q)) racy[i].push_back(d.seq);
      }
  }
  for (auto& r : racy) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
  }
  for (auto& d : dead) std::sort(d.begin(), d.end());
  m.deleted = count_dead(dead);
  m.chain_links = links.size();
  if (m.deleted > 0) cs.dead = encode_deletes(dead);
  if (m.chain_links > 0) cs.chains = encode_chains(links);
  if (count_dead(racy) > 0) cs.racy_list = encode_deletes(racy);
}

namespace {

// A small merge into the journal of the generation it merged: its packs,
// the lists it renumbered (TERMS and DIRS stay as they are).
bool commit_to_journal(scipis_build& b) {
  CompactState& cs = *b.compact;
  Manifest& m = b.next;
  size_t written = 0;
  for (const SegmentRef& s : m.segments) written += s.home == kOwnGeneration;
  if (!cs.defer || cs.packs.size() != written) return false;
  uint64_t replaced = 0;
  for (const SegmentRef& s : cs.current.segments)
    if (std::none_of(m.segments.begin(), m.segments.end(), [&](const SegmentRef& t) {
          return t.home != kOwnGeneration && t.indexer == s.indexer && t.seg == s.seg;
        }))
      replaced += segment_bytes(s);
  const std::vector<JournalPart> lists{
      {JournalKind::kList, kDeletesFile, !cs.dead.empty(), cs.dead},
      {JournalKind::kList, kChainsFile, !cs.chains.empty(), cs.chains},
      {JournalKind::kList, kRacyFile, !cs.racy_list.empty(), cs.racy_list}};
  if (!commit_into_journal(cs.state, m, cs.packs, lists, replaced)) return false;
  drop_replaced(b.dir, cs.current, m);
  return true;
}

}  // namespace

void compact_commit(scipis_build* b, scipis_build_stats* stats) {
  CompactState& cs = *b->compact;
  if (cs.beside) return beside_commit(b, stats);
  if (cs.renumber) return renumber_commit(b, stats);
  Manifest& m = b->next;
  const std::string& gen = b->cfg.gen_dir;
  const bool changed = cs.segments_merged > 0;
  if (changed && !commit_to_journal(*b)) {
    mkdir_p(gen);
    for (const DeferredPack& p : cs.packs) write_file_durable(p.path, p.bytes);
    if (!cs.dead.empty()) write_file_durable(gen + "/" + kDeletesFile, cs.dead);
    if (!cs.chains.empty()) write_file_durable(gen + "/" + kChainsFile, cs.chains);
    if (!cs.racy_list.empty()) write_file_durable(gen + "/" + kRacyFile, cs.racy_list);
    // Unchanged by a merge: linked, not written and synced again.
    cs.state.carry_list(kTermsFile, gen);
    cs.state.carry_list(kDirsFile, gen);
    // A full compaction rewrites every segment: one index over them again.
    if (cs.all) write_gen_paths(b->dir, gen, m);
    else copy_side_file(cs.current.gen_dir(b->dir), gen, kGenPathsFile);
    publish_generation(b->dir, gen, m, cs.current);
  } else {
    remove_tree(gen);
  }
  compact_stats(*b, changed ? m : cs.current, changed, stats);
}

void scipis::compact_stats(const scipis_build& b, const Manifest& now, bool merged,
                           scipis_build_stats* stats) {
  const CompactState& cs = *b.compact;
  *stats = scipis_build_stats{};
  stats->files = now.files;
  stats->bytes = now.bytes;
  stats->tokens = now.total_tokens;
  stats->terms = now.terms;
  stats->segments = now.segments.size();
  stats->index_bytes = now.index_bytes;
  stats->deleted_docs = now.deleted;
  stats->chain_links = now.chain_links;
  if (merged) {
    stats->segments_merged = cs.segments_merged;
    stats->docs_dropped = cs.docs_dropped;
    stats->chains_folded = cs.chains_folded;
  }
  stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - b.started).count();
}

std::unique_ptr<scipis_build> scipis::compaction_of(const std::string& dir, const scipis_options& opts) {
  CurrentState state = read_current(dir);
  auto b = std::make_unique<scipis_build>();
  b->dir = dir;
  b->compact = std::make_unique<CompactState>();
  CompactState& cs = *b->compact;
  cs.current = state.m;
  cs.state = std::move(state);
  fill_meta_bytes(dir, cs.current);
  b->cfg.opts = opts;
  resolve_threads(b->cfg.opts);
  return b;
}

extern "C" scipis_build* scipis_compact_start(const char* dir, const scipis_options* opts,
                                              int flags, scipis_error* err) {
  scipis_build* result = nullptr;
  guarded(err, [&] {
    if (scipis_options_check(opts, err) != 0) throw Error(err->code, err->message);
    const std::string d = dir;
    auto b = compaction_of(d, *opts);
    CompactState& cs = *b->compact;
    cs.all = (flags & SCIPIS_COMPACT_ALL) != 0;
    cs.beside = (flags & SCIPIS_COMPACT_BESIDE) != 0;
    if (cs.all && cs.beside) fail(SCIPIS_E_INVALID, "a merge of every segment cannot run beside refreshes");
    cs.settle = (flags & SCIPIS_COMPACT_SETTLE) != 0;
    if (cs.settle && !cs.beside) fail(SCIPIS_E_INVALID, "a merge of a build's segments runs beside refreshes");
    if (cs.beside) cs.max_bytes = kBesideMergeBytes;
    if (flags & SCIPIS_COMPACT_SMALL) cs.max_bytes = kSmallMergeBytes;
    if (cs.beside) {
      beside_prepare(b.get());
    } else {
      b->garbage = list_garbage(d, &cs.current, "", true, &b->next.generation);
      b->cfg.gen_dir = b->next.gen_dir(d);
    }
    // A merge makes its generation's directory once it knows it needs one.
    if (cs.beside) mkdir_p(b->cfg.gen_dir);
    launch_build(*b);
    result = b.release();
  });
  return result;
}

extern "C" int scipis_compact_busy(const char* dir) {
  try {
    return merge_stage_busy(std::string(dir) + "/" + kMergeStage) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

extern "C" int scipis_compact_needed(const char* dir, int flags) {
  try {
    std::optional<CurrentState> st = try_read_current(dir);
    if (!st) return 0;
    Manifest& m = st->m;
    fill_meta_bytes(dir, m);
    const uint64_t max_bytes = (flags & SCIPIS_COMPACT_SMALL)    ? kSmallMergeBytes
                               : (flags & SCIPIS_COMPACT_BESIDE) ? kBesideMergeBytes
                                                                 : kMaxAutoMergeBytes;
    const bool beside = (flags & SCIPIS_COMPACT_BESIDE) != 0;
    if (flags & SCIPIS_COMPACT_SETTLE) {
      for (size_t f : plan_settle(m, UINT64_MAX))
        if (f != SIZE_MAX) return 1;
      return 0;
    }
    for (size_t f : plan_merges(m, false, max_bytes, !beside, beside ? kBesideTierRatio : kTierRatio))
      if (f != SIZE_MAX) return 1;
    if (flags & SCIPIS_COMPACT_BESIDE) return 0;  // keeps every document
    // Garbage a merge may reclaim: compact_run's closer look, when the
    // manifest's counts say there may be any (a long chain rooted in a
    // segment beyond the merge's bound would else ask for a merge after
    // every append, which merged nothing).
    uint64_t docs = 0;
    for (const SegmentRef& s : m.segments) docs += s.docs;
    const uint64_t garbage = m.deleted + 2 * m.chain_links;
    if (garbage == 0 || garbage * kGarbageShareDenominator < docs) return 0;
    Collection c(dir, *st);
    CompactState cs;
    cs.max_bytes = max_bytes;
    for (size_t f : plan_compaction(c, m, cs))
      if (f != SIZE_MAX) return 1;
    return 0;
  } catch (...) {
    return 0;
  }
}
