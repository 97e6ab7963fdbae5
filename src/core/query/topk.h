// Top-k search that skips what cannot reach the k-th score: the documents
// of an indexer are taken in windows that end where a term's block ends;
// a window whose terms' block bounds (largest tf, smallest length) sum to
// less than the k-th best score so far is passed over unread. Scores of
// the documents that are scored are computed exactly as search() does, so
// the answer is the same to the bit.
#pragma once

#include <vector>

#include "query/search.h"

namespace scipis {

// What a query passed over, for tests and benchmarks.
struct TopkStats {
  uint64_t windows = 0, skipped = 0, blocks_decoded = 0;
  // Windows where some terms could not bring a document in alone, and
  // the postings of those terms passed over unscored.
  uint64_t maxscore_windows = 0, passed_over = 0;
};

// Best hits first; k >= 1. Terms as parse_query gives them.
std::vector<Hit> topk_search(Collection& c, const std::vector<QueryTerm>& terms, int64_t k,
                             scipis_ranking ranking, scipis_match match,
                             TopkStats* stats = nullptr);

// Queries with more terms than this are answered by search()'s full merge:
// windows cost time per term, and the bounds' float margin assumes few.
constexpr size_t kTopkMaxTerms = 64;

}  // namespace scipis
