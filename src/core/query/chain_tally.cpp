#include "query/chain_tally.h"

namespace scipis {

ChainTally::ChainTally(Collection& c, const std::vector<QueryTerm>& terms)
    : c_(c), terms_(terms), tf_(c.chains().size() * terms.size(), 0) {}

void ChainTally::add(uint32_t indexer, uint64_t seq, size_t t, uint32_t tf) {
  const int64_t ch = c_.chain_of(indexer, seq);
  if (ch >= 0) tf_[static_cast<size_t>(ch) * terms_.size() + t] += tf;
}

void ChainTally::count(std::vector<uint64_t>& df) {
  const size_t nt = terms_.size();
  for (size_t ch = 0; ch < c_.chains().size(); ch++) {
    uint64_t* tf = &tf_[ch * nt];
    for (const std::string& r : c_.chains()[ch].retract)
      for (size_t t = 0; t < nt; t++)
        if (terms_[t].term == r && tf[t] > 0) tf[t]--;
    for (size_t t = 0; t < nt; t++) df[t] += tf[t] > 0;
  }
}

}  // namespace scipis
