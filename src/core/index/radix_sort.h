// LSD radix sort of (64-bit key, 32-bit value) pairs by key: a flush sorts
// millions of term hashes, and eight linear passes beat n log n compares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scipis {

struct KeyIndex {
  uint64_t key;
  uint32_t index;
};

// Sorts [a, a+n) by key, stable; scratch must hold n elements.
inline void radix_sort(KeyIndex* a, size_t n, KeyIndex* scratch) {
  if (n < 2) return;
  size_t count[8][256] = {};
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 8; d++) count[d][(a[i].key >> (8 * d)) & 0xff]++;
  KeyIndex* from = a;
  KeyIndex* to = scratch;
  for (int d = 0; d < 8; d++) {
    // A digit all keys share needs no pass.
    if (count[d][(a[0].key >> (8 * d)) & 0xff] == n) continue;
    size_t at[256];
    size_t sum = 0;
    for (int b = 0; b < 256; b++) {
      at[b] = sum;
      sum += count[d][b];
    }
    for (size_t i = 0; i < n; i++) to[at[(from[i].key >> (8 * d)) & 0xff]++] = from[i];
    KeyIndex* t = from;
    from = to;
    to = t;
  }
  if (from != a)
    for (size_t i = 0; i < n; i++) a[i] = from[i];
}

}  // namespace scipis
