#include <cstdio>
#include <random>
#include <string>
#include <vector>
#include "index/tfidf_index.h"
#include "index/out_buffer.h"
using namespace scipis;
int main() {
  FILE* f = fopen("/dev/stdout", "wb");
  for (int n : {1, 2, 3, 5, 17, 32, 33, 100, 5000}) {
    for (int sf : {1, 4}) {
      std::mt19937 rng(n * 7 + sf);
      std::vector<std::string> terms;
      for (int i = 0; i < n; i++) {
        std::string t;
        int len = 1 + rng() % 20;
        for (int j = 0; j < len; j++) t.push_back("ab0123456789xyz_\xc3Q"[rng() % 19]);
        terms.push_back(t);
      }
      TfIdfIndex tf(8 << 20, 4);
      for (int d = 0; d < 50; d++)
        for (int k = 0; k < 1 + n / 10; k++) tf.add(TermKey::of(terms[rng() % n]), d, 1 + rng() % 3);
      OutBuffer data; std::vector<OutBuffer> metas;
      tf.serialise(sf, data, metas, nullptr);
      fwrite(data.data(), 1, data.size(), f);
      for (auto& m : metas) fwrite(m.data(), 1, m.size(), f);
    }
  }
}
