// A deliberately naive scorer for the engine tests, written from the spec
// and sharing no code with the engine.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace brute {

inline bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c >= 0x80;
}

// delim, when given, is a delimiter table (1 = delimiter) in place of the
// spec's default word bytes.
inline std::vector<std::string> tokenize(const std::string& s,
                                         const unsigned char* delim = nullptr) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    for (size_t i = 0; i < cur.size(); i += 255) out.push_back(cur.substr(i, 255));
    cur.clear();
  };
  for (unsigned char c : s) {
    if (delim ? !delim[c] : word_byte(c))
      cur += (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : static_cast<char>(c);
    else
      flush();
  }
  flush();
  return out;
}

struct Doc {
  std::string path;
  std::map<std::string, int> tf;
  size_t len = 0;
};

struct Hit {
  std::string path;
  double score;
};

inline std::vector<Hit> search(const std::vector<Doc>& docs, const std::string& q,
                               bool bm25, bool all) {
  std::map<std::string, int> qf;
  std::vector<std::string> order;
  for (const auto& t : tokenize(q)) {
    if (!qf.count(t)) order.push_back(t);
    qf[t]++;
  }
  double n = 0, total = 0;
  for (const auto& d : docs)
    if (d.len) {
      n++;
      total += static_cast<double>(d.len);
    }
  std::map<std::string, double> df;
  for (const auto& t : order)
    for (const auto& d : docs) df[t] += d.tf.count(t) ? 1 : 0;
  std::vector<Hit> hits;
  for (const auto& d : docs) {
    double score = 0;
    size_t matched = 0;
    for (const auto& t : order) {
      auto it = d.tf.find(t);
      if (it == d.tf.end()) continue;
      matched++;
      double tf = it->second, len = static_cast<double>(d.len);
      if (bm25) {
        double idf = std::log(1 + (n - df[t] + 0.5) / (df[t] + 0.5));
        score += qf[t] * idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * len / (total / n)));
      } else {
        double idf = 1 + std::log((n + 1) / (df[t] + 1));
        // sqrt(tf / len): rows of equal tf / length score equal bits, so
        // the spec's tie order (path) decides between them, as it does in
        // the engine.
        score += qf[t] * idf * std::sqrt(tf / len);
      }
    }
    if (matched == 0 || (all && matched < order.size())) continue;
    hits.push_back({d.path, score});
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.score != b.score ? a.score > b.score : a.path < b.path;
  });
  return hits;
}

}  // namespace brute
