// A small segment's files in one (segment_format.h): a refresh of a few
// files, or a merge of a few small segments, writes, syncs and later opens
// one file instead of 2 * split + 3 of them, the fixed cost that dwarfed
// indexing a 1 KiB append. Layout: a header (magic SCIPISPK, aux: the
// split factor, count: the parts, body_crc over the part table), then per
// part u64 offset and u64 length, then the parts, each at an 8-byte
// aligned offset and each the very bytes its own file would hold (with
// its own header and checksums). Parts in order: TF data, TF meta of each
// split, file data, file meta of each split, path trigrams.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "index/manifest.h"
#include "index/segment_format.h"
#include "util/fileio.h"
#include "util/mapped_file.h"

namespace scipis {

inline constexpr char kMagicPack[] = "SCIPISPK";
// Segments whose files sum to at most this are packed where a writer may
// pack (refresh and merge output); larger ones keep their own files.
constexpr uint64_t kPackMaxBytes = 8u << 20;

inline std::string seg_pack(uint32_t seg) { return "seg_" + std::to_string(seg) + ".pack"; }
// A packed segment's file under its home: tfidf_index_<i>.seg_<n>.pack at
// the generation's root (SegmentRef::pack_root), or seg_<n>.pack in the
// indexer's directory (written before manifest version 6).
inline std::string pack_file(uint32_t indexer, uint32_t seg, bool root) {
  return tf_dir(indexer) + (root ? "." : "/") + seg_pack(seg);
}
inline std::string pack_file(const SegmentRef& s) {
  return pack_file(s.indexer, file_seg_of(s), s.pack_root);
}

enum class Part { kTfData, kTfMeta, kFileData, kFileMeta, kPaths };

inline uint32_t part_index(Part p, uint32_t split, uint32_t splits) {
  switch (p) {
    case Part::kTfData: return 0;
    case Part::kTfMeta: return 1 + split;
    case Part::kFileData: return 1 + splits;
    case Part::kFileMeta: return 2 + splits + split;
    case Part::kPaths: break;
  }
  return 2 + 2 * splits;
}

// The whole pack file of a segment's parts (in the order above).
std::string encode_pack(const std::vector<std::string_view>& parts, uint32_t splits);

// A segment's serialised parts, as a flush or a merge makes them.
struct SegmentParts {
  std::string_view tf_data;
  std::vector<std::string_view> tf_meta;
  std::string_view file_data;
  std::vector<std::string_view> file_meta;
  std::string_view paths;
  uint64_t meta_bytes() const;
  uint64_t total() const { return tf_data.size() + file_data.size() + meta_bytes(); }
};

// Writes segment seg of indexer into gen as one pack at its root (when
// pack and the parts are small: ref->packed set) or as its own files, by
// put(path, bytes), making the directories they go to (none for a pack);
// fills ref's sizes.
template <typename Put>
void put_segment(const std::string& gen, const SegmentParts& p, bool pack, SegmentRef* ref, Put&& put);

// A segment's part: its bytes mapped (a slice of the pack's mapping, or
// its own file's), and the name errors give it.
struct SegmentPart {
  std::string name;
  std::shared_ptr<const MappedFile> map;
};

// Opens segments' parts, packed or not, under home (the generation
// directory holding s's files); a pack is mapped and its table checked
// once, on first use.
class PartOpener {
 public:
  PartOpener(std::string home, const SegmentRef& s, uint32_t splits)
      : home_(std::move(home)), ref_(s), splits_(splits) {}
  // expect: the part's size as the manifest records it, or null.
  SegmentPart open(Part p, uint32_t split, const uint64_t* expect = nullptr);
  // Where part p lies in its file, and the file's path: for reads by pread.
  std::string file_of(Part p, uint32_t split, uint64_t* offset, uint64_t* length);
  // The name errors give part p.
  std::string name(Part p, uint32_t split) const;

 private:
  void load_pack();
  std::string home_;
  SegmentRef ref_;
  uint32_t splits_;
  std::shared_ptr<const MappedFile> pack_;
  std::vector<std::pair<uint64_t, uint64_t>> table_;
};

template <typename Put>
void put_segment(const std::string& gen, const SegmentParts& p, bool pack, SegmentRef* ref, Put&& put) {
  const uint32_t seg = ref->seg, splits = static_cast<uint32_t>(p.tf_meta.size());
  ref->tf_data_bytes = p.tf_data.size();
  ref->file_data_bytes = p.file_data.size();
  ref->meta_bytes = p.meta_bytes();
  ref->packed = pack && p.total() <= kPackMaxBytes && p.file_meta.size() == splits;
  if (ref->packed) {
    std::vector<std::string_view> parts{p.tf_data};
    parts.insert(parts.end(), p.tf_meta.begin(), p.tf_meta.end());
    parts.push_back(p.file_data);
    parts.insert(parts.end(), p.file_meta.begin(), p.file_meta.end());
    parts.push_back(p.paths);
    ref->pack_root = true;
    put(gen + "/" + pack_file(ref->indexer, seg, true), std::string_view(encode_pack(parts, splits)));
    return;
  }
  const std::string tdir = gen + "/" + tf_dir(ref->indexer) + "/";
  const std::string fdir = gen + "/" + file_dir(ref->indexer) + "/";
  mkdir_p(tdir);
  mkdir_p(fdir);
  put(tdir + seg_data(seg), p.tf_data);
  for (uint32_t s = 0; s < splits; s++) put(tdir + seg_meta(seg, s), p.tf_meta[s]);
  put(fdir + seg_data(seg), p.file_data);
  for (size_t s = 0; s < p.file_meta.size(); s++)
    put(fdir + seg_meta(seg, static_cast<uint32_t>(s)), p.file_meta[s]);
  put(fdir + seg_paths(seg), p.paths);
}

}  // namespace scipis
