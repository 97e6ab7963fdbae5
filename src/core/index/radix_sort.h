// LSD radix sort of (64-bit key, 64-bit value) pairs by key: a flush sorts
// millions of term hashes, and eight linear passes beat n log n compares.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scipis {

struct KeyIndex {
  uint64_t key;
  uint64_t value;
};

// Sorts [a, a+n) by key; scratch must hold n elements. The passes look at
// the top 32 bits only; runs that tie there (few, for hashes) are finished
// by comparison.
inline void radix_sort(KeyIndex* a, size_t n, KeyIndex* scratch) {
  if (n < 2) return;
  size_t count[8][256] = {};
  for (size_t i = 0; i < n; i++)
    for (int d = 4; d < 8; d++) count[d][(a[i].key >> (8 * d)) & 0xff]++;
  KeyIndex* from = a;
  KeyIndex* to = scratch;
  for (int d = 4; d < 8; d++) {
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
  for (size_t i = 1; i < n; i++) {
    // Insertion within runs of equal top halves.
    if ((a[i].key >> 32) != (a[i - 1].key >> 32) || a[i].key >= a[i - 1].key) continue;
    KeyIndex v = a[i];
    size_t j = i;
    while (j > 0 && (a[j - 1].key >> 32) == (v.key >> 32) && a[j - 1].key > v.key) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = v;
  }
}

}  // namespace scipis
