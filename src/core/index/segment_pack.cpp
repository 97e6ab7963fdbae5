#include "index/segment_pack.h"

#include <tuple>

#include "index/journal.h"
#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {

namespace {

uint64_t align8(uint64_t v) { return (v + 7) & ~uint64_t{7}; }

std::string part_file(Part p, uint32_t split, uint32_t seg, uint32_t indexer) {
  switch (p) {
    case Part::kTfData: return tf_dir(indexer) + "/" + seg_data(seg);
    case Part::kTfMeta: return tf_dir(indexer) + "/" + seg_meta(seg, split);
    case Part::kFileData: return file_dir(indexer) + "/" + seg_data(seg);
    case Part::kFileMeta: return file_dir(indexer) + "/" + seg_meta(seg, split);
    case Part::kPaths: break;
  }
  return file_dir(indexer) + "/" + seg_paths(seg);
}

const char* part_label(Part p) {
  switch (p) {
    case Part::kTfData: return "terms data";
    case Part::kTfMeta: return "terms meta";
    case Part::kFileData: return "files data";
    case Part::kFileMeta: return "files meta";
    case Part::kPaths: break;
  }
  return "paths";
}

}  // namespace

std::string encode_pack(const std::vector<std::string_view>& parts, uint32_t splits) {
  std::string table;
  uint64_t at = align8(kHeaderSize + 16 * parts.size());
  for (std::string_view p : parts) {
    put_u64(table, at);
    put_u64(table, p.size());
    at = align8(at + p.size());
  }
  FileHeader h;
  h.aux = splits;
  h.count = parts.size();
  h.body_crc = crc32c(table.data(), table.size());
  std::string out;
  out.reserve(at);
  put_header(out, kMagicPack, h);
  out += table;
  for (std::string_view p : parts) {
    out.resize(align8(out.size()), '\0');
    out.append(p);
  }
  return out;
}

uint64_t SegmentParts::meta_bytes() const {
  uint64_t n = paths.size();
  for (std::string_view m : tf_meta) n += m.size();
  for (std::string_view m : file_meta) n += m.size();
  return n;
}

std::string PartOpener::name(Part p, uint32_t split) const {
  const uint32_t n = file_seg_of(ref_);
  if (!ref_.packed) return home_ + "/" + part_file(p, split, n, ref_.indexer);
  std::string s = home_ + "/" +
                  (ref_.in_journal() ? std::string(kJournalFile) + " @" + std::to_string(ref_.journal_off)
                                     : pack_file(ref_)) +
                  " (" + part_label(p);
  if (p == Part::kTfMeta || p == Part::kFileMeta) s += " " + std::to_string(split);
  return s + ")";
}

void PartOpener::load_pack() {
  if (pack_) return;
  const std::string path = ref_.in_journal() ? home_ + "/" + kJournalFile + " @" + std::to_string(ref_.journal_off)
                                              : home_ + "/" + pack_file(ref_);
  auto map = ref_.in_journal()
                 ? MappedFile::open_range(home_ + "/" + kJournalFile, ref_.journal_off, ref_.journal_len, path)
                 : MappedFile::open_any(path);
  const std::string_view b = map->bytes();
  const FileHeader h = check_header(path, kMagicPack, b.data(), b.size());
  const uint64_t parts = 2 * uint64_t{splits_} + 3;
  if (h.aux != splits_ || h.count != parts) fail_corrupt(path, "pack holds other parts than its segment's");
  if ((b.size() - kHeaderSize) / 16 < parts) fail_corrupt(path, "pack is shorter than its part table");
  check_body(path, h, b.substr(kHeaderSize, 16 * parts));
  const auto* t = reinterpret_cast<const unsigned char*>(b.data()) + kHeaderSize;
  std::vector<std::pair<uint64_t, uint64_t>> table;
  for (uint64_t i = 0; i < parts; i++) {
    const uint64_t off = get_u64(t + 16 * i), len = get_u64(t + 16 * i + 8);
    if (off < kHeaderSize + 16 * parts || off > b.size() || len > b.size() - off)
      fail_corrupt(path, "pack part lies outside the file");
    table.emplace_back(off, len);
  }
  table_ = std::move(table);
  pack_ = std::move(map);
}

SegmentPart PartOpener::open(Part p, uint32_t split, const uint64_t* expect) {
  SegmentPart out;
  out.name = name(p, split);
  if (!ref_.packed) {
    out.map = expect ? MappedFile::open(out.name, *expect) : MappedFile::open_any(out.name);
    return out;
  }
  load_pack();
  const auto [off, len] = table_[part_index(p, split, splits_)];
  if (expect && len != *expect)
    fail_corrupt(out.name, "part size differs from the manifest (truncated or overwritten)");
  out.map = MappedFile::slice(pack_, off, len, out.name);
  return out;
}

std::string PartOpener::file_of(Part p, uint32_t split, uint64_t* offset, uint64_t* length) {
  if (!ref_.packed) {
    *offset = 0;
    *length = UINT64_MAX;
    return name(p, split);
  }
  load_pack();
  std::tie(*offset, *length) = table_[part_index(p, split, splits_)];
  if (!ref_.in_journal()) return pack_->path();
  *offset += ref_.journal_off;
  return home_ + "/" + kJournalFile;
}

}  // namespace scipis
