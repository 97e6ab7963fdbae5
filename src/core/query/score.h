// The spec's ranking formulas, shared by every search path (collections
// and the index access method) so that equal inputs give equal bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "index/postings_codec.h"
#include "scipis_engine.h"

namespace scipis {

inline double term_idf(scipis_ranking ranking, double N, double df) {
  return ranking == SCIPIS_BM25 ? std::log(1.0 + (N - df + 0.5) / (df + 0.5))
                                : 1.0 + std::log((N + 1.0) / (df + 1.0));
}

inline double term_score(scipis_ranking ranking, double qf, double idf, double tf, double len,
                         double avgdl) {
  if (ranking == SCIPIS_BM25) return qf * idf * tf / (tf + 1.2 * (1.0 - 0.75 + 0.75 * len / avgdl));
  // sqrt(tf / len), not sqrt(tf) / sqrt(len): the score is then a
  // non-decreasing function of the exact ratio tf / len (each operation is
  // correctly rounded), so a block's best posting bounds it bit for bit
  // and equal ratios score equal bits.
  return qf * idf * std::sqrt(tf / len);
}

constexpr double kInfScore = std::numeric_limits<double>::infinity();
// A block is skipped only when its bound, so enlarged, is still below the
// k-th score: a bound is summed in another order than a score is.
constexpr double kBoundMargin = 1 + 1e-9;

// Whether Scorer::bound is exact: no posting of the block scores above it,
// not by one unit in the last place (TF-IDF's best posting; BM25's bound
// is computed through another length than any posting's).
inline bool exact_bounds(scipis_ranking ranking) { return ranking != SCIPIS_BM25; }

// One query term's scoring, and the most a posting of a block can score.
// sqrt(tf / len) for small tf and len, as term_score computes it (the
// same correctly rounded operations, so the same bits): a scan scores
// most rows without a division and a square root.
constexpr uint32_t kRatioTf = 16, kRatioLen = 256;
inline const double* sqrt_ratios() {
  static const double* t = [] {
    auto* v = new double[kRatioTf * kRatioLen];  // never freed: used until exit
    for (uint32_t tf = 0; tf < kRatioTf; tf++)
      for (uint32_t len = 0; len < kRatioLen; len++)
        v[tf * kRatioLen + len] = len ? std::sqrt(static_cast<double>(tf) / static_cast<double>(len)) : 0;
    return v;
  }();
  return t;
}

struct Scorer {
  scipis_ranking ranking;
  double idf, qf, avgdl;
  double operator()(double tf, double len) const {
    return term_score(ranking, qf, idf, tf, len, avgdl);
  }
  // The same for a row's counts.
  double counts(uint32_t tf, uint32_t len) const {
    if (ranking != SCIPIS_BM25 && tf < kRatioTf && len < kRatioLen && len > 0)
      return qf * idf * sqrt_ratios()[tf * kRatioLen + len];
    return (*this)(static_cast<double>(tf), static_cast<double>(len));
  }
  // TF-IDF grows with tf / length alone: the block's best posting scores
  // its maximum. BM25 grows with tf and falls with length; a posting of
  // length l has tf at most min(max_tf, l * best ratio), which scores most
  // at l = max_tf / ratio, or at min_len when that is longer.
  double bound(const BlockInfo& b) const {
    if (!b.min_len || !b.best_tf) return kInfScore;
    if (ranking != SCIPIS_BM25 && b.best_tf <= UINT32_MAX && b.best_len <= UINT32_MAX)
      return counts(static_cast<uint32_t>(b.best_tf), static_cast<uint32_t>(b.best_len));
    if (ranking != SCIPIS_BM25) return (*this)(static_cast<double>(b.best_tf), static_cast<double>(b.best_len));
    const double at = static_cast<double>(b.max_tf) * static_cast<double>(b.best_len) /
                      static_cast<double>(b.best_tf);
    return (*this)(static_cast<double>(b.max_tf), std::max(static_cast<double>(b.min_len), at));
  }
};

}  // namespace scipis
