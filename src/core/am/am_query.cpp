#include "am/am_query.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "absl/container/inlined_vector.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "am/seg_reader.h"
#include "query/score.h"
#include "util/error.h"

namespace scipis::am {

std::vector<std::unique_ptr<Source>> open_view(const scipis_am_view& view,
                                               const scipis_am_reader& rd) {
  std::vector<std::unique_ptr<Source>> out;
  for (int i = 0; i < view.nsegs; i++) out.push_back(std::make_unique<PagedSegment>(rd, view.segs[i]));
  if (view.npending > 0) {
    auto mem = std::make_unique<MemIndex>();
    for (uint64_t i = 0; i < view.npending; i++)
      mem->add_entry(std::string_view(reinterpret_cast<const char*>(view.pending[i]), view.pending_len[i]));
    out.push_back(std::move(mem));
  }
  return out;
}

std::vector<uint64_t> filtered_tids(const scipis_am_view& view, const scipis_am_reader& rd,
                                    const Filters& fs) {
  std::vector<uint64_t> out;
  for (auto& src : open_view(view, rd)) {
    Source& s = *src;
    check_filters(s, fs, "index");
    const uint64_t n = s.stats().ndocs;
    for (uint64_t lo = 0; lo < n; lo += kValGroup) {
      const uint32_t hi = static_cast<uint32_t>(std::min<uint64_t>(n, lo + kValGroup) - 1);
      if (!s.may_pass(static_cast<uint32_t>(lo), hi, fs)) continue;
      for (uint64_t o = lo; o <= hi; o++)
        if (s.passes(static_cast<uint32_t>(o), fs)) out.push_back(s.tid(static_cast<uint32_t>(o)));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void AmQuery::add_filter(const Filter& f) {
  if (ranked_) fail(SCIPIS_E_INTERNAL, "a filter added to a query already ranking");
  filters_.push_back(f);
}

AmQuery::AmQuery(const unsigned char delimiter[256], std::string_view query, scipis_ranking ranking,
                 scipis_match match)
    : tok_(delimiter), terms_(parse_query(tok_, query)), ranking_(ranking), match_(match) {
  if (terms_.empty()) fail(SCIPIS_E_INVALID, "the query has no terms");
}

namespace {

// The best k of T after a cursor, in the order first(a, b) defines; its
// top is the worst kept.
template <typename T, typename First>
class BestAfter {
 public:
  BestAfter(First first, uint64_t k, bool has_after, const T& after)
      : first_(first), heap_(first), k_(k), has_after_(has_after), after_(after) {}
  // The k-th best so far, when there are k.
  const T* kth() const { return heap_.size() == k_ ? &heap_.top() : nullptr; }
  // False when h is not after the cursor.
  bool offer(const T& h) {
    if (has_after_ && !first_(after_, h)) return false;
    if (heap_.size() < k_) {
      heap_.push(h);
    } else if (first_(h, heap_.top())) {
      heap_.pop();
      heap_.push(h);
    }
    return true;
  }
  template <typename Out, typename As>
  void drain(std::vector<Out>& out, As as) {
    for (; !heap_.empty(); heap_.pop()) out.push_back(as(heap_.top()));
    std::reverse(out.begin(), out.end());
  }
  const First& first() const { return first_; }

 private:
  First first_;
  std::priority_queue<T, std::vector<T>, First> heap_;
  uint64_t k_;
  bool has_after_;
  T after_;
};

// A ranked candidate: a hit and where its row is, so that a tie at the
// k-th score within a segment whose identifiers ascend with ordinals is
// settled without reading the identifier.
// Its identifier is read when a tie asks for it (kNoTid until then): rows
// of one segment whose identifiers ascend with ordinals settle ties by
// ordinal, and a frequent term's best block holds many equal scores.
constexpr uint64_t kNoTid = UINT64_MAX;
struct Cand {
  mutable scipis_am_hit h;
  uint32_t src, ord;
};
// The sources' rows, for the identifiers of candidates.
struct CandSources {
  std::vector<Source*> src;
  std::vector<char> ascend;
};
// Best first: score descending, then identifier ascending.
struct CandFirst {
  const CandSources* cs;
  uint64_t tid(const Cand& c) const {
    if (c.h.tid == kNoTid) c.h.tid = cs->src[c.src]->tid(c.ord);
    return c.h.tid;
  }
  bool operator()(const Cand& a, const Cand& b) const {
    if (a.h.score != b.h.score) return a.h.score > b.h.score;
    if (a.src == b.src && a.src < cs->src.size() && cs->ascend[a.src]) return a.ord < b.ord;
    return tid(a) < tid(b);
  }
};
scipis_am_hit same_hit(const scipis_am_hit& h) { return h; }

}  // namespace

void AmQuery::adopt(AmQuery& from, bool take_opened) {
  if (!from.prepared_ || from.terms_.size() != terms_.size() || from.ranking_ != ranking_)
    fail(SCIPIS_E_INTERNAL, "query statistics taken from another query");
  for (size_t t = 0; t < terms_.size(); t++)
    if (from.terms_[t].term != terms_[t].term || from.terms_[t].qf != terms_[t].qf)
      fail(SCIPIS_E_INTERNAL, "query statistics taken from another query");
  avgdl_ = from.avgdl_;
  n_ = from.n_;
  df_ = from.df_;
  idf_ = from.idf_;
  if (take_opened && from.opened_ && !opened_) opened_ = std::move(from.opened_);
  prepared_ = true;
}

double AmQuery::selectivity() const {
  if (!prepared_ || n_ <= 0) return 0;
  double all = 1, none = 1;
  for (double df : df_) {
    const double p = std::min(1.0, df / n_);
    all *= p;
    none *= 1 - p;
  }
  return match_ == SCIPIS_MATCH_ALL ? all : 1 - none;
}

template <typename F>
void AmQuery::each_match(Source& src, bool want_scores, F&& f) {
  const size_t nt = terms_.size();
  check_filters(src, filters_, "index");
  std::vector<TermPostings> post(nt);
  for (size_t t = 0; t < nt; t++)
    if (!src.find(terms_[t].term, post[t], true)) {
      if (match_ == SCIPIS_MATCH_ALL) return;
    }
  // Smallest (ordinal, term) first: a row's terms come out together and
  // in query order, so its score is summed in that order.
  std::vector<size_t> pos(nt, 0);
  using Next = std::pair<uint32_t, size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next;
  for (size_t t = 0; t < nt; t++)
    if (!post[t].ords.empty()) next.push({post[t].ords[0], t});
  while (!next.empty()) {
    const uint32_t ord = next.top().first;
    double len = 0;
    if (want_scores) {
      const uint32_t l = src.len(ord);
      if (l == kLenNull || l == 0) fail_corrupt("index", "a row without tokens holds a term");
      len = l;
    }
    double score = 0;
    size_t matched = 0;
    while (!next.empty() && next.top().first == ord) {
      const size_t t = next.top().second;
      next.pop();
      const double tf = post[t].tfs[pos[t]];
      if (++pos[t] < post[t].ords.size()) next.push({post[t].ords[pos[t]], t});
      matched++;
      if (want_scores) score += term_score(ranking_, terms_[t].qf, idf_[t], tf, len, avgdl_);
    }
    if (match_ == SCIPIS_MATCH_ALL && matched < nt) continue;
    if (!filters_.empty() && !src.passes(ord, filters_)) continue;
    f(ord, score);
  }
}

// Block-max over ranges of ordinals: the blocks of the query's terms cut
// the ordinals into ranges covered by the same blocks, each bounded by the
// sum of their blocks' bounds. Ranges go best bound first and stop once
// the k-th score so far beats the next bound, so blocks that cannot reach
// the top k are never decoded, nor their rows' lengths read.
//
// The next round of a scan resumes: while the view is the one the last
// round read, its ranges already scored are not scored again (their rows
// wait in the pool) and the others are taken up where they were left, so
// that an ORDER BY whose filter rejects most rows costs about one pass
// over what it needs, not a pass per round.
struct AmQuery::Range {
  uint32_t lo, hi;  // ordinals, both in the range
  double bound;
  uint32_t act, nact;  // into acts
  // Into acts too: rows holding one of these terms were scored already
  // (what MaxScore left of a range: its rows of non-essential terms only).
  uint32_t excl = 0, nexcl = 0;
};

// A range's place in a source's heap of ranges.
struct AmQuery::RangeKey {
  double bound;
  uint32_t lo, at;  // at: its slot in ranges
};

struct AmQuery::Act {
  uint32_t t, b;
  double bound;
};

struct AmQuery::SourceState {
  std::unique_ptr<Source> src;
  std::vector<TermBlocks> tb;
  std::vector<Act> acts;
  std::vector<Range> ranges;
  // The ranges not taken yet, best first: a heap of small keys (a frequent
  // term's tens of thousands of ranges, sifted at every pop, missed the
  // caches at 32 bytes a range). A taken range's slot is reused.
  std::vector<RangeKey> heap;
  void make_heap();
  // A one-term scan's blocks are its ranges, made a batch at a time, best
  // first: most scans stop within the first, and a frequent term has
  // thousands of blocks. Blocks after (cut_bound, cut_b) in range order
  // are not made yet. Bounds are computed as blocks are picked, not kept
  // per block: an array of them, zeroed and faulted in afresh by every
  // query, cost as much as the picking.
  double cut_bound = kInfScore;
  size_t cut_b = 0, batch = 32;
  bool cut = false, more = false;
  std::vector<std::pair<double, size_t>> picked;  // next_blocks' heap
  bool tids_ascend = false;
  // Blocks decoded so far, their postings in an arena of chunks (the
  // pointers stay valid as blocks are added; freed at once).
  absl::flat_hash_map<uint64_t, Decoded> decoded;
  std::vector<uint32_t> cand, ctf, lens;  // score_ranges' scratch
  std::vector<char> keep;
  std::vector<std::unique_ptr<uint32_t[]>> arena;
  uint32_t* arena_at = nullptr;
  size_t arena_left = 0;
  uint32_t* alloc(size_t n) {
    if (n > arena_left) {
      // Chunks grow from 16 KiB to 128 KiB: most scans decode a few small
      // blocks, and an allocation past malloc's trim threshold is given
      // back to the kernel at every query's end, to fault in again.
      const size_t c = std::max<size_t>(n, size_t{1} << std::min<size_t>(12 + arena.size(), 15));
      arena.push_back(std::make_unique_for_overwrite<uint32_t[]>(c));
      arena_at = arena.back().get();
      arena_left = c;
    }
    uint32_t* p = arena_at;
    arena_at += n;
    arena_left -= n;
    return p;
  }
};

// A scored row. Its identifier is read only when the row could enter the
// top k (a tie at the k-th score included): most scored rows fall short,
// and their identifiers lie far apart in the segment.
struct AmQuery::Pooled {
  double score;
  uint32_t src, ord;
};

struct AmQuery::RankedState {
  uint64_t view_sig = 0;
  bool has_cursor = false;  // the last round's cursor: rounds only move on
  scipis_am_hit cursor{};
  std::vector<SourceState> srcs;
  std::vector<Pooled> pool;  // every row scored so far, after the last cursor

  scipis_am_hit hit(const Pooled& p) { return scipis_am_hit{srcs[p.src].src->tid(p.ord), p.score, 0}; }
};

AmQuery::~AmQuery() = default;


namespace {


// Orders the ranges' heap: best bound first, then by ordinal.
struct LaterKey {
  bool operator()(const AmQuery::RangeKey& a, const AmQuery::RangeKey& b) const {
    if (a.bound != b.bound) return a.bound < b.bound;
    return a.lo > b.lo;
  }
};
constexpr LaterKey later_key;

}  // namespace

void AmQuery::SourceState::make_heap() {
  if (ranges.size() > UINT32_MAX) fail(SCIPIS_E_INTERNAL, "too many ranges in one query");
  heap.resize(ranges.size());
  for (size_t i = 0; i < ranges.size(); i++) heap[i] = RangeKey{ranges[i].bound, ranges[i].lo, static_cast<uint32_t>(i)};
  std::make_heap(heap.begin(), heap.end(), later_key);
}

namespace {

// A term of at most this many blocks cuts a query's ranges by its rows.
constexpr size_t kPointBlocks = 4;

// An index into acts (ranges hold 32-bit ones).
uint32_t act_index(size_t n) {
  if (n > UINT32_MAX) fail(SCIPIS_E_INTERNAL, "too many blocks in one query");
  return static_cast<uint32_t>(n);
}

bool better_hit(const scipis_am_hit& a, const scipis_am_hit& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.tid < b.tid;
}

// The segments and pending entries of a view, as a hash: a round resumes
// only when the view is the same.
uint64_t view_signature(const scipis_am_view& view) {
  uint64_t h = absl::HashOf(view.nsegs, view.npending);
  for (int i = 0; i < view.nsegs; i++) {
    const scipis_am_segment& g = view.segs[i];
    h = absl::HashOf(h, g.id, g.start, g.npages, g.bytes);
  }
  for (uint64_t i = 0; i < view.npending; i++)
    h = absl::HashOf(h, std::string_view(reinterpret_cast<const char*>(view.pending[i]), view.pending_len[i]));
  return h;
}

}  // namespace

void AmQuery::prepare(const scipis_am_view& view, const scipis_am_reader& rd, bool keep) {
  if (prepared_) return;
  double N = 0, tokens = 0;
  std::vector<double> df(terms_.size(), 0);
  if (keep) {
    // A scan's first round reads the same terms of the same view: the
    // sources and their terms' blocks wait for it.
    opened_ = open_sources(view, rd);
    for (auto& ss : opened_->srcs) {
      N += static_cast<double>(ss.src->stats().counted);
      tokens += static_cast<double>(ss.src->stats().tokens);
      for (size_t t = 0; t < terms_.size(); t++) df[t] += static_cast<double>(ss.tb[t].df);
    }
  } else {
    TermPostings p;
    for (auto& s : open_view(view, rd)) {
      N += static_cast<double>(s->stats().counted);
      tokens += static_cast<double>(s->stats().tokens);
      for (size_t t = 0; t < terms_.size(); t++)
        if (s->find(terms_[t].term, p, false)) df[t] += static_cast<double>(p.df);
    }
  }
  avgdl_ = N > 0 ? tokens / N : 0;
  n_ = N;
  df_ = df;
  idf_.resize(terms_.size());
  for (size_t t = 0; t < terms_.size(); t++) idf_[t] = term_idf(ranking_, N, df[t]);
  prepared_ = true;
}

std::unique_ptr<AmQuery::RankedState> AmQuery::open_sources(const scipis_am_view& view,
                                                            const scipis_am_reader& rd) {
  auto st = std::make_unique<RankedState>();
  st->view_sig = view_signature(view);
  for (auto& src : open_view(view, rd)) {
    SourceState ss;
    ss.src = std::move(src);
    ss.tb.resize(terms_.size());
    for (size_t t = 0; t < terms_.size(); t++) ss.src->find_blocks(terms_[t].term, ss.tb[t]);
    st->srcs.push_back(std::move(ss));
  }
  return st;
}

void AmQuery::open_ranked(const scipis_am_view& view, const scipis_am_reader& rd) {
  std::unique_ptr<RankedState> opened = std::move(opened_);
  if (opened && opened->view_sig == view_signature(view)) {
    for (SourceState& ss : opened->srcs) ss.src->rebind(rd);
  } else {
    opened = open_sources(view, rd);
  }
  auto st = std::make_unique<RankedState>();
  st->view_sig = opened->view_sig;
  const size_t nt = terms_.size();
  for (SourceState& ss : opened->srcs) {
    Source& s = *ss.src;
    size_t present = 0;
    for (size_t t = 0; t < nt; t++) present += ss.tb[t].df > 0 ? 1 : 0;
    if (present == 0 || (match_ == SCIPIS_MATCH_ALL && present < nt)) continue;
    check_filters(s, filters_, "index");
    add_ranges(ss);
    // Best bound first, then by ordinal; a heap, as most queries stop
    // after a few of the ranges.
    ss.make_heap();
    ss.tids_ascend = s.tids_ascend();
    st->srcs.push_back(std::move(ss));
  }
  ranked_ = std::move(st);
}

// A source's ranges: cut by every term's block boundaries, each bounded by
// the sum of the bounds of the blocks covering it.
void AmQuery::add_ranges(SourceState& ss) {
  const size_t nt = terms_.size();
  const auto& tb = ss.tb;
  if (nt == 1) {
    // One term: its blocks are the ranges (they cover the ordinals end to
    // end), with no merge of boundaries to make.
    ss.more = tb[0].count() > 0;
    next_blocks(ss);
    return;
  }
  // A term of a few blocks covers, as blocks do, every ordinal up to its
  // last row, and its bound (infinite for a block of a rare term, which
  // keeps no maximum) would keep every range of the other terms' blocks
  // from being skipped. Its rows cut the ranges instead: a range holds the
  // term only where one of its rows is.
  std::vector<std::vector<uint32_t>> points(nt), point_block(nt);
  for (size_t t = 0; t < nt; t++) {
    if (tb[t].df == 0 || tb[t].count() > kPointBlocks) continue;
    for (size_t b = 0; b < tb[t].count(); b++) {
      const Decoded d = decoded_block(ss, Act{static_cast<uint32_t>(t), static_cast<uint32_t>(b), 0});
      points[t].insert(points[t].end(), d.ords, d.ords + d.n);
      point_block[t].insert(point_block[t].end(), d.n, static_cast<uint32_t>(b));
    }
  }
  // Every block's first ordinal and one past its last (every row's, for a
  // term cut by its rows), merged in order.
  std::vector<uint64_t> pts, term_pts;
  for (size_t t = 0; t < nt; t++) {
    term_pts.clear();
    for (uint32_t o : points[t]) {
      term_pts.push_back(o);
      term_pts.push_back(static_cast<uint64_t>(o) + 1);
    }
    for (size_t b = 0; points[t].empty() && tb[t].df > 0 && b < tb[t].count(); b++) {
      if (b == 0 || tb[t].first(b) != tb[t].last(b - 1) + 1) term_pts.push_back(tb[t].first(b));
      term_pts.push_back(static_cast<uint64_t>(tb[t].last(b)) + 1);
    }
    const size_t mid = pts.size();
    pts.insert(pts.end(), term_pts.begin(), term_pts.end());
    std::inplace_merge(pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(mid), pts.end());
  }
  pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
  std::vector<size_t> cur(nt, 0), at(nt, 0);
  ss.ranges.reserve(pts.size());
  ss.acts.reserve(pts.size() * nt);
  for (size_t i = 0; i + 1 < pts.size(); i++) {
    const uint64_t lo = pts[i], hi = pts[i + 1] - 1;
    const uint32_t act = act_index(ss.acts.size());
    double sum = 0;
    for (size_t t = 0; t < nt; t++) {
      if (tb[t].df == 0) continue;
      size_t b;
      if (!points[t].empty()) {
        const auto& pt = points[t];
        while (at[t] < pt.size() && pt[at[t]] < lo) at[t]++;
        if (at[t] >= pt.size() || pt[at[t]] > hi) continue;
        b = point_block[t][at[t]];
      } else {
        while (cur[t] < tb[t].count() && tb[t].last(cur[t]) < lo) cur[t]++;
        if (cur[t] >= tb[t].count() || tb[t].first(cur[t]) > lo) continue;
        b = cur[t];
      }
      const double bound = block_bound(ss, t, b);
      sum += bound;
      ss.acts.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(b), bound});
    }
    const uint32_t nact = act_index(ss.acts.size()) - act;
    if (nact == 0 || (match_ == SCIPIS_MATCH_ALL && nact < nt)) {
      ss.acts.resize(act);
      continue;
    }
    // Built in place: a range assembled on the stack and copied costs a
    // stalled load per range (thousands for a frequent term).
    ss.ranges.emplace_back(Range{static_cast<uint32_t>(lo), static_cast<uint32_t>(hi), sum, act, nact});
  }
}

// The most a row of term t's block b can score (infinite when the block
// keeps no maximum).
double AmQuery::block_bound(const SourceState& ss, size_t t, size_t b) const {
  const BlockInfo* info = ss.tb[t].info(b);
  return info ? scorers_[t].bound(*info) : kInfScore;
}

// A one-term scan's next batch of blocks, best first after the cut, as
// ranges (the heap is empty when it is asked).
void AmQuery::next_blocks(SourceState& ss) {
  const TermBlocks& tb = ss.tb[0];
  const size_t nb = tb.count(), m = ss.batch;
  ss.batch *= 2;
  using Picked = std::pair<double, size_t>;  // bound, block
  // a after b in range order: a smaller bound, or the same and later.
  auto later = [](const Picked& a, const Picked& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  };
  // The m best blocks after the cut: a heap whose top is the worst kept.
  auto worse_first = [&](const Picked& a, const Picked& b) { return later(b, a); };
  std::vector<Picked>& keep = ss.picked;
  const bool filtered = !filters_.empty();
  keep.clear();
  keep.reserve(m);
  for (size_t b = 0; b < nb; b++) {
    const Picked x{block_bound(ss, 0, b), b};
    if (ss.cut && !(x.first < ss.cut_bound || (x.first == ss.cut_bound && b > ss.cut_b))) continue;
    const bool kept = keep.size() < m || later(keep.front(), x);
    // A block whose rows all fail the filters is never picked: a window
    // over ordered values would otherwise fill batches with blocks outside.
    if (!kept || (filtered && !ss.src->may_pass(tb.first(b), tb.last(b), filters_))) continue;
    if (keep.size() < m) {
      keep.push_back(x);
      std::push_heap(keep.begin(), keep.end(), worse_first);
    } else {
      std::pop_heap(keep.begin(), keep.end(), worse_first);
      keep.back() = x;
      std::push_heap(keep.begin(), keep.end(), worse_first);
    }
  }
  ss.more = keep.size() == m;
  ss.ranges.clear();
  if (!keep.empty()) {
    ss.cut = true;
    ss.cut_bound = keep.front().first;
    ss.cut_b = keep.front().second;
  }
  for (const auto& [bound, b] : keep) {
    const uint32_t act = act_index(ss.acts.size());
    ss.acts.push_back({0, static_cast<uint32_t>(b), bound});
    ss.ranges.emplace_back(Range{tb.first(b), tb.last(b), bound, act, 1});
  }
}

AmQuery::Decoded AmQuery::decoded_block(SourceState& ss, const Act& act) {
  const uint64_t key = (static_cast<uint64_t>(act.t) << 32) | act.b;
  auto it = ss.decoded.find(key);
  if (it != ss.decoded.end()) return it->second;
  const TermBlocks& tb = ss.tb[act.t];
  const size_t n = tb.postings(act.b);
  uint32_t* o = ss.alloc(2 * n);
  tb.decode(act.b, o, o + n);
  const Decoded d{o, o + n, n};
  ss.decoded.emplace(key, d);
  return d;
}

template <typename Best>
void AmQuery::score_ranges(RankedState& st, uint32_t si, Best& best) {
  SourceState& ss = st.srcs[si];
  const size_t nt = terms_.size();
  const bool exact = exact_bounds(ranking_);
  Source& s = *ss.src;
  for (;;) {
    if (ss.heap.empty()) {
      if (!ss.more) break;
      next_blocks(ss);
      ss.make_heap();
      if (ss.heap.empty()) break;
    }
    const RangeKey& top = ss.heap.front();
    if (const Cand* kc = best.kth()) {
      const scipis_am_hit* kth = &kc->h;
      if (top.bound * kBoundMargin < kth->score) break;
      // An exact bound no higher than the k-th score: a row of this range
      // could only tie it, and wins a tie only with a smaller identifier.
      // Ranges of that bound come by ordinal; with identifiers ascending
      // by ordinal, no later one can either.
      if (exact && ss.tids_ascend && top.bound <= kth->score &&
          (kc->src == si ? top.lo > kc->ord : s.tid(static_cast<uint32_t>(top.lo)) > best.first().tid(*kc)))
        break;
    }
    std::pop_heap(ss.heap.begin(), ss.heap.end(), later_key);
    const uint32_t slot = ss.heap.back().at;
    ss.heap.pop_back();
    const Range r = ss.ranges[slot];
    // No row of the range passes the filters: nothing to decode.
    if (!filters_.empty() && !s.may_pass(r.lo, r.hi, filters_)) continue;
    // The range's postings per active (then excluded) term, decoded once
    // per block and only when needed: most ranges a MaxScore pass walks
    // hold no row of the term that draws, and decode nothing else.
    const size_t nall = r.nact + r.nexcl;
    absl::InlinedVector<const uint32_t*, 8> ords(nall, nullptr), tfs(nall, nullptr);
    absl::InlinedVector<size_t, 8> pos(nall), end_at(nall);
    auto ensure = [&](size_t a) {
      if (ords[a]) return;
      const Decoded blk = decoded_block(ss, a < r.nact ? ss.acts[r.act + a] : ss.acts[r.excl + a - r.nact]);
      const uint32_t* o = blk.ords;
      ords[a] = o;
      tfs[a] = blk.tfs;
      pos[a] = static_cast<size_t>(std::lower_bound(o, o + blk.n, static_cast<uint32_t>(r.lo)) - o);
      end_at[a] = static_cast<size_t>(std::upper_bound(o, o + blk.n, static_cast<uint32_t>(r.hi)) - o);
    };
    // MaxScore within the range: rows are drawn from the essential terms'
    // postings only; the others are looked up for each such row. Under
    // `all` one term (the rarest) draws, as every row needs all. Under
    // `any` the terms of the smallest bounds are non-essential when those
    // bounds, summed in query order as a score is, stay below the k-th
    // score: a row holding only them cannot enter.
    absl::InlinedVector<char, 8> essential(r.nact, 1);
    if (match_ == SCIPIS_MATCH_ALL) {
      size_t driver = 0;
      for (size_t a = 1; a < r.nact; a++)
        if (ss.tb[ss.acts[r.act + a].t].df < ss.tb[ss.acts[r.act + driver].t].df) driver = a;
      for (size_t a = 0; a < r.nact; a++) essential[a] = a == driver;
    } else if (const scipis_am_hit* kth = best.kth() ? &best.kth()->h : nullptr; kth && r.nact > 1) {
      // By bound, ties in query order: an insertion sort of a few terms
      // (stable_sort took a buffer from the heap for every range).
      absl::InlinedVector<size_t, 8> by_bound(r.nact);
      for (size_t a = 0; a < r.nact; a++) {
        size_t at = a;
        while (at > 0 && ss.acts[r.act + a].bound < ss.acts[r.act + by_bound[at - 1]].bound) {
          by_bound[at] = by_bound[at - 1];
          at--;
        }
        by_bound[at] = a;
      }
      absl::InlinedVector<char, 8> trial(r.nact, 1);
      double rest_bound = 0;
      for (size_t m = 0; m + 1 < r.nact; m++) {
        trial[by_bound[m]] = 0;
        double sum = 0;
        for (size_t a = 0; a < r.nact; a++)
          if (!trial[a]) sum += ss.acts[r.act + a].bound;
        if (!(exact ? sum < kth->score : sum * kBoundMargin < kth->score)) break;
        essential = trial;
        rest_bound = sum;
      }
      if (std::count(essential.begin(), essential.end(), 0) > 0) {
        // A later round may want the rows skipped here: what is left of the
        // range goes back, bounded by the non-essential terms alone.
        Range rest{r.lo, r.hi, rest_bound, act_index(ss.acts.size()), 0, 0, 0};
        for (size_t a = 0; a < r.nact; a++)
          if (!essential[a]) {
            ss.acts.push_back(ss.acts[r.act + a]);
            rest.nact++;
          }
        rest.excl = act_index(ss.acts.size());
        for (size_t a = 0; a < r.nexcl; a++) ss.acts.push_back(ss.acts[r.excl + a]);
        for (size_t a = 0; a < r.nact; a++)
          if (essential[a]) ss.acts.push_back(ss.acts[r.act + a]);
        rest.nexcl = act_index(ss.acts.size()) - rest.excl;
        ss.ranges[slot] = rest;
        ss.heap.push_back({rest.bound, rest.lo, slot});
        std::push_heap(ss.heap.begin(), ss.heap.end(), later_key);
      }
    }
    // The range's rows, a column at a time: drawn from the essential
    // terms' postings (merged), minus those an excluded term holds, with
    // the other terms' tfs filled in by merging their postings too; then
    // their lengths and scores in a run.
    std::vector<uint32_t>& cand = ss.cand;
    std::vector<uint32_t>& ctf = ss.ctf;  // row i, active a at i * nact + a
    const size_t na = r.nact;
    cand.clear();
    ctf.clear();
    absl::InlinedVector<size_t, 8> ess;
    for (size_t a = 0; a < na; a++)
      if (essential[a]) {
        ensure(a);
        if (pos[a] < end_at[a]) ess.push_back(a);
      }
    if (ess.size() == 1) {
      const size_t a = ess[0];
      cand.assign(ords[a] + pos[a], ords[a] + end_at[a]);
      ctf.assign(cand.size() * na, 0);
      for (size_t i = 0; i < cand.size(); i++) ctf[i * na + a] = tfs[a][pos[a] + i];
    } else {
      while (!ess.empty()) {
        uint32_t ord = UINT32_MAX;
        for (size_t e : ess) ord = std::min(ord, ords[e][pos[e]]);
        const size_t row = cand.size();
        cand.push_back(ord);
        ctf.resize(ctf.size() + na, 0);
        for (size_t i = 0; i < ess.size();) {
          const size_t e = ess[i];
          if (ords[e][pos[e]] == ord) {
            ctf[row * na + e] = tfs[e][pos[e]];
            if (++pos[e] == end_at[e]) {
              ess.erase(ess.begin() + static_cast<std::ptrdiff_t>(i));
              continue;
            }
          }
          i++;
        }
      }
    }
    if (cand.empty()) continue;
    // Rows an excluded term holds were scored with it before.
    std::vector<char>& keep = ss.keep;
    keep.assign(cand.size(), 1);
    for (size_t x = na; x < nall; x++) {
      ensure(x);
      const uint32_t* o = ords[x];
      size_t j = pos[x];
      for (size_t i = 0; i < cand.size() && j < end_at[x]; i++) {
        while (j < end_at[x] && o[j] < cand[i]) j++;
        if (j < end_at[x] && o[j] == cand[i]) keep[i] = 0;
      }
    }
    for (size_t a = 0; a < na; a++) {
      if (essential[a]) continue;
      ensure(a);
      const uint32_t* o = ords[a];
      size_t j = pos[a];
      for (size_t i = 0; i < cand.size() && j < end_at[a]; i++) {
        while (j < end_at[a] && o[j] < cand[i]) j++;
        if (j < end_at[a] && o[j] == cand[i]) ctf[i * na + a] = tfs[a][j];
      }
    }
    // Survivors, compacted.
    size_t m = 0;
    if (!filters_.empty()) s.filter(cand.data(), cand.size(), filters_, keep.data());
    for (size_t i = 0; i < cand.size(); i++) {
      if (!keep[i]) continue;
      if (match_ == SCIPIS_MATCH_ALL) {
        size_t matched = 0;
        for (size_t a = 0; a < na; a++) matched += ctf[i * na + a] > 0;
        if (matched < nt) continue;
      }
      if (m != i) {
        cand[m] = cand[i];
        std::copy(ctf.begin() + static_cast<std::ptrdiff_t>(i * na),
                  ctf.begin() + static_cast<std::ptrdiff_t>((i + 1) * na), ctf.begin() + static_cast<std::ptrdiff_t>(m * na));
      }
      m++;
    }
    std::vector<uint32_t>& lens = ss.lens;
    lens.resize(m);
    s.lens(cand.data(), m, lens.data());
    absl::InlinedVector<const Scorer*, 8> sc(na);
    for (size_t a = 0; a < na; a++) sc[a] = &scorers_[ss.acts[r.act + a].t];
    for (size_t i = 0; i < m; i++) {
      if (lens[i] == kLenNull || lens[i] == 0) fail_corrupt("index", "a row without tokens holds a term");
      // Actives are in term order, so a row's score sums in query order.
      double score = 0;
      for (size_t a = 0; a < na; a++)
        if (const uint32_t f = ctf[i * na + a]) score += sc[a]->counts(f, lens[i]);
      const Pooled p{score, si, cand[i]};
      if (const Cand* kth = best.kth()) {
        // Below the k-th score the row is also after the cursor (the k-th
        // is); so is a row tying it later in the same segment.
        if (score < kth->h.score ||
            (score == kth->h.score && kth->src == si && ss.tids_ascend && p.ord > kth->ord)) {
          st.pool.push_back(p);
          continue;
        }
      }
      if (!best.offer(Cand{scipis_am_hit{kNoTid, score, 0}, si, p.ord})) continue;
      st.pool.push_back(p);
    }
  }
}

void AmQuery::ranked(const scipis_am_view& view, const scipis_am_reader& rd, uint64_t k,
                     bool has_after, double after_score, uint64_t after_tid) {
  prepare(view, rd);
  hits.clear();
  if (k == 0) return;
  if (scorers_.empty())
    for (size_t t = 0; t < terms_.size(); t++)
      scorers_.push_back(Scorer{ranking_, idf_[t], static_cast<double>(terms_[t].qf), avgdl_});
  const scipis_am_hit cursor{after_tid, after_score, 0};
  const bool moved_on = ranked_ && (!ranked_->has_cursor || (has_after && !better_hit(cursor, ranked_->cursor)));
  if (!moved_on || ranked_->view_sig != view_signature(view)) {
    ranked_.reset();
    open_ranked(view, rd);
  } else {
    for (SourceState& ss : ranked_->srcs) ss.src->rebind(rd);
  }
  ranked_->has_cursor = has_after;
  ranked_->cursor = cursor;
  CandSources cs;
  for (SourceState& ss : ranked_->srcs) {
    cs.src.push_back(ss.src.get());
    cs.ascend.push_back(ss.tids_ascend ? 1 : 0);
  }
  const CandFirst order{&cs};
  BestAfter<Cand, CandFirst> best(order, k, has_after,
                                                           Cand{cursor, UINT32_MAX, UINT32_MAX});
  // Rows the last rounds scored: those not yet returned compete again.
  RankedState& st = *ranked_;
  size_t kept = 0;
  for (Pooled& p : st.pool) {
    if (has_after && (p.score > cursor.score || (p.score == cursor.score && !better_hit(cursor, st.hit(p)))))
      continue;
    st.pool[kept++] = p;
    const Cand* kth = best.kth();
    if (!(kth && p.score < kth->h.score)) best.offer(Cand{scipis_am_hit{kNoTid, p.score, 0}, p.src, p.ord});
  }
  st.pool.resize(kept);
  for (uint32_t i = 0; i < st.srcs.size(); i++) score_ranges(st, i, best);
  best.drain(hits, [&](const Cand& c) { return scipis_am_hit{order.tid(c), c.h.score, 0}; });
}

void AmQuery::rest(const scipis_am_view& view, const scipis_am_reader& rd, uint64_t k,
                   bool has_after, bool after_null, uint64_t after_tid) {
  hits.clear();
  auto before = [](const scipis_am_hit& a, const scipis_am_hit& b) {
    if (a.is_null != b.is_null) return a.is_null < b.is_null;
    return a.tid < b.tid;
  };
  BestAfter<scipis_am_hit, decltype(before)> best(before, k, has_after,
                                                 scipis_am_hit{after_tid, 0, after_null ? 1 : 0});
  for (auto& src : open_view(view, rd)) {
    Source& s = *src;
    const uint64_t n = s.stats().ndocs;
    std::vector<bool> hit(n, false);
    each_match(s, false, [&](uint32_t ord, double) { hit[ord] = true; });
    for (uint64_t ord = 0; ord < n; ord++) {
      if (hit[ord]) continue;
      if (!filters_.empty() && !s.passes(static_cast<uint32_t>(ord), filters_)) continue;
      const DocEntry d = s.doc(static_cast<uint32_t>(ord));
      best.offer(scipis_am_hit{d.tid, 0, d.len == kLenNull ? 1 : 0});
    }
  }
  best.drain(hits, same_hit);
}

void AmQuery::matches(const scipis_am_view& view, const scipis_am_reader& rd) {
  tids.clear();
  for (auto& src : open_view(view, rd)) {
    Source& s = *src;
    each_match(s, false, [&](uint32_t ord, double) { tids.push_back(s.tid(ord)); });
  }
  std::sort(tids.begin(), tids.end());
}

void AmQuery::value(const char* text, size_t len, bool& matched, double& score) {
  scratch_.assign(text, len);
  std::vector<uint32_t> tf(terms_.size(), 0);
  uint64_t tokens = 0;
  tok_.tokenize_in_place(reinterpret_cast<unsigned char*>(scratch_.data()), scratch_.size(),
                         [&](const char* s, size_t n) {
                           tokens++;
                           const std::string_view t(s, n);
                           for (size_t i = 0; i < terms_.size(); i++)
                             if (terms_[i].term == t) tf[i]++;
                         });
  size_t have = 0;
  for (uint32_t v : tf) have += v > 0;
  matched = match_ == SCIPIS_MATCH_ALL ? have == terms_.size() : have > 0;
  score = 0;
  if (!matched || !prepared_) return;
  for (size_t t = 0; t < terms_.size(); t++)
    if (tf[t] > 0)
      score += term_score(ranking_, terms_[t].qf, idf_[t], tf[t], static_cast<double>(tokens), avgdl_);
}

}  // namespace scipis::am
