// Dictionary lookups alone: TfMeta::find over the split files of one
// segment of an index, 5,000 random terms of each split looked up where
// they are and in the next split (where they are not), 3 passes, the mean
// per lookup of each. Compare formats by running it on indexes built by
// each (bench/build/index_bench --keep DIR).
//   bench/build/dict_bench INDEX_DIR
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "index/segment_reader.h"

using namespace scipis;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dict_bench INDEX_DIR\n");
    return 2;
  }
  std::vector<std::unique_ptr<TfMeta>> metas;
  for (const auto& e : std::filesystem::recursive_directory_iterator(argv[1])) {
    const std::string p = e.path().string();
    if (p.find("tfidf_index_0/seg_0.meta.") == std::string::npos) continue;
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    metas.push_back(std::make_unique<TfMeta>(p, ss.str()));
  }
  if (metas.size() < 2) {
    std::fprintf(stderr, "dict_bench: no split files of tfidf_index_0/seg_0 under %s\n", argv[1]);
    return 1;
  }
  std::mt19937 rng(1);
  std::vector<std::pair<size_t, std::string>> q;
  size_t terms = 0;
  for (size_t m = 0; m < metas.size(); m++) {
    const auto all = metas[m]->all();
    terms += all.size();
    for (int i = 0; i < 5000 && !all.empty(); i++) q.push_back({m, all[rng() % all.size()].first});
  }
  std::shuffle(q.begin(), q.end(), rng);
  std::printf("%zu splits, %zu terms, %zu lookups a pass\n", metas.size(), terms, q.size());
  for (int pass = 0; pass < 3; pass++) {
    size_t found = 0, wrong = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (const auto& [m, t] : q) found += metas[m]->find(t).has_value();
    auto t1 = std::chrono::steady_clock::now();
    for (const auto& [m, t] : q) wrong += metas[(m + 1) % metas.size()]->find(t).has_value();
    auto t2 = std::chrono::steady_clock::now();
    const double n = static_cast<double>(q.size());
    std::printf("pass %d: present %.3f us (%zu found), absent %.3f us (%zu found)\n", pass + 1,
                std::chrono::duration<double>(t1 - t0).count() * 1e6 / n, found,
                std::chrono::duration<double>(t2 - t1).count() * 1e6 / n, wrong);
  }
  return 0;
}
