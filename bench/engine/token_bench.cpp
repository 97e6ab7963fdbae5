// The indexers' token path alone on one core: the bulk block scan and the
// block counter over 1 MiB blocks of a corpus sample held in memory, best
// of 7 passes, in ns per token. What is left when reading, index adds and
// flushes are taken away.
//   build/token_bench --corpus DIR [--mib 256]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "corpus_files.h"
#include "index/block_counter.h"
#include "index/tokenizer.h"
#include "scipis_engine.h"

using namespace scipis;

int main(int argc, char** argv) {
  std::string dir;
  size_t want = size_t{256} << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--corpus")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--mib")) want = std::strtoull(argv[i + 1], nullptr, 10) << 20;
  }
  if (dir.empty()) {
    std::fprintf(stderr, "usage: token_bench --corpus DIR [--mib N]\n");
    return 2;
  }
  std::string all;
  for (const auto& f : corpus_files(dir)) {
    all += file_bytes(f);
    if (all.size() >= want) break;
  }
  constexpr size_t kBlock = size_t{1} << 20;
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  Tokenizer tk(delim);
  std::vector<unsigned char> buf(kBlock + 64);
  BlockCounter counter;
  auto scratch = std::make_unique<ScanScratch>();
  uint64_t tokens = 0, distinct = 0, check = 0;
  double best = 1e30;
  for (int pass = 0; pass < 7; pass++) {
    tokens = distinct = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t off = 0; off + kBlock <= all.size(); off += kBlock) {
      std::memcpy(buf.data(), all.data() + off, kBlock);
      const size_t n = tk.safe_cut(buf.data(), kBlock);
      const char* base = reinterpret_cast<const char*>(buf.data());
      auto drain = [&] {
        counter.drain(base, [&](const char*, size_t len, uint64_t pre, uint64_t, uint64_t, uint32_t c) {
          distinct++;
          check += len + c + pre;
        });
      };
      // As Pipeline::indexer_loop does.
      tk.tokenize_block(buf.data(), n, buf.size(), *scratch, [&](BlockToken* t, size_t nt) {
        counter.add_tokens(base, t, nt, drain);
        tokens += nt;
      });
      drain();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  const double mib = static_cast<double>(all.size() / kBlock);
  std::printf(
      "{\"mib\":%.0f,\"tokens\":%llu,\"distinct_per_block\":%llu,\"best_s\":%.3f,"
      "\"ns_per_token\":%.2f,\"s_per_gib\":%.2f,\"check\":%llu}\n",
      mib, static_cast<unsigned long long>(tokens), static_cast<unsigned long long>(distinct),
      best, best * 1e9 / static_cast<double>(tokens), best / (mib / 1024.0),
      static_cast<unsigned long long>(check & 1));
  return 0;
}
