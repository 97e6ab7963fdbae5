// A trigram index over the paths of one segment, as plocate keeps one: for
// every 3 consecutive bytes found in some path, the records whose path
// holds them. A pattern's literal runs then name a few candidate records,
// and only those are matched, instead of every path of the segment.
//
// Path trigrams ("SCIPISPT"), little-endian, the 32-byte header of
// index/segment_format.h: aux = T trigrams, count = n records (the
// segment's paths in record order, numbered 0..n-1, n < 2^32); body_crc
// covers the table only.
//   table: T entries of kTrigramEntry bytes, trigrams strictly ascending:
//     u32 trigram (b0 << 16 | b1 << 8 | b2, so in byte order), u32 c (its
//     records, 1..n), u64 end of its list and crc, from the first list's
//     start (a list starts where the one before ends, the first at 0; the
//     last one ends the file).
//   lists, back to back in table order; each: its blocks, then a u32
//     crc32c of them. Records ascending in blocks of kTrigramBlock (the
//     last one shorter); block j of k records r_0 < ... < r_{k-1}:
//       varint r_0 for j = 0, else r_0 - (r_0 of block j-1) - kTrigramBlock
//         (so blocks are skipped over without being decoded);
//       if k > 1: u8 w (0..32), then r_i - r_{i-1} - 1 for i = 1..k-1,
//         w bits each, from the lowest bit of each byte up, in
//         ceil((k-1) * w / 8) bytes.
// Packed blocks rather than a varint a gap: a crawl's lists are mostly
// dense (every path holds "/da"), where a varint takes a byte a record
// and a block of 128 gaps of 1 two bytes in all. Measured: 8.8 against 29.1
// bytes a path for 1M paths like /data/p07/job01234/out0012345.log, 35
// against 95 for 300,000 paths of a Debian root file system.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "query/path_pattern.h"

namespace scipis {

inline constexpr char kMagicPathTrigrams[] = "SCIPISPT";
constexpr size_t kTrigramEntry = 16;
constexpr uint32_t kTrigramBlock = 128;

// The file for the paths of one segment: paths is their bytes back to
// back, lens their lengths in record order. Memory besides the file:
// about 100 bytes per distinct trigram and 5 per block of a list.
std::string build_path_trigrams(std::string_view paths, std::span<const uint32_t> lens);

// Reads a file of build_path_trigrams in place (file is typically mapped;
// it must outlive this). Opening checks the header and the table's crc,
// allocating nothing by them; each table entry is bounded against the file,
// and each list's crc checked, when a query reads it. Damage throws
// SCIPIS_E_CORRUPT naming path.
// One trigram's list as read in place: its blocks (len bytes), then its
// crc; count records.
struct TrigramList {
  const unsigned char* data;
  size_t len;
  uint32_t count;
};

// The first of n table entries (kTrigramEntry bytes, a u32 trigram
// first, ascending) whose trigram is not below t; n if none.
size_t trigram_lower_bound(const unsigned char* table, size_t n, uint32_t t);

// The trigrams of pattern's literal runs, ascending, each once.
std::vector<uint32_t> pattern_trigrams(const PathPattern& pattern);

// The records (of a segment of records records) that every list holds,
// ascending; each list's crc is checked as it is read, damage throws
// SCIPIS_E_CORRUPT naming path.
std::vector<uint32_t> intersect_trigram_lists(const std::string& path, std::vector<TrigramList> lists,
                                              uint32_t records);

class PathTrigrams {
 public:
  PathTrigrams(std::string path, std::string_view file);
  // The records, ascending, whose paths hold every trigram of every
  // literal run of pattern: a superset of its matches, to be confirmed by
  // pattern.matches. nullopt when no run has 3 bytes (every record is a
  // candidate then).
  std::optional<std::vector<uint32_t>> candidates(const PathPattern& pattern) const;
  uint64_t records() const { return records_; }
  size_t trigrams() const { return trigrams_; }
  size_t heap_bytes() const { return sizeof(*this) + path_.capacity(); }
  // Table entry i's trigram (i < trigrams(), ascending) and its list,
  // bounded (its crc unchecked): what a merge of segments' indexes copies.
  uint32_t trigram(size_t i) const;
  TrigramList list(size_t i) const;

 private:
  std::optional<TrigramList> find(uint32_t trigram) const;
  std::string path_;
  const unsigned char* table_ = nullptr;
  const unsigned char* lists_ = nullptr;
  uint64_t room_ = 0;  // the lists' bytes
  size_t trigrams_ = 0;
  uint32_t records_ = 0;
};

}  // namespace scipis
