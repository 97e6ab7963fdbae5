// Ranked search and matching over a view of an index: every segment and
// the pending entries, scored with the statistics fixed at the query's
// first pass so that a resumed scan ranks exactly as it started.
#pragma once

#include <memory>
#include <vector>

#include "am/am_source.h"
#include "query/score.h"
#include "query/search.h"
#include "scipis_engine.h"

namespace scipis::am {

// The view's sources: its segments, then its pending entries.
std::vector<std::unique_ptr<Source>> open_view(const scipis_am_view& view,
                                               const scipis_am_reader& rd);
// The view's rows passing every filter, ascending by tid.
std::vector<uint64_t> filtered_tids(const scipis_am_view& view, const scipis_am_reader& rd,
                                    const Filters& fs);

class AmQuery {
 public:
  AmQuery(const unsigned char delimiter[256], std::string_view query, scipis_ranking ranking,
          scipis_match match);
  ~AmQuery();
  // keep: the sources and the terms' blocks read for the statistics stay
  // for the first ranked round, if the view is still the same.
  void prepare(const scipis_am_view& view, const scipis_am_reader& rd, bool keep = false);
  // take_opened: what from's prepare(keep) read moves here, for the first
  // ranked round (from: the statement's copy made while planning).
  void adopt(AmQuery& from, bool take_opened = false);
  // Rows returned from now on also pass f (before the first round).
  void add_filter(const Filter& f);
  // The fraction of the view's rows that match, by df and N (terms taken
  // as independent for `all`).
  double selectivity() const;
  void ranked(const scipis_am_view& view, const scipis_am_reader& rd, uint64_t k, bool has_after,
              double after_score, uint64_t after_tid);
  void rest(const scipis_am_view& view, const scipis_am_reader& rd, uint64_t k, bool has_after,
            bool after_null, uint64_t after_tid);
  void matches(const scipis_am_view& view, const scipis_am_reader& rd);
  void value(const char* text, size_t len, bool& matched, double& score);

  std::vector<scipis_am_hit> hits;
  std::vector<uint64_t> tids;

  struct Range;
  struct RangeKey;
  struct Act;

 private:
  // Calls f(ord, matched, score) for every row of src holding a query term.
  template <typename F>
  void each_match(Source& src, bool want_scores, F&& f);

  Tokenizer tok_;
  std::vector<QueryTerm> terms_;
  Filters filters_;
  scipis_ranking ranking_;
  scipis_match match_;
  bool prepared_ = false;
  double avgdl_ = 0;
  double n_ = 0;
  std::vector<double> df_;
  std::vector<double> idf_;
  std::string scratch_;
  // A ranked scan's state between rounds (am_query.cpp).
  struct SourceState;
  struct RankedState;
  std::unique_ptr<RankedState> open_sources(const scipis_am_view& view, const scipis_am_reader& rd);
  void open_ranked(const scipis_am_view& view, const scipis_am_reader& rd);
  void add_ranges(SourceState& ss);
  void next_blocks(SourceState& ss);
  double block_bound(const SourceState& ss, size_t t, size_t b) const;
  struct Pooled;
  template <typename Best>
  void score_ranges(RankedState& st, uint32_t si, Best& best);
  struct Decoded {
    const uint32_t *ords, *tfs;
    size_t n;
  };
  // Block act.b of term act.t, decoded once per scan.
  static Decoded decoded_block(SourceState& ss, const Act& act);
  std::vector<Scorer> scorers_;
  std::unique_ptr<RankedState> ranked_;
  std::unique_ptr<RankedState> opened_;  // prepare's, for the first round
};

}  // namespace scipis::am
