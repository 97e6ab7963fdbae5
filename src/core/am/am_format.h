// The access method's segment: one immutable byte stream, cut by the C
// side into the payloads of consecutive index pages (each page checked by
// its own crc there). Layout, all little-endian:
//
//   lens     ndocs lengths in tokens of len_bytes() each (1, 2 or 4: the
//            narrowest that holds every length; all ones = NULL value)
//   tids     the rows' 48-bit TID keys (block << 16 | offset) in groups of
//            kTidGroup rows: first a directory, per group u32 smallest
//            block, u8 bits of block - smallest, u8 bits of offset, a 6-byte
//            offset of its bits from the end of the directory; then the
//            groups' bits, row i at bit i * (both widths), block difference
//            above offset, least significant bit first, each group starting
//            on a byte. Version 1 and 2 segments hold ndocs x (6-byte TID
//            key, u32 length) instead of both.
//   vals     (version 4) per filter column (the index's columns after the
//            first), in groups of kValGroup rows: a directory, per group
//            u64 smallest and u64 largest key of its non-NULL rows, u64 mask
//            of its NULL rows, u64 step (the greatest common divisor of the
//            keys minus the smallest; 1 when they are all equal), u8 bits, a
//            6-byte offset of its bits from the end of the directory; then
//            the groups' bits, row i's (key - smallest) / step at bit
//            i * bits (0 for NULL), each group starting on a byte; the next
//            column's directory follows
//   groups   per kGroupTerms terms in ascending byte order: a dictionary
//            block (varint count; per term u8 bytes shared with the previous
//            term, u8 suffix length, suffix, varint df, then varint ordinal
//            and tf when df = 1, else varint region bytes), then the
//            regions of its terms (index/postings_codec.h, ordinals from 0)
//   index    per group: u64 key of its first term, u64 offset, u32 dictionary
//            block bytes, u32 group bytes
//   footer   kFooterBytes, at the end: u32 magic, u32 version, u64 ndocs,
//            counted, tokens, nterms, index_off, groups, u32 flags (bit 0
//            kSegFlagTidsAscend, bits 8-9 log2 of len_bytes, bits 16-20 the
//            number of filter columns), u32 crc32c of
//            what precedes it
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scipis::am {

constexpr uint32_t kSegMagic = 0x53414d53;  // "SMAS"
// Version 2 adds the footer's flags (version 1 segments are read as
// having none); version 3 keeps lengths apart from identifiers, both
// packed: a ranked query reads the lengths of many rows and the identifiers
// of some, at random, and wants them on few pages.
// Version 4 adds the filter columns' values.
constexpr uint32_t kSegVersion = 4;
constexpr uint32_t kSegFlagTidsAscend = 1;  // row identifiers ascend with ordinals
constexpr uint32_t kSegLenShift = 8;
constexpr uint32_t kSegLenMask = 3u << kSegLenShift;
constexpr uint32_t kSegValsShift = 16;
constexpr uint32_t kSegValsMask = 31u << kSegValsShift;
constexpr uint32_t kMaxVals = 31;
constexpr size_t kValGroup = 64;
constexpr size_t kValSuper = 64;  // groups a reader summarises together
constexpr size_t kValDirEntry = 39;
constexpr size_t kTidGroup = 64;
constexpr size_t kTidDirEntry = 12;
constexpr size_t kDocBytesV2 = 10;
constexpr uint32_t kLenNull = UINT32_MAX;
constexpr size_t kGroupTerms = 64;
constexpr size_t kIndexEntry = 24;
constexpr size_t kFooterBytes = 64;
constexpr uint64_t kMaxTid = (1ull << 48) - 1;

struct DocEntry {
  uint64_t tid;
  uint32_t len;  // tokens; kLenNull: the value is NULL
};

struct Footer {
  uint64_t ndocs = 0;    // entries, NULL and token-free values included
  uint64_t counted = 0;  // entries with at least one token (N)
  uint64_t tokens = 0;
  uint64_t nterms = 0;
  uint64_t index_off = 0;
  uint64_t groups = 0;
  uint32_t flags = 0;  // kSegFlag*, kSegLenMask
  uint32_t version = kSegVersion;

  // Bytes of one row's length (version 3).
  uint32_t len_bytes() const { return 1u << ((flags & kSegLenMask) >> kSegLenShift); }
  uint32_t nvals() const { return (flags & kSegValsMask) >> kSegValsShift; }
  uint64_t tid_groups() const { return (ndocs + kTidGroup - 1) / kTidGroup; }
  // The rows' bytes before the tid groups' bits (version 3), or all of them.
  uint64_t docs_fixed_bytes() const {
    return version < 3 ? ndocs * kDocBytesV2 : ndocs * len_bytes() + tid_groups() * kTidDirEntry;
  }
};

// A tid group's directory entry (version 3).
struct TidGroup {
  uint32_t base;  // smallest block
  uint8_t block_bits, off_bits;
  uint64_t at;  // its bits' offset from the end of the directory
  uint64_t bytes(uint64_t rows) const { return (rows * (block_bits + off_bits) + 7) / 8; }
};
// A row's filter values: an order-preserving 64-bit key per column (the C
// side maps each type's order onto unsigned order), or NULL.
struct Vals {
  uint32_t ncols = 0;
  std::vector<uint64_t> v;     // row r, column c at r * ncols + c
  std::vector<uint8_t> nulls;  // the same, 1 for NULL
  size_t rows() const { return ncols ? v.size() / ncols : 0; }
  void add(const uint64_t* vals, const uint8_t* isnull) {
    for (uint32_t c = 0; c < ncols; c++) {
      const bool n = isnull && isnull[c];
      v.push_back(n ? 0 : vals[c]);
      nulls.push_back(n ? 1 : 0);
    }
  }
};

// Rows whose column col holds a non-NULL key in [lo, hi].
struct Filter {
  uint32_t col;
  uint64_t lo, hi;
};
using Filters = std::vector<Filter>;

// Whether row values (ncols of them at v, nulls) pass every filter.
inline bool vals_pass(const Filters& fs, const uint64_t* v, const uint8_t* nulls) {
  for (const Filter& f : fs)
    if (nulls[f.col] || v[f.col] < f.lo || v[f.col] > f.hi) return false;
  return true;
}

// A value group's directory entry (version 4).
struct ValGroup {
  uint64_t min, max, nulls, step;
  uint8_t bits;
  uint64_t at;  // its bits' offset from the end of the directory
  uint64_t bytes(uint64_t rows) const { return (rows * bits + 7) / 8; }
  // The largest packed value a row may hold.
  uint64_t top() const { return (max - min) / step; }
};
// One column's section: directory, then bits (row r's key at v[r * stride]).
std::string encode_vals(const uint64_t* v, const uint8_t* nulls, size_t n, size_t stride);
ValGroup get_val_group(const unsigned char* p);

// The rows' identifiers in the version 3 layout: directory, then bits.
std::string encode_tids(const uint64_t* keys, size_t n);
TidGroup get_tid_group(const unsigned char* p);
// The key of a row whose packed bits are v; UINT64_MAX if out of range.
inline uint64_t tid_of(const TidGroup& g, uint64_t v) {
  const uint64_t block = g.base + (v >> g.off_bits);
  if (block > UINT32_MAX) return UINT64_MAX;
  return (block << 16) | (v & ((1ull << g.off_bits) - 1));
}

// The narrowest length width that holds len (all ones stays NULL).
inline uint32_t len_width_log2(uint32_t len) { return len < 0xffu ? 0 : len < 0xffffu ? 1 : 2; }

std::string encode_footer(const Footer& f);
// Checks magic, version, crc and that the sections fit in `bytes`.
Footer decode_footer(std::string_view raw, uint64_t bytes, const std::string& what);

// A term's first 8 bytes, big-endian and zero-padded: keys order as terms do.
inline uint64_t term_key(std::string_view t) {
  uint64_t k = 0;
  for (size_t i = 0; i < 8; i++)
    k = (k << 8) | (i < t.size() ? static_cast<unsigned char>(t[i]) : 0u);
  return k;
}

inline uint64_t get_tid(const unsigned char* p) {
  uint64_t t = 0;
  for (int i = 0; i < 6; i++) t |= static_cast<uint64_t>(p[i]) << (8 * i);
  return t;
}
// A length of w bytes; all ones is kLenNull.
inline void put_len(char* out, uint32_t len, uint32_t w) {
  for (uint32_t i = 0; i < w; i++) out[i] = static_cast<char>(len >> (8 * i));
}
inline uint32_t get_len(const unsigned char* p, uint32_t w) {
  uint32_t l = 0;
  for (uint32_t i = 0; i < w; i++) l |= static_cast<uint32_t>(p[i]) << (8 * i);
  return w < 4 && l == (1u << (8 * w)) - 1 ? kLenNull : l;
}

}  // namespace scipis::am
