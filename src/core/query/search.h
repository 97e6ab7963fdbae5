// Ranked term search over one collection, per search-semantics.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/node_hash_map.h"

#include "query/collection.h"
#include "query/doc_reader.h"
#include "scipis_engine.h"

namespace scipis {

struct Hit {
  uint32_t indexer;
  uint64_t seq;
  double score;
};

// A hit while a query runs.
struct Ranked {
  double score;
  uint32_t indexer;
  uint64_t seq;
};

// Best first: higher score, then smaller path. A path is read (its block
// decoded) only when two scores tie, and kept for the query.
class RankOrder {
 public:
  explicit RankOrder(Collection& c) : c_(c), readers_(c.indexer_count()) {}
  bool operator()(const Ranked& a, const Ranked& b) {
    if (a.score != b.score) return a.score > b.score;
    return path(a) < path(b);
  }

 private:
  const std::string& path(const Ranked& r);
  Collection& c_;
  std::vector<std::unique_ptr<DocReader>> readers_;
  absl::node_hash_map<std::pair<uint32_t, uint64_t>, std::string> paths_;
};

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
