#include "index/segment_reader.h"

#include <algorithm>

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
  if (h.count > body.size() / 4) fail_corrupt(path_, "term count exceeds the file");
  Cursor c(body.data(), body.size());
  offsets_.resize(h.count);
  for (auto& o : offsets_) o = c.u32();
  entries_ = kHeaderSize + h.count * 4;
  size_t room = bytes_.size() - entries_;
  for (size_t i = 0; i < offsets_.size(); i++) {
    if (offsets_[i] >= room || (i && offsets_[i] <= offsets_[i - 1]))
      fail_corrupt(path_, "bad term offset");
  }
  // Entries are checked as a lookup touches them; their order (by FNV-1a
  // hash, then bytes) is the writer's, vouched for by the body checksum.
}

std::string_view TfMeta::term_at(size_t i) const {
  size_t at = entries_ + offsets_[i];
  size_t len = static_cast<unsigned char>(bytes_[at]);
  if (len == 0 || at + 1 + len > bytes_.size()) fail_corrupt(path_, "bad term length");
  return std::string_view(bytes_.data() + at + 1, len);
}

TermRef TfMeta::ref_at(size_t i) const {
  std::string_view t = term_at(i);
  const char* p = t.data() + t.size();
  Cursor c(p, static_cast<size_t>(bytes_.data() + bytes_.size() - p));
  TermRef r{c.varint(), c.varint(), c.varint()};
  if (!c.ok() || r.df == 0) fail_corrupt(path_, "bad term entry");
  return r;
}

std::optional<TermRef> TfMeta::find(std::string_view term) const {
  const uint64_t h = dict_hash(term);
  size_t lo = 0, hi = offsets_.size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    std::string_view t = term_at(mid);
    const uint64_t hm = dict_hash(t);
    if (hm == h && t == term) return ref_at(mid);
    if (hm < h || (hm == h && t < term))
      lo = mid + 1;
    else
      hi = mid;
  }
  return std::nullopt;
}

void decode_postings(const std::string& path, std::string_view block,
                     uint64_t expect_df, uint64_t seq_limit,
                     std::vector<Posting>& out) {
  if (block.size() < 5) fail_corrupt(path, "posting block too short");
  size_t body = block.size() - 4;
  uint32_t stored = get_u32(reinterpret_cast<const unsigned char*>(block.data()) + body);
  if (crc32c(block.data(), body) != stored)
    fail_corrupt(path, "posting block checksum mismatch");
  Cursor c(block.data(), body);
  uint64_t n = c.varint();
  if (n != expect_df) fail_corrupt(path, "posting count disagrees with the dictionary");
  uint64_t seq = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t delta = c.varint();
    uint64_t tf = c.varint();
    if (!c.ok()) break;
    // delta >= seq_limit would also wrap seq round and break the order.
    if ((i && delta == 0) || delta >= seq_limit || tf == 0 || tf > UINT32_MAX)
      fail_corrupt(path, "bad posting");
    seq += delta;
    if (seq >= seq_limit) fail_corrupt(path, "posting names an unknown document");
    out.push_back({seq, static_cast<uint32_t>(tf)});
  }
  if (!c.ok() || c.left() != 0) fail_corrupt(path, "posting block has a bad length");
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
