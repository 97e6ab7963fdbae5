#include "index/segment_reader.h"

#include <algorithm>

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

void FileData::load(const std::string& path, FileData& out) {
  const std::string& b = out.bytes;
  FileHeader h = check_header(path, kMagicFileData, b.data(), b.size());
  std::string_view body(b.data() + kHeaderSize, b.size() - kHeaderSize);
  check_body(path, h, body);
  if (h.count > body.size() / kFileRecordSize)
    fail_corrupt(path, "record count exceeds the file");
  Cursor c(body.data(), body.size());
  std::vector<uint32_t> lens(h.count);
  out.docs.resize(h.count);
  for (uint64_t i = 0; i < h.count; i++) {
    DocInfo& d = out.docs[i];
    d.seq = c.u64();
    d.size = c.u64();
    d.mtime_ns = static_cast<int64_t>(c.u64());
    d.tokens = c.u64();
    lens[i] = c.u32();
  }
  out.paths.resize(h.count);
  for (uint64_t i = 0; i < h.count; i++) {
    out.paths[i] = c.bytes(lens[i]);
    if (!c.ok()) fail_corrupt(path, "path runs past the end of the file");
  }
  if (c.left() != 0) fail_corrupt(path, "trailing bytes after the paths");
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
