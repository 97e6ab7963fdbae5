// Ranked term search over one collection, per search-semantics.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "query/collection.h"
#include "scipis_engine.h"

namespace scipis {

struct Hit {
  uint32_t indexer;
  uint64_t seq;
  double score;
};

// A hit while a query runs, with its path for the tie-break.
struct Ranked {
  double score;
  std::string path;
  uint32_t indexer;
  uint64_t seq;
};

// Orders best first: higher score, then smaller path.
inline bool better(const Ranked& a, const Ranked& b) {
  if (a.score != b.score) return a.score > b.score;
  return a.path < b.path;
}

struct QueryTerm {
  std::string term;
  uint32_t qf;
};

// Distinct terms of the query in order of first occurrence, with counts.
std::vector<QueryTerm> parse_query(const Tokenizer& tok, std::string_view query);

// Best hits first (score descending, then path ascending); k < 0 = all.
// Top-k queries of few terms go to topk_search (query/topk.h).
std::vector<Hit> search(Collection& c, const std::vector<QueryTerm>& terms,
                        int64_t k, scipis_ranking ranking, scipis_match match);
// The same answer from every posting of every term, nothing skipped.
std::vector<Hit> full_search(Collection& c, const std::vector<QueryTerm>& terms,
                             int64_t k, scipis_ranking ranking, scipis_match match);

}  // namespace scipis
