#include "query/topk.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "index/postings_codec.h"
#include "index/segment_format.h"
#include "query/chain_tally.h"
#include "query/doc_reader.h"
#include "query/score.h"
#include "util/error.h"

namespace scipis {

namespace {

constexpr double kInf = kInfScore;
constexpr double kMargin = kBoundMargin;
// A TF-IDF ratio this much below the k-th score's scores below it: each
// of the few correctly rounded operations between them errs by 2^-53.
constexpr double kRatioMargin = 1e-9;

// One block of a term within one indexer: part of a segment's region, or
// the one posting a segment's dictionary holds inline.
struct Blk {
  const RegionReader* reader;  // nullptr: inline
  size_t index;
  size_t seg;      // in the indexer's flush order
  uint64_t first;  // no posting before this
  uint64_t last;
  double bound;
  uint64_t seq;  // inline
  uint32_t tf;
};

// A term's blocks over an indexer's segments, and the block decoded last.
struct TermBlocks {
  std::vector<Blk> blks;
  std::vector<std::unique_ptr<RegionReader>> readers;
  size_t at = 0;  // first block whose last >= the window's start
  size_t decoded = SIZE_MAX;
  uint64_t seqs[kBlockPostings];
  uint32_t tfs[kBlockPostings];
  uint32_t count = 0;
  uint64_t df = 0;

  TermBlocks() = default;
  TermBlocks(TermBlocks&&) = default;
  ~TermBlocks() { release(); }
  // Empty again, its readers back in the thread's pool; a list of many
  // blocks gives its memory back.
  void release() {
    for (auto& r : readers) RegionReader::keep(std::move(r));
    readers.clear();
    if (blks.capacity() > kKeptBlks) std::vector<Blk>().swap(blks);
    blks.clear();
    at = 0;
    decoded = SIZE_MAX;
    count = 0;
    df = 0;
  }
  static constexpr size_t kKeptBlks = 4096;

  // Postings of block b with seq in [lo, hi], appended (tf summed where a
  // document split over two flushes repeats its seq).
  void gather(size_t b, uint64_t lo, uint64_t hi, std::vector<Posting>& out, TopkStats& st) {
    const Blk& k = blks[b];
    auto put = [&](uint64_t seq, uint32_t tf) {
      if (seq < lo || seq > hi) return;
      if (!out.empty() && out.back().seq == seq)
        out.back().tf += tf;
      else
        out.push_back({seq, tf});
    };
    if (!k.reader) return put(k.seq, k.tf);
    if (decoded != b) {
      k.reader->decode(k.index, seqs, tfs);
      st.blocks_decoded++;
      count = k.reader->blocks()[k.index].count;
      decoded = b;
    }
    // Postings of [lo, hi] are a run of the block's (seqs ascend): only
    // its first may repeat the last one out (a document split over two
    // flushes); the rest are appended without a check each.
    const uint64_t* const last = seqs + count;
    const uint64_t* from = std::lower_bound(static_cast<const uint64_t*>(seqs), last, lo);
    const uint64_t* to = std::upper_bound(from, last, hi);
    size_t i = static_cast<size_t>(from - seqs);
    const size_t end = static_cast<size_t>(to - seqs);
    if (i < end && !out.empty() && out.back().seq == seqs[i]) out.back().tf += tfs[i++];
    const size_t at = out.size();
    out.resize(at + (end - i));
    for (Posting* w = out.data() + at; i < end; i++, w++) *w = Posting{seqs[i], tfs[i]};
  }
};

// A thread's lists and windows, kept from one query to the next: their
// allocation (a term's lists are 1.6 KiB) was a tenth of a frequent
// term's query. A query that runs while another holds them (none does
// now) gets its own.
struct Scratch {
  std::vector<std::vector<TermBlocks>> lists;
  std::vector<std::vector<Posting>> win;
  bool busy = false;
};
thread_local Scratch kept_scratch;
constexpr size_t kKeptPostings = size_t{1} << 16;

// Holds a scratch for one query; gives back its readers and any large
// buffers at the end, thrown out of or not.
class ScratchHold {
 public:
  ScratchHold() : s_(kept_scratch.busy ? own_ : kept_scratch) { s_.busy = true; }
  ~ScratchHold() {
    for (auto& l : s_.lists)
      for (TermBlocks& tb : l) tb.release();
    for (auto& w : s_.win)
      if (w.capacity() > kKeptPostings) std::vector<Posting>().swap(w);
    s_.busy = false;
  }
  ScratchHold(const ScratchHold&) = delete;
  ScratchHold& operator=(const ScratchHold&) = delete;
  Scratch& get() { return s_; }

 private:
  Scratch own_;
  Scratch& s_;
};

// The postings of documents of seqs (ascending) among a term's, each
// passed to f(seq, tf); returns how many documents they are (one split
// over two flushes counted once). Only the blocks whose range holds one
// of seqs are decoded; bits (seqs as a bitmap) answers for each posting
// (a binary search per posting was most of a query once tombstones were
// dense: a watcher's hundreds of thousands).
template <typename F>
uint64_t postings_of(const TermBlocks& tb, const std::vector<uint64_t>& seqs, const std::vector<uint64_t>& bits,
                     F&& f) {
  std::vector<uint64_t> found;
  uint64_t got[kBlockPostings];
  uint32_t tfs[kBlockPostings];
  for (const Blk& k : tb.blks) {
    const uint64_t lo = k.reader ? k.first : k.seq;
    auto it = std::lower_bound(seqs.begin(), seqs.end(), lo);
    if (it == seqs.end() || *it > k.last) continue;
    if (!k.reader) {
      found.push_back(k.seq);
      f(k.seq, k.tf);
      continue;
    }
    k.reader->decode(k.index, got, tfs);
    const uint32_t n = k.reader->blocks()[k.index].count;
    for (uint32_t j = 0; j < n; j++) {
      const uint64_t q = got[j];
      if ((q >> 6) >= bits.size() || !(bits[q >> 6] >> (q & 63) & 1)) continue;
      found.push_back(got[j]);
      f(got[j], tfs[j]);
    }
  }
  std::sort(found.begin(), found.end());
  return static_cast<uint64_t>(std::unique(found.begin(), found.end()) - found.begin());
}

// The k best hits so far (RankOrder), the worst of them at top(): for a
// small k a sorted array (an insertion is a few comparisons and a short
// move, cheaper than a heap's sift down and up), for a larger one a heap.
class BestK {
 public:
  BestK(size_t k, RankOrder& better) : k_(k), better_(better), sorted_(k <= kSortedMost) {
    v_.reserve(std::min<size_t>(k, 1024));
  }
  size_t size() const { return v_.size(); }
  const Ranked& top() const { return sorted_ ? v_.back() : v_.front(); }
  void offer(const Ranked& r) {
    if (v_.size() == k_) {
      if (!better_(r, top())) return;
      if (sorted_) {
        v_.pop_back();
      } else {
        std::pop_heap(v_.begin(), v_.end(), cmp());
        v_.pop_back();
      }
    }
    v_.push_back(r);
    if (sorted_) {
      for (size_t i = v_.size() - 1; i > 0 && better_(v_[i], v_[i - 1]); i--) std::swap(v_[i], v_[i - 1]);
    } else {
      std::push_heap(v_.begin(), v_.end(), cmp());
    }
  }
  // Best first; the set is left sorted.
  const std::vector<Ranked>& best_first() {
    if (!sorted_) std::sort(v_.begin(), v_.end(), cmp());
    sorted_ = true;
    return v_;
  }

 private:
  static constexpr size_t kSortedMost = 32;
  struct Cmp {
    RankOrder* better;
    bool operator()(const Ranked& a, const Ranked& b) const { return (*better)(a, b); }
  };
  Cmp cmp() { return Cmp{&better_}; }
  size_t k_;
  RankOrder& better_;
  bool sorted_;
  std::vector<Ranked> v_;
};

}  // namespace

std::vector<Hit> topk_search(Collection& c, const std::vector<QueryTerm>& terms, int64_t k,
                             scipis_ranking ranking, scipis_match match, TopkStats* stats) {
  TopkStats local;
  TopkStats& st = stats ? *stats : local;
  const Manifest& m = c.manifest();
  const size_t nt = terms.size(), ni = c.indexer_count();
  if (nt == 0 || nt > kTopkMaxTerms || k < 1) fail(SCIPIS_E_INTERNAL, "top-k search of %zu terms", nt);
  std::vector<uint32_t> split(nt);
  for (size_t t = 0; t < nt; t++) split[t] = dict_split(dict_hash(terms[t].term), m.split_factor);

  // Each indexer's segments: the documents whose records each holds,
  // [a, b), and whether it begins inside a document the flush before it
  // cut (that document's postings are split over both).
  struct SegDocs {
    uint64_t a, b;
    bool continues;
  };
  std::vector<std::vector<SegDocs>> seg_docs(ni);
  for (uint32_t i = 0; i < ni; i++) {
    uint64_t a = 0;
    for (SegmentState* s : c.indexer(i).segs) {
      seg_docs[i].push_back({a, a + s->ref.docs, s->ref.first_seq == a + 1});
      a += s->ref.docs;
    }
  }

  // Every term's blocks in every indexer; df over all of them, a split
  // document counted once.
  ScratchHold hold;
  std::vector<std::vector<TermBlocks>>& lists = hold.get().lists;
  lists.resize(ni);  // released as the last query ended (ScratchHold)
  std::vector<uint64_t> df(nt, 0);
  ChainTally chains(c, terms);
  for (uint32_t i = 0; i < ni; i++) {
    IndexerState& ix = c.indexer(i);
    lists[i].resize(nt);
    for (size_t t = 0; t < nt; t++) {
      TermBlocks& tb = lists[i][t];
      uint64_t prev_last = 0;
      size_t prev_seg = SIZE_MAX;
      for (size_t si = 0; si < ix.segs.size(); si++) {
        SegmentState* s = ix.segs[si];
        auto ref = c.tf_meta(*s, split[t]).find(terms[t].term);
        if (!ref) continue;
        tb.df += ref->df;
        const std::string& path = c.tf_data_name(*s);
        // The term's last document so far was not finished where it was
        // seen: if it is this piece's first, it is one document, counted once.
        const bool split_before = prev_seg != SIZE_MAX && prev_last >= seg_docs[i][prev_seg].b;
        uint64_t first_posting;
        if (ref->len == 0) {
          if (ref->seq >= ix.docs()) fail_corrupt(path, "posting names an unknown document");
          tb.blks.push_back({nullptr, 0, si, prev_last, ref->seq, 0, ref->seq, ref->tf});
          first_posting = ref->seq;
        } else {
          tb.readers.push_back(RegionReader::make(
              path, region_in(path, c.region_bytes(*s, *ref), *ref, c.verified(*s)), ref->df, ref->base,
              ix.docs(), c.verified(*s)));
          const RegionReader& r = *tb.readers.back();
          for (size_t b = 0; b < r.blocks().size(); b++) {
            const uint64_t first = b ? r.blocks()[b - 1].last_seq + 1 : prev_last;
            tb.blks.push_back({&r, b, si, first, r.blocks()[b].last_seq, 0, 0, 0});
          }
          first_posting = UINT64_MAX;
          if (split_before) {
            uint64_t seqs[kBlockPostings];
            uint32_t tfs[kBlockPostings];
            r.decode(0, seqs, tfs);
            first_posting = seqs[0];
          }
        }
        if (split_before && first_posting == prev_last) tb.df--;
        prev_last = tb.blks.back().last;
        prev_seg = si;
      }
      if (!ix.dead.empty()) tb.df -= postings_of(tb, ix.dead, ix.dead_bits, [](uint64_t, uint32_t) {});
      // Chain members count as their chains (ChainTally::count).
      if (!ix.chained.empty())
        tb.df -= postings_of(tb, ix.chained, ix.chained_bits,
                             [&](uint64_t seq, uint32_t tf) { chains.add(i, seq, t, tf); });
      df[t] += tb.df;
    }
  }
  chains.count(df);
  const double N = static_cast<double>(m.docs_with_tokens);
  const double avgdl = N > 0 ? static_cast<double>(m.total_tokens) / N : 0.0;
  std::vector<Scorer> score_of(nt);
  for (size_t t = 0; t < nt; t++) {
    const double d = static_cast<double>(df[t]);
    const double idf = term_idf(ranking, N, d);
    score_of[t] = Scorer{ranking, idf, static_cast<double>(terms[t].qf), avgdl};
  }

  RankOrder better(c);
  BestK heap(static_cast<size_t>(k), better);
  auto offer = [&](const Ranked& r) { heap.offer(r); };
  // Chains first: their scores raise the bar the blocks must reach.
  chains.score(
      match, [&](size_t t, double tf, double len) { return score_of[t](tf, len); }, offer);
  std::vector<std::vector<Posting>>& win = hold.get().win;
  if (win.size() < nt) win.resize(nt);
  for (auto& w : win) w.clear();
  std::vector<double> term_bound(nt);
  std::vector<size_t> by_bound(nt);
  std::vector<char> essential(nt);
  for (uint32_t i = 0; i < ni; i++) {
    DocReader rd(c, i);
    const IndexerState& ix = c.indexer(i);
    const bool excluded = !ix.dead.empty() || !ix.chained.empty();
    // Bounds: a block that may hold part of a document split over two
    // flushes (its counts sum over both) has none.
    for (size_t t = 0; t < nt; t++) {
      for (Blk& blk : lists[i][t].blks) {
        const SegDocs& sd = seg_docs[i][blk.seg];
        const uint64_t first = blk.reader ? (blk.index ? blk.first : 0) : blk.seq;
        const bool partial = blk.last >= sd.b || (sd.continues && first <= sd.a && sd.a <= blk.last);
        if (partial) {
          blk.bound = kInf;
        } else if (!blk.reader) {
          blk.bound = score_of[t](blk.tf, rd.len(blk.seq));
        } else {
          blk.bound = score_of[t].bound(blk.reader->blocks()[blk.index]);
        }
      }
    }

    uint64_t lo = 0;
    while (true) {
      uint64_t hi = UINT64_MAX;
      size_t live = 0;
      for (size_t t = 0; t < nt; t++) {
        TermBlocks& tb = lists[i][t];
        while (tb.at < tb.blks.size() && tb.blks[tb.at].last < lo) tb.at++;
        if (tb.at < tb.blks.size()) {
          live++;
          hi = std::min(hi, tb.blks[tb.at].last);
        }
      }
      if (live == 0) break;
      double bound = 0;
      size_t present = 0;
      for (size_t t = 0; t < nt; t++) {
        TermBlocks& tb = lists[i][t];
        bool any = false;
        term_bound[t] = 0;
        for (size_t b = tb.at; b < tb.blks.size() && tb.blks[b].first <= hi; b++) {
          bound += tb.blks[b].bound;
          term_bound[t] += tb.blks[b].bound;
          any = true;
        }
        present += any;
      }
      const bool full = heap.size() == static_cast<size_t>(k);
      const bool skip = (match == SCIPIS_MATCH_ALL && present < nt) ||
                        (full && bound * kMargin < heap.top().score);
      st.windows++;
      st.skipped += skip;
      if (!skip) {
        for (size_t t = 0; t < nt; t++) {
          TermBlocks& tb = lists[i][t];
          win[t].clear();
          for (size_t b = tb.at; b < tb.blks.size() && tb.blks[b].first <= hi; b++)
            tb.gather(b, lo, hi, win[t], st);
        }
        // MaxScore (Turtle and Flood): the terms whose window bounds,
        // added from the least, stay below the k-th score by the margin
        // cannot bring a document in alone; only documents holding one of
        // the other terms are scored (each with all its terms).
        std::fill(essential.begin(), essential.end(), 1);
        if (full && match == SCIPIS_MATCH_ANY && nt > 1) {
          for (size_t t = 0; t < nt; t++) by_bound[t] = t;
          std::sort(by_bound.begin(), by_bound.end(),
                    [&](size_t a, size_t b) { return term_bound[a] < term_bound[b]; });
          double sum = 0;
          for (size_t t : by_bound) {
            if (!((sum + term_bound[t]) * kMargin < heap.top().score)) break;
            sum += term_bound[t];
            essential[t] = 0;
          }
          st.maxscore_windows += essential[by_bound[0]] == 0;
        }
        // One term: its window's postings are the documents, in seq order
        // (the loop below, without the merge).
        if (nt == 1) {
          const Scorer& sc = score_of[0];
          // TF-IDF grows with tf / len alone: with the heap full, a
          // posting whose ratio is below the k-th score's, by a margin far
          // past rounding, cannot enter, and needs no division or square
          // root to know it.
          const double unit = sc.qf * sc.idf;
          const bool by_ratio = ranking != SCIPIS_BM25 && unit > 0;
          double below = 0;  // tf < below * len: out
          auto raise = [&] {
            if (by_ratio && heap.size() == static_cast<size_t>(k)) {
              const double r = heap.top().score / unit;
              below = r * r * (1 - kRatioMargin);
            }
          };
          raise();
          for (const Posting& p : win[0]) {
            const double len = rd.len(p.seq);
            if (static_cast<double>(p.tf) < below * len) continue;
            const double score = sc(p.tf, len);
            if (heap.size() == static_cast<size_t>(k) && score < heap.top().score) continue;
            if (excluded && ix.excluded(p.seq)) continue;
            offer(Ranked{score, i, p.seq});
            raise();
          }
          win[0].clear();
        }
        // Documents in seq order; each one's score summed in query-term
        // order, as search() sums it.
        // Each term's next posting and end through pointers on the stack,
        // and the ranking's formula chosen once per window: through the
        // vectors and Scorer's branch, this loop was a fifth of a query.
        const Posting* at[kTopkMaxTerms];
        const Posting* end[kTopkMaxTerms];
        const char* const ess = essential.data();
        for (size_t t = 0; t < nt; t++) {
          at[t] = win[t].data();
          end[t] = at[t] + win[t].size();
        }
        auto merge = [&](auto bm25) {
          constexpr scipis_ranking kRanking = decltype(bm25)::value ? SCIPIS_BM25 : SCIPIS_TFIDF;
          while (true) {
            uint64_t seq = UINT64_MAX;
            for (size_t t = 0; t < nt; t++)
              if (ess[t] && at[t] != end[t]) seq = std::min(seq, at[t]->seq);
            if (seq == UINT64_MAX) break;
            const double len = rd.len(seq);
            double score = 0;
            size_t matched = 0;
            for (size_t t = 0; t < nt; t++) {
              const Posting* p = at[t];
              if (!ess[t])
                for (; p != end[t] && p->seq < seq; p++) st.passed_over++;
              if (p != end[t] && p->seq == seq) {
                const Scorer& sc = score_of[t];
                score += term_score(kRanking, sc.qf, sc.idf, p->tf, len, sc.avgdl);
                matched++;
                p++;
              }
              at[t] = p;
            }
            if (match == SCIPIS_MATCH_ALL && matched < nt) continue;
            if (excluded && ix.excluded(seq)) continue;
            // Below the k-th score: no path is needed to know it stays out.
            if (heap.size() == static_cast<size_t>(k) && score < heap.top().score) continue;
            offer(Ranked{score, i, seq});
          }
        };
        if (ranking == SCIPIS_BM25)
          merge(std::true_type{});
        else
          merge(std::false_type{});
      }
      if (hi == UINT64_MAX) break;
      lo = hi + 1;
    }
  }
  const std::vector<Ranked>& all = heap.best_first();
  std::vector<Hit> hits;
  for (const auto& r : all) hits.push_back({r.indexer, r.seq, r.score});
  return hits;
}

}  // namespace scipis
