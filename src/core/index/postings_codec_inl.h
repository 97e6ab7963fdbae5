// write_region, a template so that the writer's length lookup inlines.
#pragma once

#include <algorithm>

#include "util/bytes.h"
#include "util/crc32c.h"

namespace scipis {

template <typename LenOf>
char* write_region(char* out, const uint64_t* seqs, const uint32_t* tfs, size_t n,
                   uint64_t base, LenOf&& len_of) {
  char* const start = out;
  const size_t nb = (n + kBlockPostings - 1) / kBlockPostings;
  out = write_varint(out, n);
  // Payloads go after the skip list, whose entries need their sizes:
  // each payload's size is computed first.
  uint64_t gaps[kBlockPostings], tf1[kBlockPostings];
  uint64_t prev_last = base;
  for (size_t b = 0; b < nb; b++) {
    const size_t lo = b * kBlockPostings, hi = std::min(n, lo + kBlockPostings);
    uint64_t max_gap = 0, max_tf = 0, min_len = UINT64_MAX;
    // The posting of the largest tf / length (the first of equals).
    uint64_t best_tf = 0, best_len = 1;
    uint64_t next = b ? prev_last + 1 : base;
    for (size_t i = lo; i < hi; i++) {
      max_gap = std::max(max_gap, seqs[i] - next);
      next = seqs[i] + 1;
      max_tf = std::max<uint64_t>(max_tf, tfs[i]);
      const uint64_t len = len_of(seqs[i]);
      const uint64_t bound_len = len ? std::max<uint64_t>(len, tfs[i]) : 0;
      min_len = std::min(min_len, bound_len);
      if (bound_len && static_cast<unsigned __int128>(tfs[i]) * best_len >
                           static_cast<unsigned __int128>(best_tf) * bound_len) {
        best_tf = tfs[i];
        best_len = bound_len;
      }
    }
    if (min_len == 0) best_tf = best_len = 0;
    const size_t count = hi - lo;
    const size_t payload = 2 + packed_bytes(count, bit_width(max_gap)) +
                           packed_bytes(count, bit_width(max_tf - 1)) + 4;
    out = write_varint(out, seqs[hi - 1] - prev_last);
    out = write_varint(out, payload);
    out = write_varint(out, max_tf);
    out = write_varint(out, min_len);
    out = write_varint(out, best_tf);
    out = write_varint(out, best_len);
    prev_last = seqs[hi - 1];
  }
  out = write_u32(out, crc32c(start, static_cast<size_t>(out - start)));
  prev_last = base;
  for (size_t b = 0; b < nb; b++) {
    const size_t lo = b * kBlockPostings, hi = std::min(n, lo + kBlockPostings);
    const size_t count = hi - lo;
    uint64_t next = b ? prev_last + 1 : base, max_gap = 0, max_tf = 0;
    for (size_t i = lo; i < hi; i++) {
      gaps[i - lo] = seqs[i] - next;
      next = seqs[i] + 1;
      tf1[i - lo] = tfs[i] - 1;
      max_gap = std::max(max_gap, gaps[i - lo]);
      max_tf = std::max(max_tf, tf1[i - lo]);
    }
    char* const payload = out;
    const unsigned gw = bit_width(max_gap), tw = bit_width(max_tf);
    *out++ = static_cast<char>(gw);
    *out++ = static_cast<char>(tw);
    out = pack_bits(out, gaps, count, gw);
    out = pack_bits(out, tf1, count, tw);
    out = write_u32(out, crc32c(payload, static_cast<size_t>(out - payload)));
    prev_last = seqs[hi - 1];
  }
  return out;
}

}  // namespace scipis
