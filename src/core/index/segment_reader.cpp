#include "index/segment_reader.h"

#include <algorithm>
#include <cstring>

#include "index/postings_codec.h"
#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {


TfMeta::TfMeta(std::string path, std::string bytes)
    : path_(std::move(path)), bytes_(std::move(bytes)) {
  FileHeader h = check_header(path_, kMagicTfMeta, bytes_.data(), bytes_.size());
  std::string_view body(bytes_.data() + kHeaderSize, bytes_.size() - kHeaderSize);
  check_body(path_, h, body);
  // Every entry takes at least 3 bytes (length, a byte of term, df).
  if (h.count > body.size() / 3) fail_corrupt(path_, "term count exceeds the file");
  count_ = static_cast<size_t>(h.count);
  const size_t groups = (count_ + kTermGroup - 1) / kTermGroup;
  if (groups * 12 > body.size()) fail_corrupt(path_, "term groups exceed the file");
  Cursor c(body.data(), body.size());
  entry_offsets_.resize(groups);
  block_offsets_.resize(groups);
  for (auto& o : entry_offsets_) o = c.u32();
  for (auto& o : block_offsets_) o = c.u64();
  entries_ = kHeaderSize + groups * 12;
  const size_t room = bytes_.size() - entries_;
  for (size_t g = 0; g < groups; g++) {
    if (entry_offsets_[g] >= room || (g && entry_offsets_[g] <= entry_offsets_[g - 1]) ||
        block_offsets_[g] < kHeaderSize || (g && block_offsets_[g] < block_offsets_[g - 1]))
      fail_corrupt(path_, "bad term group offset");
  }
  // Entries are checked as a lookup touches them; their order (by
  // dict_hash, then bytes) is the writer's, vouched for by the checksum.
}

TfMeta::Entry TfMeta::entry(size_t at, uint64_t& block_offset) const {
  if (at >= bytes_.size()) fail_corrupt(path_, "term entry past the end");
  Cursor c(bytes_.data() + at, bytes_.size() - at);
  Entry e{};
  if (!read_term(c, e.term)) fail_corrupt(path_, "bad term");
  e.ref.df = c.varint();
  if (e.ref.df == 1) {
    e.ref.seq = c.varint();
    const uint64_t tf = c.varint();
    if (tf == 0 || tf > UINT32_MAX) fail_corrupt(path_, "bad inline posting");
    e.ref.tf = static_cast<uint32_t>(tf);
  } else {
    e.ref.len = c.varint();
    // Room for n, a posting and the crc; the data file's size bounds it.
    if (e.ref.len < 7 || e.ref.len > (uint64_t{1} << 40)) fail_corrupt(path_, "bad posting block length");
    e.ref.offset = block_offset;
    block_offset += e.ref.len;
  }
  if (!c.ok() || e.ref.df == 0) fail_corrupt(path_, "bad term entry");
  e.next = static_cast<size_t>(reinterpret_cast<const char*>(c.pos()) - bytes_.data());
  return e;
}

std::string TfMeta::group_first(size_t g) const {
  uint64_t block = block_offsets_[g];
  return decode_term(entry(entries_ + entry_offsets_[g], block).term);
}

std::string TfMeta::term_at(size_t i) const {
  if (i >= count_) fail_corrupt(path_, "term index past the end");
  const size_t g = i / kTermGroup;
  uint64_t block = block_offsets_[g];
  Entry e = entry(entries_ + entry_offsets_[g], block);
  for (size_t k = i % kTermGroup; k > 0; k--) e = entry(e.next, block);
  return decode_term(e.term);
}

std::optional<TermRef> TfMeta::find(std::string_view term) const {
  if (term.empty() || term.size() > 255) return std::nullopt;
  const uint64_t h = dict_hash(term);
  // The last group whose first term is at or before the one sought.
  size_t lo = 0, hi = entry_offsets_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const std::string t = group_first(mid);
    const uint64_t hm = dict_hash(t);
    if (hm < h || (hm == h && t <= term))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return std::nullopt;
  // Within the group, stored forms are compared: no term is decoded.
  const std::string stored = encode_term(term);
  const size_t g = lo - 1;
  const size_t n = std::min(kTermGroup, count_ - g * kTermGroup);
  uint64_t block = block_offsets_[g];
  size_t at = entries_ + entry_offsets_[g];
  for (size_t k = 0; k < n; k++) {
    Entry e = entry(at, block);
    if (e.term.record == stored) return e.ref;
    at = e.next;
  }
  return std::nullopt;
}

void decode_postings(const std::string& path, std::string_view block,
                     uint64_t expect_df, uint64_t seq_limit,
                     std::vector<Posting>& out) {
  RegionReader r(path, block, expect_df, seq_limit);
  uint64_t seqs[kBlockPostings];
  uint32_t tfs[kBlockPostings];
  for (size_t b = 0; b < r.blocks().size(); b++) {
    r.decode(b, seqs, tfs);
    for (uint32_t i = 0; i < r.blocks()[b].count; i++) out.push_back({seqs[i], tfs[i]});
  }
}

FileBlocks::FileBlocks(std::string path, std::string_view file)
    : path_(std::move(path)), file_(file) {
  FileHeader h = check_header(path_, kMagicFileData, file_.data(), file_.size());
  const size_t body = file_.size() - kHeaderSize;
  // Bounds before anything is sized by the count.
  if (h.count > body / kMinFileRecord) fail_corrupt(path_, "record count exceeds the file");
  count_ = h.count;
  blocks_ = static_cast<size_t>((count_ + kFileBlock - 1) / kFileBlock);
  first_ = kHeaderSize + 4 * blocks_;
  if (first_ > file_.size()) fail_corrupt(path_, "block table exceeds the file");
  check_body(path_, h, file_.substr(kHeaderSize, 4 * blocks_));
  const size_t room = file_.size() - first_;
  if (room > kMaxFileBlocksBytes) fail_corrupt(path_, "blocks exceed 4 GiB");
  if (blocks_ == 0 && room != 0) fail_corrupt(path_, "trailing bytes after the records");
  // Each block lies after the one before, within the file, with room for
  // its records and its crc; the last one ends the file.
  for (size_t b = 0; b < blocks_; b++) {
    const uint64_t start = offset(b);
    const uint64_t end = b + 1 < blocks_ ? offset(b + 1) : room;
    if ((b == 0 && start != 0) || end > room || start > end ||
        end - start < records_in(b) * kMinFileRecord + 4)
      fail_corrupt(path_, "bad offset of file block " + std::to_string(b));
  }
}

std::string_view FileBlocks::block(size_t b) const {
  if (b >= blocks_) fail_corrupt(path_, "file block past the end");
  const size_t start = offset(b);
  const size_t end = b + 1 < blocks_ ? offset(b + 1) : file_.size() - first_;
  return file_.substr(first_ + start, end - start);
}

void FileBlocks::decode(size_t b, DocInfo* docs, std::string& paths, size_t* ends) const {
  const std::string_view blk = block(b);
  const size_t len = blk.size() - 4;
  if (crc32c(blk.data(), len) != get_u32(reinterpret_cast<const unsigned char*>(blk.data()) + len))
    fail_corrupt(path_, "checksum mismatch in file block " + std::to_string(b));
  Cursor c(blk.data(), len);
  const size_t n = records_in(b);
  size_t prev_at = paths.size(), prev_len = 0;
  for (size_t i = 0; i < n; i++) {
    DocInfo& d = docs[i];
    const uint64_t seq = c.varint();
    d.size = c.varint();
    const int64_t mtime = unzigzag(c.varint());
    d.tokens = c.varint();
    const uint64_t shared = c.varint();
    const uint64_t suffix = c.varint();
    // The suffix lies in the block: shared and suffix are bounded by bytes
    // present before the path is sized.
    const std::string_view tail = c.bytes(suffix);
    if (!c.ok() || shared > prev_len) fail_corrupt(path_, "bad record in file block " + std::to_string(b));
    if (i == 0) {
      d.seq = seq;
      d.mtime_ns = mtime;
    } else {
      d.seq = docs[i - 1].seq + seq;
      d.mtime_ns = static_cast<int64_t>(static_cast<uint64_t>(docs[i - 1].mtime_ns) +
                                        static_cast<uint64_t>(mtime));
    }
    const size_t at = paths.size();
    paths.resize(at + shared + tail.size());
    std::memcpy(paths.data() + at, paths.data() + prev_at, shared);
    std::memcpy(paths.data() + at + shared, tail.data(), tail.size());
    prev_at = at;
    prev_len = shared + tail.size();
    ends[i] = paths.size();
  }
  if (c.left() != 0) fail_corrupt(path_, "trailing bytes in file block " + std::to_string(b));
}

void FileData::load(const std::string& path, FileData& out) {
  const FileBlocks fb(path, out.bytes);
  const size_t n = static_cast<size_t>(fb.records());
  std::vector<size_t> ends(n);
  out.docs.resize(n);
  out.arena.clear();
  for (size_t b = 0; b < fb.blocks(); b++)
    fb.decode(b, &out.docs[b * kFileBlock], out.arena, &ends[b * kFileBlock]);
  out.paths.resize(n);
  for (size_t i = 0, at = 0; i < n; at = ends[i++])
    out.paths[i] = std::string_view(out.arena).substr(at, ends[i] - at);
  std::string().swap(out.bytes);
}

FileMeta::FileMeta(std::string path, const std::string& b, uint64_t records) {
  FileHeader h = check_header(path, kMagicFileMeta, b.data(), b.size());
  std::string_view body(b.data() + kHeaderSize, b.size() - kHeaderSize);
  check_body(path, h, body);
  if (body.size() != h.count * 12) fail_corrupt(path, "bad length");
  Cursor c(body.data(), body.size());
  entries_.resize(h.count);
  for (auto& e : entries_) {
    e.first = c.u64();
    e.second = c.u32();
    if (e.second >= records) fail_corrupt(path, "entry names an unknown record");
  }
  if (!std::is_sorted(entries_.begin(), entries_.end()))
    fail_corrupt(path, "entries out of order");
}

std::vector<uint32_t> FileMeta::find(uint64_t hash) const {
  std::vector<uint32_t> out;
  auto it = std::lower_bound(entries_.begin(), entries_.end(),
                             std::make_pair(hash, uint32_t{0}));
  for (; it != entries_.end() && it->first == hash; ++it) out.push_back(it->second);
  return out;
}

}  // namespace scipis
