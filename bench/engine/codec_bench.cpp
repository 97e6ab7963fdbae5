// The postings codec against alternatives, on the posting lists of a real
// index (issue 11: "bit-packed or a varint scheme you measure against
// alternatives"):
//
//   bench/build/codec_bench INDEX_DIR [PASSES]
//
// Every posting list of every segment stored in the data file (a term of
// one document is kept in its dictionary entry instead, by every scheme
// alike, and left out) is decoded with the segment reader, then encoded
// as:
//   varint      LEB128 of each document gap, then of its tf;
//   varint-tf1  LEB128 of gap*2 + (tf == 1), the tf only when it is not 1
//               (Lucene 4's .doc layout);
//   packed128   blocks of 128 postings bit-packed at the block's widest gap
//               and widest tf, two width bytes a block, the last partial
//               block as varint-tf1 (Lucene's ForUtil without exceptions);
// and set against what the format stores (each region's bytes: bit-packed
// blocks of 128 behind a skip list, a block's max tf and min length, crcs).
// Decoding is timed for the format (decode_postings) and varint, PASSES
// times over every list, best pass. Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "index/segment_format.h"
#include "index/segment_reader.h"
#include "query/collection.h"
#include "util/bytes.h"
#include "util/error.h"
#include "util/fileio.h"

using namespace scipis;
using Clock = std::chrono::steady_clock;

namespace {

size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 128) {
    v >>= 7;
    n++;
  }
  return n;
}

unsigned width(uint64_t v) { return v ? 64 - static_cast<unsigned>(__builtin_clzll(v)) : 0; }

struct List {
  std::string_view region;
  TermRef ref;
  uint64_t limit;
  const std::string* path;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: codec_bench INDEX_DIR [PASSES]\n");
    return 2;
  }
  const int passes = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  try {
    Collection c(argv[1]);
    const uint32_t splits = c.manifest().split_factor;
    std::vector<std::string> data(c.segments().size()), paths(c.segments().size());
    std::vector<List> lists;
    uint64_t singletons = 0, postings = 0, format_bytes = 0;
    uint64_t varint = 0, varint_tf1 = 0, packed = 0;
    std::vector<Posting> ps;
    std::string enc;  // the varint stream, decoded below
    std::vector<size_t> enc_at;
    size_t si = 0;
    for (SegmentState& s : c.segments()) {
      paths[si] = s.tf_dir + seg_data(file_seg_of(s.ref));
      if (!read_file(paths[si], data[si])) fail_io(ENOENT, "read", paths[si]);
      const IndexerState& ix = c.indexer(s.ref.indexer);
      for (uint32_t sp = 0; sp < splits; sp++) {
        for (auto& [term, ref] : c.tf_meta(s, sp).all()) {
          if (ref.len == 0) {
            singletons++;
            continue;
          }
          const std::string_view read = std::string_view(data[si]).substr(ref.read_offset(), ref.read_len());
          const std::string_view region = region_in(paths[si], read, ref);
          ps.clear();
          decode_postings(paths[si], region, ref, ix.docs(), ps);
          lists.push_back({region, ref, ix.docs(), &paths[si]});
          postings += ps.size();
          format_bytes += ref.len;
          enc_at.push_back(enc.size());
          uint64_t prev = ref.base;
          bool first = true;
          for (size_t i = 0; i < ps.size(); i++) {
            const uint64_t gap = first ? ps[i].seq - ref.base : ps[i].seq - prev;
            first = false;
            prev = ps[i].seq;
            varint += varint_len(gap) + varint_len(ps[i].tf);
            put_varint(enc, gap);
            put_varint(enc, ps[i].tf);
            const uint64_t folded = varint_len(gap * 2 + (ps[i].tf == 1)) + (ps[i].tf == 1 ? 0 : varint_len(ps[i].tf));
            varint_tf1 += folded;
          }
          // packed128: full blocks bit-packed, the rest as varint-tf1.
          prev = ref.base;
          size_t i = 0;
          for (; i + 128 <= ps.size(); i += 128) {
            uint64_t gmax = 0, tmax = 0;
            for (size_t j = i; j < i + 128; j++) {
              gmax = std::max(gmax, ps[j].seq - prev);
              tmax = std::max<uint64_t>(tmax, ps[j].tf - 1);
              prev = ps[j].seq;
            }
            packed += 2 + (128 * width(gmax) + 7) / 8 + (128 * width(tmax) + 7) / 8;
          }
          for (; i < ps.size(); i++) {
            const uint64_t gap = ps[i].seq - prev;
            prev = ps[i].seq;
            packed += varint_len(gap * 2 + (ps[i].tf == 1)) + (ps[i].tf == 1 ? 0 : varint_len(ps[i].tf));
          }
        }
      }
      si++;
    }
    enc_at.push_back(enc.size());
    // Decoding, best of passes: the format's reader, then plain varint.
    double best_format = 1e300, best_varint = 1e300;
    uint64_t check = 0;
    for (int p = 0; p < passes; p++) {
      auto t0 = Clock::now();
      for (const List& l : lists) {
        ps.clear();
        decode_postings(*l.path, l.region, l.ref, l.limit, ps);
        check += ps.back().seq;
      }
      best_format = std::min(best_format, std::chrono::duration<double>(Clock::now() - t0).count());
      t0 = Clock::now();
      for (size_t k = 0; k < lists.size(); k++) {
        Cursor cur(enc.data() + enc_at[k], enc_at[k + 1] - enc_at[k]);
        ps.clear();
        uint64_t seq = lists[k].ref.base;
        while (cur.left() > 0) {
          seq += cur.varint();
          ps.push_back({seq, static_cast<uint32_t>(cur.varint())});
        }
        check += ps.back().seq;
      }
      best_varint = std::min(best_varint, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    auto per = [&](uint64_t b) { return static_cast<double>(b) / static_cast<double>(postings); };
    std::printf(
        "{\"index\": \"%s\", \"segments\": %zu, \"lists\": %zu, \"singletons\": %llu, \"postings\": %llu,\n"
        " \"bytes\": {\"format\": %llu, \"varint\": %llu, \"varint_tf1\": %llu, \"packed128\": %llu},\n"
        " \"bytes_per_posting\": {\"format\": %.3f, \"varint\": %.3f, \"varint_tf1\": %.3f, \"packed128\": %.3f},\n"
        " \"decode_mpostings_per_s\": {\"format\": %.1f, \"varint\": %.1f}, \"passes\": %d, \"check\": %llu}\n",
        argv[1], c.segments().size(), lists.size(), static_cast<unsigned long long>(singletons),
        static_cast<unsigned long long>(postings), static_cast<unsigned long long>(format_bytes),
        static_cast<unsigned long long>(varint), static_cast<unsigned long long>(varint_tf1),
        static_cast<unsigned long long>(packed), per(format_bytes), per(varint), per(varint_tf1), per(packed),
        postings / best_format / 1e6, postings / best_varint / 1e6, passes,
        static_cast<unsigned long long>(check % 1000));
  } catch (const Error& e) {
    std::fprintf(stderr, "codec_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
