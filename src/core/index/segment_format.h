// On-disk layout shared by the segment writer, the segment reader and the
// manifest. Little-endian; every file opens with a 32-byte header:
//   magic[8] version:u32 aux:u32 count:u64 body_crc:u32 header_crc:u32
// TF data:   posting regions of the terms in two or more documents
//            (index/postings_codec.h); located by the TF metadata.
//            `count`: the regions.
// TF meta:   split `aux`; `count` entries in dictionary order (dict_hash,
//            then bytes where hashes tie), in groups of kTermGroup:
//            u32 entry_offset[groups] (from the first entry),
//            u64 block_offset[groups] (in the data file: the group's first
//            block), then the entries:
//            term (see write_term), varint df, then for df 1 the posting itself
//            (varint seq, varint tf), else varint block_len (the blocks of
//            a group follow one another in the data file).
// File data: `count` records in blocks of kFileBlock (the last one
//            shorter), blocks = ceil(count / kFileBlock):
//            u32 block_offset[blocks] (from the first block's start; the
//            first is 0), then the blocks back to back, the last ending at
//            the end of the file. `body_crc` covers the offset table only;
//            each block ends with its own u32 crc32c of the bytes before it
//            in the block. A block's records, each:
//              varint seq delta (the first: seq itself; then seq minus the
//                previous record's seq, modulo 2^64),
//              varint size,
//              varint zigzag(mtime_ns delta) (the first: zigzag(mtime_ns);
//                then mtime_ns minus the previous one's, modulo 2^64),
//              varint tokens,
//              path front-coded against the previous record's path in the
//                block: varint shared prefix length (0 for the first),
//                varint suffix length, the suffix bytes.
// File meta: split `aux`; count entries (u64 path_hash, u32 record), sorted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/bytes.h"

namespace scipis {

// 2: the TF dictionary is ordered and split by dict_hash (was FNV-1a).
// 3: dictionary entries in groups, block offsets implied, df-1 postings
//    inline, terms of hex digits two to a byte.
// 4: posting lists in bit-packed blocks of 128 behind a skip list with
//    each block's score bounds (index/postings_codec.h).
constexpr uint32_t kFormatVersion = 4;
constexpr size_t kTermGroup = 16;
constexpr size_t kHeaderSize = 32;
constexpr size_t kFileBlock = 64;
// A file record's most bytes besides its path suffix: four varints of up
// to 64 bits and two of up to 32.
constexpr size_t kMaxFileRecord = 4 * 10 + 2 * 5;
// The least: six one-byte varints.
constexpr size_t kMinFileRecord = 6;
// The blocks of a file data file lie within 4 GiB (u32 offsets).
constexpr uint64_t kMaxFileBlocksBytes = uint64_t{1} << 32;

inline constexpr char kMagicTfData[] = "SCIPISTD";
inline constexpr char kMagicTfMeta[] = "SCIPISTM";
inline constexpr char kMagicFileData[] = "SCIPISFD";
inline constexpr char kMagicFileMeta[] = "SCIPISFM";
inline constexpr char kMagicManifest[] = "SCIPISMF";

// The TF dictionary's order: by dict_hash, then by bytes. Split s of sf
// holds the hashes with (h * sf) >> 64 == s, a consecutive range of that
// order. It is token_hash, the indexers' own in-memory hash, so that the
// table a flush reads is nearly in dictionary order already.
inline uint64_t dict_hash(std::string_view term) { return token_hash(term.data(), term.size()); }
inline uint32_t dict_split(uint64_t h, uint32_t sf) {
  return static_cast<uint32_t>((static_cast<unsigned __int128>(h) * sf) >> 64);
}

// The file records' mtime deltas: small magnitudes of either sign to
// small varints.
inline uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t u) {
  return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

// A dictionary term as stored: varint (length << 1 | packed), then its
// bytes, or, for a term of 0-9 and a-f only (numbers and hex ids: most
// distinct terms of logs), two characters per byte, high nibble first, an
// odd last one followed by a 0 nibble.
constexpr size_t kMaxTermRecord = 2 + 255;
char* write_term(char* out, const char* p, size_t n);
std::string encode_term(std::string_view term);
struct StoredTerm {
  std::string_view record;  // the whole stored form, as encode_term gives it
  size_t len = 0;           // characters
  bool packed = false;
};
// Reads a stored term at c; false when it is malformed.
bool read_term(Cursor& c, StoredTerm& t);
std::string decode_term(const StoredTerm& t);

struct FileHeader {
  uint32_t aux = 0;
  uint64_t count = 0;
  uint32_t body_crc = 0;
};

// Appends a header for a file whose body follows.
void put_header(std::string& out, const char* magic, const FileHeader& h);
// Checks magic, version and header checksum; throws a corruption error
// naming path otherwise.
FileHeader check_header(const std::string& path, const char* magic,
                        const void* data, size_t len);
// Throws unless crc32c(body) equals the header's.
void check_body(const std::string& path, const FileHeader& h,
                std::string_view body);

inline std::string tf_dir(uint32_t indexer) {
  return "tfidf_index_" + std::to_string(indexer);
}
inline std::string file_dir(uint32_t indexer) {
  return "file_index_" + std::to_string(indexer);
}
inline std::string seg_data(uint32_t seg) {
  return "seg_" + std::to_string(seg) + ".data";
}
inline std::string seg_meta(uint32_t seg, uint32_t split) {
  return "seg_" + std::to_string(seg) + ".meta." + std::to_string(split);
}

}  // namespace scipis
