#include "query/search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"

#include "index/segment_format.h"
#include "query/chain_tally.h"
#include "query/doc_reader.h"
#include "query/score.h"
#include "query/topk.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis {

std::vector<QueryTerm> parse_query(const Tokenizer& tok, std::string_view query) {
  std::string buf(query);
  std::vector<QueryTerm> terms;
  // Keys view buf, which is never resized; a hash keeps a query of many
  // distinct terms linear.
  absl::flat_hash_map<std::string_view, size_t> seen;
  tok.tokenize_in_place(reinterpret_cast<unsigned char*>(buf.data()), buf.size(),
                        [&](const char* s, size_t n) {
                          auto [it, fresh] = seen.try_emplace(std::string_view(s, n), terms.size());
                          if (fresh)
                            terms.push_back({std::string(s, n), 1});
                          else
                            terms[it->second].qf++;
                        });
  return terms;
}

namespace {

// One term's postings within one partial index (indexer), seq-ordered; a
// document split across two flushes has its counts summed.
std::vector<Posting> term_postings(Collection& c, uint32_t i, IndexerState& ix,
                                   const std::string& term, uint32_t split, size_t t,
                                   ChainTally& chains) {
  std::vector<Posting> out;
  uint64_t limit = ix.docs();
  for (SegmentState* s : ix.segs) {
    auto ref = c.tf_meta(*s, split).find(term);
    if (!ref) continue;
    size_t before = out.size();
    if (ref->len == 0) {
      if (ref->seq >= limit)
        fail_corrupt(c.tf_meta_name(*s, split), "posting names an unknown document");
      out.push_back({ref->seq, ref->tf});
    } else {
      const std::string& path = c.tf_data_name(*s);
      decode_postings(path, region_in(path, c.region_bytes(*s, *ref), *ref), *ref, limit, out);
    }
    if (before > 0 && before < out.size()) {
      if (out[before].seq == out[before - 1].seq) {
        out[before - 1].tf += out[before].tf;
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(before));
      } else if (out[before].seq < out[before - 1].seq) {
        fail_corrupt(s->tf_dir, "postings of consecutive segments overlap");
      }
    }
  }
  // Tombstoned documents are left out, chain members scored as their chains.
  if (!ix.dead.empty() || !ix.chained.empty())
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const Posting& p) {
                               if (ix.is_chained(p.seq)) chains.add(i, p.seq, t, p.tf);
                               return ix.excluded(p.seq);
                             }),
              out.end());
  return out;
}

}  // namespace

const std::string& RankOrder::path(const Ranked& r) {
  auto [it, fresh] = paths_.try_emplace({r.indexer, r.seq});
  if (fresh) {
    auto& rd = readers_[r.indexer];
    if (!rd) rd = std::make_unique<DocReader>(c_, r.indexer);
    rd->path_of(r.seq, it->second);
  }
  return it->second;
}

std::vector<Hit> search(Collection& c, const std::vector<QueryTerm>& terms, int64_t k,
                        scipis_ranking ranking, scipis_match match) {
  if (k > 0 && terms.size() <= kTopkMaxTerms) return topk_search(c, terms, k, ranking, match);
  return full_search(c, terms, k, ranking, match);
}

std::vector<Hit> full_search(Collection& c, const std::vector<QueryTerm>& terms, int64_t k,
                             scipis_ranking ranking, scipis_match match) {
  const Manifest& m = c.manifest();
  const size_t nt = terms.size();
  const size_t ni = c.indexer_count();
  std::vector<uint32_t> split(nt);
  for (size_t t = 0; t < nt; t++)
    split[t] = dict_split(dict_hash(terms[t].term), m.split_factor);

  // postings[i][t]: term t in partial index i.
  std::vector<std::vector<std::vector<Posting>>> postings(ni, std::vector<std::vector<Posting>>(nt));
  std::vector<uint64_t> df(nt, 0);
  ChainTally chains(c, terms);
  for (uint32_t i = 0; i < ni; i++) {
    IndexerState& ix = c.indexer(i);
    for (size_t t = 0; t < nt; t++) {
      postings[i][t] = term_postings(c, i, ix, terms[t].term, split[t], t, chains);
      df[t] += postings[i][t].size();
    }
  }
  chains.count(df);
  const double N = static_cast<double>(m.docs_with_tokens);
  const double avgdl = N > 0 ? static_cast<double>(m.total_tokens) / N : 0.0;
  std::vector<double> idf(nt);
  for (size_t t = 0; t < nt; t++) {
    double d = static_cast<double>(df[t]);
    idf[t] = term_idf(ranking, N, d);
  }

  RankOrder better(c);
  auto cmp = [&](const Ranked& a, const Ranked& b2) { return better(a, b2); };
  std::vector<Ranked> all;
  chains.score(
      match,
      [&](size_t t, double tf, double len) {
        return term_score(ranking, terms[t].qf, idf[t], tf, len, avgdl);
      },
      [&](const Ranked& r) { all.push_back(r); });
  for (uint32_t i = 0; i < ni; i++) {
    DocReader rd(c, i);
    // Top-k heap of this partial index: its root is the worst kept hit.
    std::priority_queue<Ranked, std::vector<Ranked>, decltype(cmp)> heap(cmp);
    std::vector<Ranked> every;
    // The next posting of each term, smallest (seq, term) first: a
    // document's terms come out together and in query-term order, so its
    // score is summed in that order (equal inputs, equal bits) in
    // O(postings x log terms), however many terms the query has.
    std::vector<size_t> pos(nt, 0);
    using Cursor = std::pair<uint64_t, size_t>;
    std::priority_queue<Cursor, std::vector<Cursor>, std::greater<Cursor>> next;
    for (size_t t = 0; t < nt; t++)
      if (!postings[i][t].empty()) next.push({postings[i][t][0].seq, t});
    while (!next.empty()) {
      const uint64_t seq = next.top().first;
      const double len = rd.len(seq);
      double score = 0;
      size_t matched = 0;
      while (!next.empty() && next.top().first == seq) {
        const size_t t = next.top().second;
        next.pop();
        double tf = postings[i][t][pos[t]].tf;
        if (++pos[t] < postings[i][t].size()) next.push({postings[i][t][pos[t]].seq, t});
        matched++;
        score += term_score(ranking, terms[t].qf, idf[t], tf, len, avgdl);
      }
      if (match == SCIPIS_MATCH_ALL && matched < nt) continue;
      if (k >= 0 && heap.size() == static_cast<size_t>(k) && score < heap.top().score) continue;
      Ranked r{score, i, seq};
      if (k < 0) {
        every.push_back(r);
      } else if (heap.size() < static_cast<size_t>(k)) {
        heap.push(r);
      } else if (better(r, heap.top())) {
        heap.pop();
        heap.push(r);
      }
    }
    while (!heap.empty()) {
      all.push_back(heap.top());
      heap.pop();
    }
    all.insert(all.end(), every.begin(), every.end());
  }
  // n-way merge of the partial indexes' results.
  std::sort(all.begin(), all.end(), cmp);
  if (k >= 0 && all.size() > static_cast<size_t>(k)) all.resize(static_cast<size_t>(k));
  std::vector<Hit> hits;
  hits.reserve(all.size());
  for (const auto& r : all) hits.push_back({r.indexer, r.seq, r.score});
  return hits;
}

}  // namespace scipis
