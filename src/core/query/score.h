// The spec's ranking formulas, shared by every search path (collections
// and the index access method) so that equal inputs give equal bits.
#pragma once

#include <cmath>

#include "scipis_engine.h"

namespace scipis {

inline double term_idf(scipis_ranking ranking, double N, double df) {
  return ranking == SCIPIS_BM25 ? std::log(1.0 + (N - df + 0.5) / (df + 0.5))
                                : 1.0 + std::log((N + 1.0) / (df + 1.0));
}

inline double term_score(scipis_ranking ranking, double qf, double idf, double tf, double len,
                         double avgdl) {
  if (ranking == SCIPIS_BM25) return qf * idf * tf / (tf + 1.2 * (1.0 - 0.75 + 0.75 * len / avgdl));
  return qf * std::sqrt(tf) * idf / std::sqrt(len);
}

}  // namespace scipis
