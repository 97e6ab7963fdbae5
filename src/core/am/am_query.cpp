#include "am/am_query.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "absl/container/node_hash_map.h"
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

AmQuery::AmQuery(const unsigned char delimiter[256], std::string_view query, scipis_ranking ranking,
                 scipis_match match)
    : tok_(delimiter), terms_(parse_query(tok_, query)), ranking_(ranking), match_(match) {
  if (terms_.empty()) fail(SCIPIS_E_INVALID, "the query has no terms");
}

void AmQuery::prepare(const scipis_am_view& view, const scipis_am_reader& rd) {
  if (prepared_) return;
  auto sources = open_view(view, rd);
  double N = 0, tokens = 0;
  std::vector<double> df(terms_.size(), 0);
  TermPostings p;
  for (auto& s : sources) {
    N += static_cast<double>(s->stats().counted);
    tokens += static_cast<double>(s->stats().tokens);
    for (size_t t = 0; t < terms_.size(); t++)
      if (s->find(terms_[t].term, p, false)) df[t] += static_cast<double>(p.df);
  }
  avgdl_ = N > 0 ? tokens / N : 0;
  idf_.resize(terms_.size());
  for (size_t t = 0; t < terms_.size(); t++) idf_[t] = term_idf(ranking_, N, df[t]);
  prepared_ = true;
}

namespace {

// The best k hits after a cursor, in the order first(a, b) defines; its
// top is the worst kept.
template <typename First>
class BestAfter {
 public:
  BestAfter(First first, uint64_t k, bool has_after, const scipis_am_hit& after)
      : first_(first), heap_(first), k_(k), has_after_(has_after), after_(after) {}
  // The k-th best so far, when there are k.
  const scipis_am_hit* kth() const { return heap_.size() == k_ ? &heap_.top() : nullptr; }
  void offer(const scipis_am_hit& h) {
    if (has_after_ && !first_(after_, h)) return;
    if (heap_.size() < k_) {
      heap_.push(h);
    } else if (first_(h, heap_.top())) {
      heap_.pop();
      heap_.push(h);
    }
  }
  void drain(std::vector<scipis_am_hit>& out) {
    for (; !heap_.empty(); heap_.pop()) out.push_back(heap_.top());
    std::reverse(out.begin(), out.end());
  }

 private:
  First first_;
  std::priority_queue<scipis_am_hit, std::vector<scipis_am_hit>, First> heap_;
  uint64_t k_;
  bool has_after_;
  scipis_am_hit after_;
};

}  // namespace

void AmQuery::adopt(const AmQuery& from) {
  if (!from.prepared_ || from.terms_.size() != terms_.size() || from.ranking_ != ranking_)
    fail(SCIPIS_E_INTERNAL, "query statistics taken from another query");
  for (size_t t = 0; t < terms_.size(); t++)
    if (from.terms_[t].term != terms_[t].term || from.terms_[t].qf != terms_[t].qf)
      fail(SCIPIS_E_INTERNAL, "query statistics taken from another query");
  avgdl_ = from.avgdl_;
  idf_ = from.idf_;
  prepared_ = true;
}

template <typename F>
void AmQuery::each_match(Source& src, bool want_scores, F&& f) {
  const size_t nt = terms_.size();
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
      const uint32_t l = src.doc(ord).len;
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
    f(ord, score);
  }
}

// Block-max over ranges of ordinals: the blocks of the query's terms cut
// the ordinals into ranges covered by the same blocks, each bounded by the
// sum of their blocks' bounds. Ranges go best bound first and stop once
// the k-th score so far beats the next bound, so blocks that cannot reach
// the top k are never decoded, nor their rows' lengths read.
void AmQuery::ranked(const scipis_am_view& view, const scipis_am_reader& rd, uint64_t k,
                     bool has_after, double after_score, uint64_t after_tid) {
  prepare(view, rd);
  hits.clear();
  if (k == 0) return;
  auto better = [](const scipis_am_hit& a, const scipis_am_hit& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.tid < b.tid;
  };
  BestAfter best(better, k, has_after, scipis_am_hit{after_tid, after_score, 0});
  const size_t nt = terms_.size();
  std::vector<Scorer> sc(nt);
  for (size_t t = 0; t < nt; t++) sc[t] = Scorer{ranking_, idf_[t], static_cast<double>(terms_[t].qf), avgdl_};

  struct Range {
    uint64_t lo, hi;
    double bound;
    size_t act, nact;  // into acts
  };
  const bool exact = exact_bounds(ranking_);
  for (auto& src : open_view(view, rd)) {
    Source& s = *src;
    std::vector<TermBlocks> tb(nt);
    size_t present = 0;
    for (size_t t = 0; t < nt; t++) present += s.find_blocks(terms_[t].term, tb[t]) ? 1 : 0;
    if (present == 0 || (match_ == SCIPIS_MATCH_ALL && present < nt)) continue;
    // Every block's first ordinal and one past its last, merged in order.
    std::vector<uint64_t> pts, term_pts;
    for (size_t t = 0; t < nt; t++) {
      term_pts.clear();
      for (size_t b = 0; tb[t].df > 0 && b < tb[t].count(); b++) {
        if (b == 0 || tb[t].first(b) != tb[t].last(b - 1) + 1) term_pts.push_back(tb[t].first(b));
        term_pts.push_back(static_cast<uint64_t>(tb[t].last(b)) + 1);
      }
      const size_t mid = pts.size();
      pts.insert(pts.end(), term_pts.begin(), term_pts.end());
      std::inplace_merge(pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(mid), pts.end());
    }
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    std::vector<Range> ranges;
    struct Act {
      uint32_t t, b;
      double bound;
    };
    std::vector<Act> acts;
    std::vector<size_t> cur(nt, 0);
    for (size_t i = 0; i + 1 < pts.size(); i++) {
      const uint64_t lo = pts[i], hi = pts[i + 1] - 1;
      Range r{lo, hi, 0, acts.size(), 0};
      for (size_t t = 0; t < nt; t++) {
        if (tb[t].df == 0) continue;
        while (cur[t] < tb[t].count() && tb[t].last(cur[t]) < lo) cur[t]++;
        if (cur[t] >= tb[t].count() || tb[t].first(cur[t]) > lo) continue;
        const BlockInfo* info = tb[t].info(cur[t]);
        const double bound = info ? sc[t].bound(*info) : kInfScore;
        r.bound += bound;
        acts.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(cur[t]), bound});
        r.nact++;
      }
      if (r.nact == 0 || (match_ == SCIPIS_MATCH_ALL && r.nact < nt)) {
        acts.resize(r.act);
        continue;
      }
      ranges.push_back(r);
    }
    // Best bound first, then by ordinal; a heap, as most queries stop
    // after a few of the ranges.
    auto later = [](const Range& a, const Range& b) {
      if (a.bound != b.bound) return a.bound < b.bound;
      return a.lo > b.lo;
    };
    std::make_heap(ranges.begin(), ranges.end(), later);
    const bool tids_ascend = s.tids_ascend();
    // Node map: the pointers into it stay valid as blocks are added.
    absl::node_hash_map<uint64_t, std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> decoded;
    using Next = std::pair<uint32_t, size_t>;  // (ordinal, active index)
    for (auto end = ranges.end(); end != ranges.begin(); --end) {
      std::pop_heap(ranges.begin(), end, later);
      const Range& r = *(end - 1);
      if (const scipis_am_hit* kth = best.kth()) {
        if (r.bound * kBoundMargin < kth->score) break;
        // An exact bound no higher than the k-th score: a row of this range
        // could only tie it, and wins a tie only with a smaller identifier.
        // Ranges of that bound come by ordinal; with identifiers ascending
        // by ordinal, no later one can either.
        if (exact && tids_ascend && r.bound <= kth->score && s.doc(static_cast<uint32_t>(r.lo)).tid > kth->tid)
          break;
      }
      // The range's postings per active term, decoded once per block.
      std::vector<const std::vector<uint32_t>*> ords(r.nact), tfs(r.nact);
      std::vector<size_t> pos(r.nact), end_at(r.nact);
      for (size_t a = 0; a < r.nact; a++) {
        const Act& act = acts[r.act + a];
        const uint64_t key = (static_cast<uint64_t>(act.t) << 32) | act.b;
        auto it = decoded.find(key);
        if (it == decoded.end()) {
          it = decoded.try_emplace(key).first;
          tb[act.t].decode(act.b, it->second.first, it->second.second);
        }
        const auto& o = it->second.first;
        ords[a] = &o;
        tfs[a] = &it->second.second;
        pos[a] = static_cast<size_t>(std::lower_bound(o.begin(), o.end(), static_cast<uint32_t>(r.lo)) - o.begin());
        end_at[a] = static_cast<size_t>(std::upper_bound(o.begin(), o.end(), static_cast<uint32_t>(r.hi)) - o.begin());
      }
      // MaxScore within the range: rows are drawn from the essential terms'
      // postings only; the others are looked up for each such row. Under
      // `all` one term (the fewest postings) draws, as every row needs all.
      // Under `any` the terms of the smallest bounds are non-essential when
      // those bounds, summed in query order as a score is, stay below the
      // k-th score: a row holding only them cannot enter.
      std::vector<char> essential(r.nact, 1);
      if (match_ == SCIPIS_MATCH_ALL) {
        size_t driver = 0;
        for (size_t a = 1; a < r.nact; a++)
          if (end_at[a] - pos[a] < end_at[driver] - pos[driver]) driver = a;
        for (size_t a = 0; a < r.nact; a++) essential[a] = a == driver;
      } else if (const scipis_am_hit* kth = best.kth(); kth && r.nact > 1) {
        std::vector<size_t> by_bound(r.nact);
        for (size_t a = 0; a < r.nact; a++) by_bound[a] = a;
        std::stable_sort(by_bound.begin(), by_bound.end(),
                         [&](size_t x, size_t y) { return acts[r.act + x].bound < acts[r.act + y].bound; });
        std::vector<char> trial(r.nact, 1);
        for (size_t m = 0; m + 1 < r.nact; m++) {
          trial[by_bound[m]] = 0;
          double sum = 0;
          for (size_t a = 0; a < r.nact; a++)
            if (!trial[a]) sum += acts[r.act + a].bound;
          if (!(exact ? sum < kth->score : sum * kBoundMargin < kth->score)) break;
          essential = trial;
        }
      }
      std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next;
      for (size_t a = 0; a < r.nact; a++)
        if (essential[a] && pos[a] < end_at[a]) next.push({(*ords[a])[pos[a]], a});
      std::vector<uint32_t> tf(r.nact);
      while (!next.empty()) {
        const uint32_t ord = next.top().first;
        std::fill(tf.begin(), tf.end(), 0);
        while (!next.empty() && next.top().first == ord) {
          const size_t a = next.top().second;
          next.pop();
          tf[a] = (*tfs[a])[pos[a]];
          if (++pos[a] < end_at[a]) next.push({(*ords[a])[pos[a]], a});
        }
        size_t matched = 0;
        for (size_t a = 0; a < r.nact; a++) {
          if (!essential[a]) {
            // Rows come in ascending order: the cursor only moves forward.
            const auto& o = *ords[a];
            pos[a] = static_cast<size_t>(std::lower_bound(o.begin() + static_cast<std::ptrdiff_t>(pos[a]),
                                                          o.begin() + static_cast<std::ptrdiff_t>(end_at[a]), ord) -
                                         o.begin());
            if (pos[a] < end_at[a] && o[pos[a]] == ord) tf[a] = (*tfs[a])[pos[a]];
          }
          matched += tf[a] > 0;
        }
        if (match_ == SCIPIS_MATCH_ALL && matched < nt) continue;
        const DocEntry d = s.doc(ord);
        if (d.len == kLenNull || d.len == 0) fail_corrupt("index", "a row without tokens holds a term");
        // Actives are in term order, so a row's score sums in query order.
        double score = 0;
        for (size_t a = 0; a < r.nact; a++)
          if (tf[a]) score += sc[acts[r.act + a].t](tf[a], d.len);
        best.offer(scipis_am_hit{d.tid, score, 0});
      }
    }
  }
  best.drain(hits);
}

void AmQuery::rest(const scipis_am_view& view, const scipis_am_reader& rd, uint64_t k,
                   bool has_after, bool after_null, uint64_t after_tid) {
  hits.clear();
  auto before = [](const scipis_am_hit& a, const scipis_am_hit& b) {
    if (a.is_null != b.is_null) return a.is_null < b.is_null;
    return a.tid < b.tid;
  };
  BestAfter best(before, k, has_after, scipis_am_hit{after_tid, 0, after_null ? 1 : 0});
  for (auto& src : open_view(view, rd)) {
    Source& s = *src;
    const uint64_t n = s.stats().ndocs;
    std::vector<bool> hit(n, false);
    each_match(s, false, [&](uint32_t ord, double) { hit[ord] = true; });
    for (uint64_t ord = 0; ord < n; ord++) {
      if (hit[ord]) continue;
      const DocEntry d = s.doc(static_cast<uint32_t>(ord));
      best.offer(scipis_am_hit{d.tid, 0, d.len == kLenNull ? 1 : 0});
    }
  }
  best.drain(hits);
}

void AmQuery::matches(const scipis_am_view& view, const scipis_am_reader& rd) {
  tids.clear();
  for (auto& src : open_view(view, rd)) {
    Source& s = *src;
    each_match(s, false, [&](uint32_t ord, double) { tids.push_back(s.doc(ord).tid); });
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
