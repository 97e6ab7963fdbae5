// The access method's segment: one immutable byte stream, cut by the C
// side into the payloads of consecutive index pages (each page checked by
// its own crc there). Layout, all little-endian:
//
//   docs     ndocs x (6-byte TID key, u32 length; kLenNull = NULL value)
//   groups   per kGroupTerms terms in ascending byte order: a dictionary
//            block (varint count; per term u8 bytes shared with the previous
//            term, u8 suffix length, suffix, varint df, then varint ordinal
//            and tf when df = 1, else varint region bytes), then the
//            regions of its terms (index/postings_codec.h, ordinals from 0)
//   index    per group: u64 key of its first term, u64 offset, u32 dictionary
//            block bytes, u32 group bytes
//   footer   kFooterBytes, at the end: u32 magic, u32 version, u64 ndocs,
//            counted, tokens, nterms, index_off, groups, u32 flags, u32
//            crc32c of what precedes it
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace scipis::am {

constexpr uint32_t kSegMagic = 0x53414d53;  // "SMAS"
// Version 2 adds the footer's flags; version 1 segments are read as
// having none.
constexpr uint32_t kSegVersion = 2;
constexpr uint32_t kSegFlagTidsAscend = 1;  // row identifiers ascend with ordinals
constexpr size_t kDocBytes = 10;
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
  uint32_t flags = 0;  // kSegFlag*
};

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

inline void put_doc(char* out, const DocEntry& d) {
  for (int i = 0; i < 6; i++) out[i] = static_cast<char>(d.tid >> (8 * i));
  for (int i = 0; i < 4; i++) out[6 + i] = static_cast<char>(d.len >> (8 * i));
}
inline DocEntry get_doc(const unsigned char* p) {
  DocEntry d{0, 0};
  for (int i = 0; i < 6; i++) d.tid |= static_cast<uint64_t>(p[i]) << (8 * i);
  for (int i = 0; i < 4; i++) d.len |= static_cast<uint32_t>(p[6 + i]) << (8 * i);
  return d;
}

}  // namespace scipis::am
