#include <chrono>
#include <cstdio>
#include <string>
#include <vector>
#include "index/tfidf_index.h"
#include "index/out_buffer.h"
using namespace scipis;
int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 20000;
  std::vector<std::string> terms = {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "line", "123", "x"};
  double ctor = 0, add = 0, ser = 0, dtor = 0;
  for (int i = 0; i < iters; i++) {
    auto t0 = std::chrono::steady_clock::now();
    auto* tf = new TfIdfIndex(64 << 10, 4);
    auto t1 = std::chrono::steady_clock::now();
    for (auto& t : terms) tf->add(TermKey::of(t), 1000 + i, 1);
    auto t2 = std::chrono::steady_clock::now();
    OutBuffer data; std::vector<OutBuffer> metas;
    tf->serialise(1, data, metas, nullptr);
    auto t3 = std::chrono::steady_clock::now();
    delete tf;
    auto t4 = std::chrono::steady_clock::now();
    ctor += std::chrono::duration<double>(t1 - t0).count(); add += std::chrono::duration<double>(t2 - t1).count();
    ser += std::chrono::duration<double>(t3 - t2).count(); dtor += std::chrono::duration<double>(t4 - t3).count();
  }
  printf("us per: ctor %.2f add %.2f serialise %.2f dtor %.2f\n", ctor / iters * 1e6, add / iters * 1e6, ser / iters * 1e6, dtor / iters * 1e6);
}
