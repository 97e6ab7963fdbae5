// Appended files' chains (query/collection.h) in a search: their members'
// postings are taken out of per-document scoring, summed here per chain,
// less what each link retracts, and each chain is scored as one document
// of the chain's length, listed by its last member.
#pragma once

#include <cstdint>
#include <vector>

#include "query/collection.h"
#include "query/search.h"

namespace scipis {

class ChainTally {
 public:
  ChainTally(Collection& c, const std::vector<QueryTerm>& terms);
  // A member's posting of term t (a member split over two flushes may
  // come twice: summed).
  void add(uint32_t indexer, uint64_t seq, size_t t, uint32_t tf);
  // Retractions taken; adds to df[t] the chains that hold t.
  void count(std::vector<uint64_t>& df);
  // Calls emit(Ranked) for every chain the query matches;
  // score(t, tf, len) is term t's score.
  template <typename Score, typename Emit>
  void score(scipis_match match, Score&& score, Emit&& emit) const {
    const size_t nt = terms_.size();
    for (size_t ch = 0; ch < c_.chains().size(); ch++) {
      const uint64_t* tf = &tf_[ch * nt];
      const Chain& chain = c_.chains()[ch];
      const double len = static_cast<double>(chain.tokens);
      double s = 0;
      size_t matched = 0;
      for (size_t t = 0; t < nt; t++) {
        if (tf[t] == 0) continue;
        s += score(t, static_cast<double>(tf[t]), len);
        matched++;
      }
      if (matched == 0 || (match == SCIPIS_MATCH_ALL && matched < nt)) continue;
      emit(Ranked{s, chain.last().indexer, chain.last().seq});
    }
  }

 private:
  Collection& c_;
  const std::vector<QueryTerm>& terms_;
  std::vector<uint64_t> tf_;  // by chain, then term
};

}  // namespace scipis
