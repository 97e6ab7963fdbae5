// Distinct terms of a build, estimated with HyperLogLog (2^16 registers,
// relative error about 0.4%): an exact count needs memory that grows with
// the collection, and a build's memory must not. Each indexer feeds the
// hash of every term new to its in-memory index; sketches merge by max.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace scipis {

class DistinctTerms {
 public:
  static constexpr int kBits = 16;
  static constexpr size_t kRegisters = size_t{1} << kBits;

  DistinctTerms() : reg_(kRegisters, 0) {}

  // hash: a well-mixed 64-bit hash of the term (token_hash).
  void add(uint64_t hash) {
    const size_t idx = hash >> (64 - kBits);
    const uint64_t rest = (hash << kBits) | (uint64_t{1} << (kBits - 1));
    const uint8_t rank = static_cast<uint8_t>(__builtin_clzll(rest) + 1);
    if (rank > reg_[idx]) reg_[idx] = rank;
  }
  void merge(const DistinctTerms& o) {
    for (size_t i = 0; i < kRegisters; i++)
      if (o.reg_[i] > reg_[i]) reg_[i] = o.reg_[i];
  }
  // The registers, to keep with a resumable flush and load again.
  const std::vector<uint8_t>& registers() const { return reg_; }
  void load(const std::vector<uint8_t>& r) {
    if (r.size() == kRegisters) reg_ = r;
  }
  uint64_t estimate() const {
    double sum = 0;
    size_t zeros = 0;
    // 2^-r by its bits (r <= 64 - kBits + 1): a refresh estimates per
    // commit, and ldexp per register was a tenth of a small one's time.
    for (uint8_t r : reg_) {
      sum += std::bit_cast<double>(static_cast<uint64_t>(1023 - r) << 52);
      zeros += r == 0;
    }
    const double m = static_cast<double>(kRegisters);
    double e = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
    if (e <= 2.5 * m && zeros > 0)
      e = m * std::log(m / static_cast<double>(zeros));  // linear counting
    return static_cast<uint64_t>(std::llround(e));
  }

 private:
  std::vector<uint8_t> reg_;
};

}  // namespace scipis
