// The TF-IDF index alone on one core: a corpus sample goes through the
// block scan and counter once, and what the counter drains (term, count,
// document) is kept; then that stream is replayed into TfIdfIndex in the
// indexer's batches, flushing (serialise, output dropped) whenever the
// index is full. Three replays; each prints ns per add and flush seconds.
//   build/index_replay --corpus DIR [--mib 512] [--tfidf-mib 128] [--depth 4] [--split 1]
//                      [--partitions P [--apply N]]
// --partitions P (a what-if for a design not built, session 52): the budget is
// split among P indexes, each taking the terms whose first byte falls in
// its range of byte values (ranges of about equal adds, from the stream);
// a document's terms wait in their partition's queue, and a queue is
// added in one go once it holds N terms (default 4096), so that its index
// (budget / P) stays in cache while it does. Each index flushes when full.
// It measured slower adds than one index (bench/README.md, session 52).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "corpus_files.h"
#include "index/block_counter.h"
#include "index/tfidf_index.h"
#include "index/tokenizer.h"
#include "scipis_engine.h"

using namespace scipis;

namespace {

struct Drained {
  uint64_t off;  // of the term's bytes in the term store
  uint32_t len, count, doc;
};

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  size_t want = size_t{512} << 20;
  uint64_t budget = uint64_t{128} << 20;
  int depth = 4;
  int split = 1;
  int parts = 1;
  size_t apply_at = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--corpus")) dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--mib")) want = std::strtoull(argv[i + 1], nullptr, 10) << 20;
    else if (!std::strcmp(argv[i], "--tfidf-mib")) budget = std::strtoull(argv[i + 1], nullptr, 10) << 20;
    else if (!std::strcmp(argv[i], "--depth")) depth = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--split")) split = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--partitions")) parts = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--apply")) apply_at = std::strtoull(argv[i + 1], nullptr, 10);
  }
  if (dir.empty() || depth < 1 || split < 1 || parts < 1 || parts > 256 || apply_at < 1) {
    std::fprintf(stderr,
                 "usage: index_replay --corpus DIR [--mib N] [--tfidf-mib N] [--depth N] [--split N] "
                 "[--partitions 1-256 [--apply N]]\n");
    return 2;
  }
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  Tokenizer tk(delim);
  BlockCounter counter;
  auto scratch = std::make_unique<ScanScratch>();
  constexpr size_t kBlock = size_t{1} << 20;
  std::vector<unsigned char> buf(kBlock + kMaxToken + 64);
  std::string terms;
  std::vector<Drained> stream;
  size_t total = 0;
  uint32_t doc = 0;
  for (const auto& f : corpus_files(dir)) {
    const std::string content = file_bytes(f);
    for (size_t off = 0; off < content.size();) {
      const size_t m = std::min(kBlock, content.size() - off);
      std::memcpy(buf.data(), content.data() + off, m);
      size_t cut = off + m == content.size() ? m : tk.safe_cut(buf.data(), m);
      if (cut == 0) cut = m;
      off += cut;
      const char* base = reinterpret_cast<const char*>(buf.data());
      auto drain = [&] {
        counter.drain(base, [&](const char* s, size_t n, uint64_t, uint64_t, uint64_t, uint32_t c) {
          stream.push_back({terms.size(), static_cast<uint32_t>(n), c, doc});
          terms.append(s, n);
        });
      };
      tk.tokenize_block(buf.data(), cut, buf.size(), *scratch, [&](BlockToken* t, size_t nt) {
        for (size_t i = 0; i < nt; i++) {
          counter.add(base, t[i].off, t[i].len, t[i].prefix, t[i].tail, t[i].hash);
          if (counter.full()) drain();
        }
      });
      drain();
    }
    total += content.size();
    doc++;
    if (total >= want) break;
  }
  terms.append(16, ' ');  // readable slack after the last term

  // Partition of each first byte: ranges of about equal adds.
  uint8_t part_of[256];
  {
    uint64_t freq[256] = {};
    for (const Drained& d : stream) freq[static_cast<unsigned char>(terms[d.off])]++;
    uint64_t acc = 0;
    for (int b = 0; b < 256; b++) {
      part_of[b] = static_cast<uint8_t>(std::min<uint64_t>(parts - 1, acc * parts / std::max<size_t>(1, stream.size())));
      acc += freq[b];
    }
  }

  for (int rep = 1; rep <= 3; rep++) {
    const auto t0 = std::chrono::steady_clock::now();
    double flush_s = 0;
    int flushes = 0;
    size_t flushed_terms = 0;
    OutBuffer data;
    std::vector<OutBuffer> metas;
    auto flush = [&](TfIdfIndex& tf) {
      const auto f0 = std::chrono::steady_clock::now();
      flushed_terms += tf.terms();
      tf.serialise(split, data, metas);
      tf.clear();
      flushes++;
      flush_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
    };
    if (parts > 1) {
      std::vector<std::unique_ptr<TfIdfIndex>> tfs;
      for (int p = 0; p < parts; p++) tfs.push_back(std::make_unique<TfIdfIndex>(budget / parts, depth));
      struct Waiting {
        TermKey k;
        uint32_t count, doc;
      };
      std::vector<std::vector<Waiting>> queue(parts);
      for (auto& q : queue) q.reserve(apply_at);
      uint32_t since = 0;
      auto apply = [&](int p) {
        TfIdfIndex& tf = *tfs[static_cast<size_t>(p)];
        for (const Waiting& w : queue[static_cast<size_t>(p)]) {
          tf.add(w.k, w.doc, w.count);
          if (++since % TfIdfIndex::kAddsPerFullCheck == 0 && tf.full()) flush(tf);
        }
        queue[static_cast<size_t>(p)].clear();
      };
      for (const Drained& d : stream) {
        const char* p = terms.data() + d.off;
        const int part = part_of[static_cast<unsigned char>(*p)];
        auto& q = queue[static_cast<size_t>(part)];
        q.push_back({TermKey::of(std::string_view(p, d.len)), d.count, d.doc});
        if (q.size() == apply_at) apply(part);
      }
      for (int p = 0; p < parts; p++) {
        apply(p);
        flush(*tfs[static_cast<size_t>(p)]);
      }
    } else {
      TfIdfIndex tf(budget, depth);
      constexpr size_t kBatch = 512;  // as Pipeline::indexer_loop
      TermKey batch[kBatch];
      uint32_t counts[kBatch];
      uint32_t since = 0;
      for (size_t i = 0; i < stream.size();) {
        const uint32_t d = stream[i].doc;
        size_t nb = 0;
        while (i < stream.size() && stream[i].doc == d && nb < kBatch) {
          const char* p = terms.data() + stream[i].off;
          batch[nb] = TermKey::of(std::string_view(p, stream[i].len));
          counts[nb++] = stream[i].count;
          i++;
        }
        tf.add_batch(batch, counts, nb, d, [&] {
          if (++since % TfIdfIndex::kAddsPerFullCheck == 0 && tf.full()) flush(tf);
        });
      }
      flush(tf);
    }
    const double all = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "{\"replay\":%d,\"mib\":%.0f,\"docs\":%u,\"adds\":%zu,\"add_s\":%.3f,\"ns_per_add\":%.1f,"
        "\"flush_s\":%.3f,\"flushes\":%d,\"flushed_terms\":%zu,\"flush_ns_per_term\":%.1f}\n",
        rep, static_cast<double>(total) / 1048576.0, doc, stream.size(), all - flush_s,
        (all - flush_s) * 1e9 / static_cast<double>(stream.size()), flush_s, flushes, flushed_terms,
        flush_s * 1e9 / static_cast<double>(flushed_terms ? flushed_terms : 1));
    std::fflush(stdout);
  }
  return 0;
}
