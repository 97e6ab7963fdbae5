// On-disk layout shared by the segment writer, the segment reader and the
// manifest. Little-endian; every file opens with a 32-byte header:
//   magic[8] version:u32 aux:u32 count:u64 body_crc:u32 header_crc:u32
// TF data:   per dictionary group, the small posting regions of its terms
//            (index/postings_codec.h) followed by one crc32c over them,
//            then its large regions. `count`: the regions.
// TF meta:   split `aux`; `count` terms in byte order, in groups of
//            kTermGroup: u64 base seq (postings are stored from it), u32
//            groups, u64 bytes of the coded groups, u32 hot terms, u32
//            bytes of the hot terms' bytes, the code tables
//            (index/term_dict.h; the same in every split of a flush, so
//            that a reader shares their decoding tables) (`body_crc`
//            covers these); the group index, kTermGroupEntry bytes a group:
//            u64 its first term's first 8 bytes big-endian (zero padded),
//            u32 where its coded entries start (from the first group's),
//            u32 crc32c of its coded entries, u64 offset of its regions in
//            the data file, u32 bytes of its small regions (before their
//            crc); u32 crc32c of each kIndexChunk entries of the index;
//            then the coded groups (the first entry of each whole); then
//            the hot terms (format 12): the terms with a posting region
//            whose df is at least the split's hot df (the least df >= 2
//            that leaves at most count / kHotShare terms at or above it;
//            a term's region must be under 4 GiB), each also in its
//            group, as kHotEntry bytes sorted by (dict_hash >> 32,
//            bytes): u32 dict_hash >> 32, u64 its region's offset in the
//            data file, u32 region length, u32 df, u32 its group, u32
//            where its bytes start in the hot term bytes; a u32 crc32c per kIndexChunk
//            entries, over those entries then their terms' bytes; then
//            the hot term bytes, back to back; then, when there are hot
//            terms, their directory: for each of hot_buckets(n) buckets
//            (the top bits of the 32-bit hash), u32 its first entry, then
//            u32 n, then u32 crc32c of these. A reader searches the
//            index in place, checking a chunk of it or a group when it
//            first reads it; a lookup tries the hot terms first, so that
//            a frequent term is found without decoding a group.
// File data: `count` records in blocks of kFileBlock (the last one
//            shorter), blocks = ceil(count / kFileBlock):
//            u32 block_offset[blocks] (from the first block's start; the
//            first is 0), u32 crc32c of the lengths' chunk crcs, u32
//            crc32c of the statistics, u32 bytes of the paths' common
//            prefix (`body_crc` covers these four); u32 length[count]:
//            each record's tokens, kLenInRecord when it is that or more
//            (the record holds it); u32 crc32c of each kLenChunk lengths;
//            the statistics: the common prefix of all
//            paths, then per block kBlockStatBytes (index/
//            file_block_stats.h, fences after the common prefix); then
//            the blocks back to back, the last ending at the end of the
//            file. Searches read lengths and statistics in place; each
//            block ends with its own u32 crc32c of the bytes before it in
//            the block. A block of n records opens with u32
//            restart[(n - 1) / kRestart]: where record kRestart * (k + 1)
//            starts, from the block's start. A record whose place in its
//            block is a multiple of kRestart is a restart, coded as the
//            block's first is, so that a reader decodes from the restart
//            before the record it needs, not from the block's start.
//            A block's records, each:
//              varint seq delta (a restart: seq itself; then seq minus the
//                previous record's seq, modulo 2^64),
//              varint size,
//              varint zigzag(mtime_ns delta) (a restart: zigzag(mtime_ns);
//                then mtime_ns minus the previous one's, modulo 2^64),
//              varint tokens,
//              varint zigzag(ctime_ns - mtime_ns, modulo 2^64),
//              varint inode, then uid, gid and st_mode, each as it is in
//                a restart, then zigzag of its difference from the
//                previous record's (inodes modulo 2^64),
//              path front-coded against the previous record's path in the
//                block: varint shared prefix length (0 for a restart),
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
// 5: dictionary in byte order, groups of 16 front-coded and Huffman
//    coded field by field; small posting regions without skip entries,
//    one crc per group; seqs from the flush's base.
// 6: each posting block's skip entry names its best tf / length.
// 7: file records keep ctime, inode, uid, gid and mode.
// 8: one dictionary code for all splits of a flush (each split file still
//    holds the tables).
// 9: file data holds a dense length array and per-block statistics, read
//    in place by searches and metadata queries; a trigram index of each
//    segment's paths; the dictionary's group index is fixed-width, read
//    in place, checked by chunk and group.
// 10: each file record keeps the checksum of the file's last bytes
//    (FileAttrs::tail), so that a refresh can index only what a log
//    appended.
// 11: file blocks restart every kRestart records: a search's hit decodes
//    at most kRestart records, not up to kFileBlock.
// 12: a restart every 4 records (was 16): a hit decodes 2.5 records on
//    average, not 8.5. Each dictionary split lists its most frequent
//    terms (hot terms) with their regions, found by hash without decoding
//    a group.
constexpr uint32_t kFormatVersion = 12;
constexpr size_t kHeaderSize = 32;
constexpr size_t kTfMetaHead = 28;
constexpr size_t kHotEntry = 28;
// At most one term in this many of a split is hot.
constexpr size_t kHotShare = 128;
// The hot terms' directory: a power of two of buckets, about four terms
// to a bucket (at least one bucket when there are any), and the bits of
// the hash that name one.
inline size_t hot_buckets(size_t n) {
  if (n == 0) return 0;
  size_t b = 1;
  while (b * 2 <= n / 4) b *= 2;
  return b;
}
inline unsigned hot_bucket_bits(size_t buckets) {
  unsigned bits = 0;
  while ((size_t{1} << bits) < buckets) bits++;
  return bits;
}
inline size_t hot_dir_bytes(size_t n) { return n ? 4 * (hot_buckets(n) + 1) + 4 : 0; }
constexpr size_t kTermGroupEntry = 28;
constexpr size_t kIndexChunk = 64;
constexpr size_t kFileBlock = 64;
constexpr size_t kRestart = 4;
static_assert(kFileBlock % kRestart == 0, "restarts divide a block evenly");
// A file record's most bytes besides its path suffix: six varints of up
// to 64 bits, two of up to 32, three of up to 33 and the tail's (33).
constexpr size_t kMaxFileRecord = 6 * 10 + 2 * 5 + 4 * 5;
// The least: twelve one-byte varints.
constexpr size_t kMinFileRecord = 12;
// A record's tail checksum covers the file's last this many bytes (all of
// a smaller file).
constexpr size_t kTailWindow = 4096;
// The blocks of a file data file lie within 4 GiB (u32 offsets).
constexpr uint64_t kMaxFileBlocksBytes = uint64_t{1} << 32;
// A length of this or more is read from the record.
constexpr uint32_t kLenInRecord = UINT32_MAX;
// Lengths are checked a chunk of this many at a time, when first read.
constexpr size_t kLenChunk = 1024;

inline constexpr char kMagicTfData[] = "SCIPISTD";
inline constexpr char kMagicTfMeta[] = "SCIPISTM";
inline constexpr char kMagicFileData[] = "SCIPISFD";
inline constexpr char kMagicFileMeta[] = "SCIPISFM";
inline constexpr char kMagicManifest[] = "SCIPISMF";
inline constexpr char kMagicTerms[] = "SCIPISTS";
inline constexpr char kMagicFresh[] = "SCIPISFR";

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

struct FileHeader {
  uint32_t aux = 0;
  uint64_t count = 0;
  uint32_t body_crc = 0;
};

// Appends a header for a file whose body follows.
void put_header(std::string& out, const char* magic, const FileHeader& h);
// A whole small file: its header (body checksum set), then body.
std::string sealed_file(const char* magic, uint64_t count, std::string_view body, uint32_t aux = 0);
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
// The paths' trigram index (index/path_trigrams.h), in the file index dir.
inline std::string seg_paths(uint32_t seg) { return "seg_" + std::to_string(seg) + ".paths"; }
inline std::string seg_meta(uint32_t seg, uint32_t split) {
  return "seg_" + std::to_string(seg) + ".meta." + std::to_string(split);
}

}  // namespace scipis
