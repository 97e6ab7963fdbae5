// One path trigram table for many segments, written when a build or a
// full compaction commits: a new backend's first scipis_locate then opens
// one file and looks each trigram up once, instead of opening one index
// per segment (128 segments at 10 million small files). Each trigram's
// lists stay cut by segment, as the segments' own files hold them, so a
// segment none of whose paths hold some trigram of the pattern is passed
// over without reading anything of it.
//
// File PATHS in a generation ("SCIPISGP"), little-endian, the 32-byte
// header of index/segment_format.h: count = n covered segments, aux = T
// trigrams, body_crc covers the entries and the table.
//   entries: n of kGenPathsEntry bytes, in the manifest's order: u64 home
//     generation, u32 indexer, u32 file_seg, u64 docs, u64 file data bytes
//     (what names a segment, and what it must still hold).
//   table: T of kTrigramEntry bytes, trigrams strictly ascending: u32
//     trigram, u32 c (the segments whose paths hold it, 1..n), u64 end of
//     its part, from the first part's start (a part starts where the one
//     before ends; the last one ends the file).
//   parts, back to back in table order; each: a directory of c entries of
//     kGenPathsChunk bytes (u32 entry index, strictly ascending, u32 its
//     records holding the trigram, u64 end of its chunk from the end of the
//     directory's crc), a u32 crc32c of the directory, then the chunks: each
//     the segment's own list for the trigram (index/path_trigrams.h: blocks
//     of record numbers within the segment, then their crc).
// Later generations carry the file over (a hard link). Segments written
// after it, or merged since, are not covered: their own trigram files
// answer for them, and entries no longer in the manifest are not asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "index/manifest.h"
#include "index/path_trigrams.h"

namespace scipis {

inline const char* kGenPathsFile = "PATHS";
inline constexpr char kMagicGenPaths[] = "SCIPISGP";
constexpr size_t kGenPathsEntry = 32;
constexpr size_t kGenPathsChunk = 16;

struct CoveredSegment {
  uint64_t home = 0;
  uint32_t indexer = 0, file_seg = 0;
  uint64_t docs = 0, file_bytes = 0;
};

// Writes gen's PATHS for m's segments (homes under dir) from their own
// trigram files, each list checked as it is copied, if at least two hold
// documents; returns its size (0: not written). Memory: the table.
uint64_t write_gen_paths(const std::string& dir, const std::string& gen, const Manifest& m);

// Reads a PATHS file in place (file must outlive this). Opening checks the
// header, the entries and the table; a part's bounds, its directory's crc
// and each chunk's crc when a pattern reads them. Damage throws
// SCIPIS_E_CORRUPT naming path.
class GenPaths {
 public:
  GenPaths(std::string path, std::string_view file);
  const std::vector<CoveredSegment>& covered() const { return covered_; }
  // Per entry, the records whose paths hold every trigram of every
  // literal run of pattern (a superset of its matches), ascending; empty
  // for entries with none. nullopt when no run has 3 bytes.
  std::optional<std::vector<std::vector<uint32_t>>> candidates(const PathPattern& pattern) const;

 private:
  struct Chunk {
    uint32_t entry;
    TrigramList list;
  };
  // The trigram's chunks, or none when no covered path holds it.
  std::vector<Chunk> part(uint32_t trigram) const;
  std::string path_;
  std::vector<CoveredSegment> covered_;
  const unsigned char* table_ = nullptr;
  const unsigned char* parts_ = nullptr;
  uint64_t room_ = 0;  // the parts' bytes
  size_t trigrams_ = 0;
};

}  // namespace scipis
