// Distinct terms of a build, estimated with HyperLogLog (2^16 registers,
// relative error about 0.4%): an exact count needs memory that grows with
// the collection, and a build's memory must not. Each indexer feeds the
// hash of every term new to its in-memory index; sketches merge by max.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace scipis {

class DistinctTerms {
 public:
  static constexpr int kBits = 16;
  static constexpr size_t kRegisters = size_t{1} << kBits;

  // Registers shared between sketches and the states they load from: a
  // refresh starts its indexers from the old registers (or zeros) and most
  // move none, so a sketch copies them only when an add first raises one
  // (each copy and clear of the 64 KiB was a few percent of an append's).
  using Shared = std::shared_ptr<const std::vector<uint8_t>>;

  DistinctTerms() : base_(zeros()) {}

  // hash: a well-mixed 64-bit hash of the term (token_hash).
  void add(uint64_t hash) {
    const size_t idx = hash >> (64 - kBits);
    const uint64_t rest = (hash << kBits) | (uint64_t{1} << (kBits - 1));
    const uint8_t rank = static_cast<uint8_t>(__builtin_clzll(rest) + 1);
    if (rank > cur()[idx]) {
      own()[idx] = rank;
      moved_ = true;
    }
  }
  // Whether add raised a register since construction or load.
  bool moved() const { return moved_; }
  void merge(const DistinctTerms& o) {
    uint8_t* a = own();
    const uint8_t* b = o.cur();
    size_t i = 0;
#if defined(__SSE2__)
    // A refresh merges per commit; byte by byte this was a sixth of its time.
    for (; i + 16 <= kRegisters; i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
      const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(a + i), _mm_max_epu8(x, y));
    }
#endif
    for (; i < kRegisters; i++) a[i] = std::max(a[i], b[i]);
  }
  // The registers, to keep with a resumable flush and load again.
  const std::vector<uint8_t>& registers() const { return own_.empty() ? *base_ : own_; }
  void load(const std::vector<uint8_t>& r) {
    if (r.size() == kRegisters) load(std::make_shared<const std::vector<uint8_t>>(r));
    moved_ = false;
  }
  // The same without a copy (ignored unless kRegisters of them).
  void load(Shared r) {
    if (r && r->size() == kRegisters) {
      base_ = std::move(r);
      own_.clear();
    }
    moved_ = false;
  }
  uint64_t estimate() const { return estimate(registers()); }
  // The estimate of registers r (kRegisters of them).
  static uint64_t estimate(const std::vector<uint8_t>& r) {
    // 2^-k from a table and four sums: a refresh estimates per commit, and
    // one chained sum over the registers was a tenth of a small one's time.
    static const auto kPow = [] {
      std::array<double, 256> t{};
      for (size_t k = 0; k < t.size(); k++) t[k] = std::ldexp(1.0, -static_cast<int>(k));
      return t;
    }();
    double part[4] = {0, 0, 0, 0};
    size_t zeros = 0;
    size_t i = 0;
    for (; i + 4 <= r.size(); i += 4)
      for (size_t j = 0; j < 4; j++) {
        part[j] += kPow[r[i + j]];
        zeros += r[i + j] == 0;
      }
    for (; i < r.size(); i++) {
      part[0] += kPow[r[i]];
      zeros += r[i] == 0;
    }
    const double sum = (part[0] + part[1]) + (part[2] + part[3]);
    const double m = static_cast<double>(r.size());
    double e = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && zeros > 0)
      e = m * std::log(m / static_cast<double>(zeros));  // linear counting
    return static_cast<uint64_t>(std::llround(e));
  }

 private:
  static const Shared& zeros() {
    static const Shared z = std::make_shared<const std::vector<uint8_t>>(kRegisters, 0);
    return z;
  }
  const uint8_t* cur() const { return own_.empty() ? base_->data() : own_.data(); }
  uint8_t* own() {
    if (own_.empty()) own_ = *base_;
    return own_.data();
  }
  Shared base_;
  std::vector<uint8_t> own_;  // empty until a register moves
  bool moved_ = false;
};

}  // namespace scipis
