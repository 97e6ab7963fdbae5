#include "index/segment_reader.h"

#include <algorithm>
#include <cstring>

#include "index/postings_codec.h"
#include "index/segment_format.h"
#include "index/term_dict.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {


namespace {
// The first of n sorted keys (key_at(i)) not below key.
template <typename K, typename KeyAt>
size_t first_not_below(size_t n, K key, KeyAt&& key_at) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (key_at(mid) < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// A term's first 8 bytes as a big-endian word, zero-padded: words order
// as the terms do, or tie.
uint64_t word_of(std::string_view t) {
  unsigned char b[8] = {};
  std::memcpy(b, t.data(), std::min<size_t>(8, t.size()));
  uint64_t w = 0;
  for (unsigned char c : b) w = w << 8 | c;
  return w;
}
}  // namespace

TfMeta::TfMeta(std::string path, std::string bytes, const TfMeta* like)
    : path_(std::move(path)), owned_(std::move(bytes)), bytes_(owned_) {
  open(like);
}

TfMeta::TfMeta(std::string path, std::shared_ptr<const MappedFile> file, const TfMeta* like)
    : path_(std::move(path)), file_(std::move(file)), bytes_(file_->bytes()) {
  open(like);
}

size_t TfMeta::heap_bytes(const TfMeta* like) const {
  size_t n = sizeof(*this) + path_.capacity() + owned_.capacity() +
             (chunk_ok_.capacity() + hot_ok_.capacity() + group_ok_.capacity()) * sizeof(uint64_t);
  if (!like || like->codes_ != codes_) n += codes_->heap_bytes();
  return n;
}

void TfMeta::open(const TfMeta* like) {
  FileHeader h = check_header(path_, kMagicTfMeta, bytes_.data(), bytes_.size());
  const size_t fixed = kTfMetaHead + kCodeTableBytes;
  if (bytes_.size() - kHeaderSize < fixed) fail_corrupt(path_, "bad dictionary head");
  check_body(path_, h, bytes_.substr(kHeaderSize, fixed));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data()) + kHeaderSize;
  base_ = get_u64(p);
  groups_ = get_u32(p + 8);
  const uint64_t coded = get_u64(p + 12);
  hot_n_ = get_u32(p + 20);
  hot_bytes_ = get_u32(p + 24);
  const char* const tables = bytes_.data() + kHeaderSize + kTfMetaHead;
  if (like && like->codes_->same_tables(tables)) {
    codes_ = like->codes_;
  } else {
    auto codes = std::make_shared<DictDecoder>();
    if (!codes->load(tables)) fail_corrupt(path_, "bad dictionary code tables");
    codes_ = std::move(codes);
  }
  // Sizes checked against the file before anything is sized by them.
  const size_t room = bytes_.size() - kHeaderSize - fixed;
  const size_t chunks = (groups_ + kIndexChunk - 1) / kIndexChunk;
  const size_t hot_chunks = (hot_n_ + kIndexChunk - 1) / kIndexChunk;
  // Each term is hot at most once, with at most kMaxTermBytes bytes.
  if (hot_n_ > h.count || hot_bytes_ > hot_n_ * kMaxTermBytes || hot_bytes_ < hot_n_)
    fail_corrupt(path_, "bad hot term count");
  const size_t hot = hot_n_ * kHotEntry + 4 * hot_chunks + hot_bytes_ + hot_dir_bytes(hot_n_);
  if (groups_ > room / kTermGroupEntry || h.count > uint64_t{groups_} * kTermGroup ||
      h.count + kTermGroup <= uint64_t{groups_} * kTermGroup ||
      room - groups_ * kTermGroupEntry < 4 * chunks + hot ||
      coded != room - groups_ * kTermGroupEntry - 4 * chunks - hot)
    fail_corrupt(path_, "term groups exceed the file");
  count_ = static_cast<size_t>(h.count);
  index_ = kHeaderSize + fixed;
  entries_ = index_ + groups_ * kTermGroupEntry + 4 * chunks;
  entries_end_ = entries_ + coded;
  hot_ = entries_end_;
  hot_crcs_ = hot_ + hot_n_ * kHotEntry;
  hot_terms_ = hot_crcs_ + 4 * hot_chunks;
  hot_dir_ = hot_terms_ + hot_bytes_;
  hot_bits_ = hot_bucket_bits(hot_buckets(hot_n_));
  chunk_ok_.assign((chunks + 63) / 64, 0);
  hot_ok_.assign((hot_chunks + 63) / 64, 0);
}

void TfMeta::verify_chunk(size_t c) const {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data());
  const size_t n = std::min(kIndexChunk, groups_ - c * kIndexChunk);
  const size_t crc_at = index_ + groups_ * kTermGroupEntry + 4 * c;
  if (crc32c(p + index_ + c * kIndexChunk * kTermGroupEntry, n * kTermGroupEntry) != get_u32(p + crc_at))
    fail_corrupt(path_, "checksum mismatch in the term group index");
  chunk_ok_[c / 64] |= uint64_t{1} << (c % 64);
}

TfMeta::Group TfMeta::group(size_t g) const {
  check_chunk(g / kIndexChunk);
  const auto* e = reinterpret_cast<const unsigned char*>(bytes_.data()) + index_ + g * kTermGroupEntry;
  Group r;
  r.key = get_u64(e);
  r.begin = entries_ + get_u32(e + 8);
  r.crc = get_u32(e + 12);
  r.data = get_u64(e + 16);
  r.small = get_u32(e + 24);
  if (g + 1 < groups_) {
    check_chunk((g + 1) / kIndexChunk);
    r.end = entries_ + get_u32(e + kTermGroupEntry + 8);
  } else {
    r.end = entries_end_;
  }
  if ((g == 0 && r.begin != entries_) || r.begin >= r.end || r.end > entries_end_ ||
      r.data < kHeaderSize || r.data > (uint64_t{1} << 48))
    fail_corrupt(path_, "bad term group offset");
  if (group_ok_.empty()) group_ok_.assign((groups_ + 63) / 64, 0);
  if (!(group_ok_[g / 64] >> (g % 64) & 1)) {
    if (crc32c(bytes_.data() + r.begin, r.end - r.begin) != r.crc)
      fail_corrupt(path_, "checksum mismatch in term group " + std::to_string(g));
    group_ok_[g / 64] |= uint64_t{1} << (g % 64);
  }
  return r;
}

std::string TfMeta::first_term(size_t g) const {
  const Group gr = group(g);
  DictDecoder::Reader in(*codes_, bytes_.data() + gr.begin, bytes_.data() + gr.end);
  char term[kMaxTermBytes];
  size_t len = 0;
  DictEntry e;
  if (!in.next(term, len, e)) fail_corrupt(path_, "bad term entry");
  return std::string(term, len);
}

template <typename F>
void TfMeta::scan(size_t g, F&& f) const {
  const Group gr = group(g);
  DictDecoder::Reader in(*codes_, bytes_.data() + gr.begin, bytes_.data() + gr.end);
  const size_t n = std::min(kTermGroup, count_ - g * kTermGroup);
  char term[kMaxTermBytes];
  size_t len = 0;
  const uint64_t data = gr.data, small = gr.small;
  uint64_t small_at = data, large_at = data + small + (small ? 4 : 0);
  for (size_t i = 0; i < n; i++) {
    DictEntry e;
    if (!in.next(term, len, e)) fail_corrupt(path_, "bad term entry");
    const std::string_view t(term, len);
    if (!e.after) fail_corrupt(path_, "terms out of order");
    if (i == 0 && word_of(t) != gr.key) fail_corrupt(path_, "term group key differs from its first term");
    TermRef r{};
    r.base = base_;
    if (e.code & 1) {
      if (e.code >> 1 == 0 || e.code >> 1 > UINT32_MAX || e.x > UINT64_MAX - base_)
        fail_corrupt(path_, "bad inline posting");
      r.df = 1;
      r.tf = static_cast<uint32_t>(e.code >> 1);
      r.seq = base_ + e.x;
    } else {
      r.df = e.code >> 1;
      r.len = e.x;
      // A small region takes at least 3 bytes, a large one its skip list
      // and crcs; the group's small bytes and the data file bound both.
      const bool is_small = r.df <= kSmallRegion;
      if (r.df < 2 || e.x < (is_small ? 3 : 8) || e.x > (uint64_t{1} << 40) ||
          (is_small && e.x > data + small - small_at))
        fail_corrupt(path_, "bad posting region length");
      if (is_small) {
        r.offset = small_at;
        small_at += e.x;
        r.span_offset = data;
        r.span_len = small + 4;
      } else {
        r.offset = large_at;
        large_at += e.x;
      }
    }
    if (f(t, r, e.shared)) return;
  }
  if (small_at != data + small || !in.at_end()) fail_corrupt(path_, "bad term group");
}

void TfMeta::verify_hot_chunk(size_t c) const {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data());
  const size_t i = c * kIndexChunk, n = std::min(kIndexChunk, hot_n_ - i);
  // The chunk's terms' bytes run to where the next chunk's first begins
  // (a damaged bound fails the crc).
  const size_t at = get_u32(p + hot_ + i * kHotEntry + 24);
  const size_t end = i + n < hot_n_ ? get_u32(p + hot_ + (i + n) * kHotEntry + 24) : hot_bytes_;
  if (at > end || end > hot_bytes_ ||
      crc32c(p + hot_terms_ + at, end - at, crc32c(p + hot_ + i * kHotEntry, n * kHotEntry)) !=
          get_u32(p + hot_crcs_ + 4 * c))
    fail_corrupt(path_, "checksum mismatch in the hot terms");
  for (size_t k = i; k < i + n; k++) {
    const size_t a = get_u32(p + hot_ + k * kHotEntry + 24);
    const size_t b = k + 1 < i + n ? get_u32(p + hot_ + (k + 1) * kHotEntry + 24) : end;
    if (a >= b || b - a > kMaxTermBytes || (k > i && a < get_u32(p + hot_ + (k - 1) * kHotEntry + 24)))
      fail_corrupt(path_, "bad hot term");
  }
  hot_ok_[c / 64] |= uint64_t{1} << (c % 64);
}

size_t TfMeta::hot_term_at(size_t i) const {
  if (i == hot_n_) return hot_bytes_;
  // The next chunk's first entry bounded this chunk's bytes when it was
  // checked.
  if (i % kIndexChunk) check_hot_chunk(i / kIndexChunk);
  return get_u32(reinterpret_cast<const unsigned char*>(bytes_.data()) + hot_ + i * kHotEntry + 24);
}

std::optional<TermRef> TfMeta::find_hot(std::string_view term) const {
  const uint32_t h = static_cast<uint32_t>(dict_hash(term) >> 32);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data());
  if (!hot_dir_ok_) {
    const size_t len = hot_dir_bytes(hot_n_) - 4;
    if (crc32c(p + hot_dir_, len) != get_u32(p + hot_dir_ + len))
      fail_corrupt(path_, "checksum mismatch in the hot term directory");
    hot_dir_ok_ = true;
  }
  // h's bucket: its entries, a few, by hash among them.
  const size_t b = hot_bits_ ? h >> (32 - hot_bits_) : 0;
  size_t lo = get_u32(p + hot_dir_ + 4 * b);
  const size_t hi = get_u32(p + hot_dir_ + 4 * (b + 1));
  if (lo > hi || hi > hot_n_) fail_corrupt(path_, "bad hot term directory");
  while (lo < hi && hot_hash(lo) < h) lo++;
  for (; lo < hi && hot_hash(lo) == h; lo++) {
    const size_t at = hot_term_at(lo), end = hot_term_at(lo + 1);
    if (std::string_view(bytes_.data() + hot_terms_ + at, end - at) != term) continue;
    const unsigned char* e = p + hot_ + lo * kHotEntry;
    TermRef r{};
    r.base = base_;
    r.offset = get_u64(e + 4);
    r.len = get_u32(e + 12);
    r.df = get_u32(e + 16);
    const size_t g = get_u32(e + 20);
    if (r.df < 2 || g >= groups_ || r.offset > (uint64_t{1} << 48)) fail_corrupt(path_, "bad hot term");
    if (r.df <= kSmallRegion) {
      // Read with its group's small regions, as scan() gives it.
      check_chunk(g / kIndexChunk);
      const unsigned char* ge = p + index_ + g * kTermGroupEntry;
      const uint64_t data = get_u64(ge + 16), small = get_u32(ge + 24);
      if (r.len < 3 || r.offset < data || r.offset - data > small || r.len > data + small - r.offset)
        fail_corrupt(path_, "bad posting region length");
      r.span_offset = data;
      r.span_len = small + 4;
    } else if (r.len < 8) {
      fail_corrupt(path_, "bad posting region length");
    }
    return r;
  }
  return std::nullopt;
}

std::optional<TermRef> TfMeta::find(std::string_view term) const {
  if (term.empty() || term.size() > kMaxTermBytes || groups_ == 0) return std::nullopt;
  if (hot_n_) {
    // A hot term is also in its group: found here, it is found.
    if (auto r = find_hot(term)) return r;
  }
  // The last group whose first term is at or before the one sought.
  const uint64_t w = word_of(term);
  size_t lo = 0, hi = groups_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint64_t k = key_of(mid);
    if (k < w || (k == w && first_term(mid) <= term))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return std::nullopt;
  // The group's terms ascend, each sharing its first bytes with the one
  // before: m, the bytes the last one read shares with the term sought
  // (it sorts before it), decides most entries without a comparison.
  std::optional<TermRef> found;
  size_t m = 0;
  bool first = true;
  scan(lo - 1, [&](std::string_view t, const TermRef& r, size_t shared) {
    if (!first) {
      if (shared > m) return false;  // agrees with the last one past m: still before
      if (shared < m) return true;   // its byte at shared passes the term's: absent
    }
    first = false;
    size_t j = m;
    const size_t n = std::min(t.size(), term.size());
    while (j < n && t[j] == term[j]) j++;
    if (j == t.size() && j == term.size()) {
      found = r;
      return true;
    }
    const bool before = j == t.size() || (j < term.size() && static_cast<unsigned char>(t[j]) <
                                                                 static_cast<unsigned char>(term[j]));
    if (!before) return true;
    m = j;
    return false;
  });
  return found;
}

std::vector<std::pair<std::string, TermRef>> TfMeta::all() const {
  std::vector<std::pair<std::string, TermRef>> out;
  for (size_t g = 0; g < groups_; g++) group_entries(g, out);
  return out;
}

void TfMeta::group_entries(size_t g, std::vector<std::pair<std::string, TermRef>>& out) const {
  if (g >= groups_) fail(SCIPIS_E_INTERNAL, "term group %zu of %zu", g, groups_);
  scan(g, [&](std::string_view t, const TermRef& r, size_t) {
    out.emplace_back(std::string(t), r);
    return false;
  });
}

std::string_view region_in(const std::string& path, std::string_view read, const TermRef& r,
                           VerifiedBytes* verified) {
  if (read.size() != r.read_len()) fail_corrupt(path, "posting region cut short");
  if (!r.span_len) return read;
  const size_t body = read.size() - 4;
  if (read.size() < 4 + r.len || r.offset < r.span_offset || r.offset - r.span_offset > body - r.len)
    fail_corrupt(path, "posting region outside its group");
  if (!verified || !verified->has(read.data(), read.size())) {
    if (crc32c(read.data(), body) != get_u32(reinterpret_cast<const unsigned char*>(read.data()) + body))
      fail_corrupt(path, "posting block checksum mismatch");
    if (verified) verified->add(read.data(), read.size());
  }
  return read.substr(static_cast<size_t>(r.offset - r.span_offset), static_cast<size_t>(r.len));
}

void decode_postings(const std::string& path, std::string_view region, const TermRef& ref,
                     uint64_t seq_limit, std::vector<Posting>& out) {
  RegionReader r(path, region, ref.df, ref.base, seq_limit);
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
  lens_at_ = kHeaderSize + 4 * blocks_ + 12;
  if (lens_at_ > file_.size()) fail_corrupt(path_, "block table exceeds the file");
  check_body(path_, h, file_.substr(kHeaderSize, 4 * blocks_ + 12));
  stats_at_ = lens_at_ + 4 * count_ + 4 * ((count_ + kLenChunk - 1) / kLenChunk);
  const size_t lcp = get_u32(reinterpret_cast<const unsigned char*>(file_.data()) + lens_at_ - 4);
  if (lcp > file_.size()) fail_corrupt(path_, "block statistics exceed the file");
  first_ = stats_at_ + lcp + kBlockStatBytes * blocks_;
  if (first_ > file_.size()) fail_corrupt(path_, "block table exceeds the file");
  lcp_ = file_.substr(stats_at_, lcp);
  const size_t room = file_.size() - first_;
  if (room > kMaxFileBlocksBytes) fail_corrupt(path_, "blocks exceed 4 GiB");
  if (blocks_ == 0 && room != 0) fail_corrupt(path_, "trailing bytes after the records");
  // Each block's bounds are checked when it is read (block()): a new
  // backend's first query opens every segment, and most read few blocks.
}

void FileBlocks::check_len_chunk(size_t c) const {
  const auto* p = reinterpret_cast<const unsigned char*>(file_.data());
  const size_t chunks = static_cast<size_t>((count_ + kLenChunk - 1) / kLenChunk);
  if (c >= chunks) fail_corrupt(path_, "length past the last record");
  const unsigned char* crcs = p + lens_at_ + 4 * count_;
  if (len_ok_.empty()) {
    // The chunks' crcs first (their own crc is in the checked table).
    if (crc32c(crcs, 4 * chunks) != get_u32(p + lens_at_ - 12))
      fail_corrupt(path_, "checksum mismatch in the length array");
    len_ok_.assign((chunks + 63) / 64, 0);
  }
  const size_t n = std::min<size_t>(kLenChunk, static_cast<size_t>(count_) - c * kLenChunk);
  if (crc32c(p + lens_at_ + 4 * kLenChunk * c, 4 * n) != get_u32(crcs + 4 * c))
    fail_corrupt(path_, "checksum mismatch in the length array");
  len_ok_[c / 64] |= uint64_t{1} << (c % 64);
}

void FileBlocks::check_stats() const {
  const auto* p = reinterpret_cast<const unsigned char*>(file_.data());
  if (crc32c(p + stats_at_, lcp_.size() + kBlockStatBytes * blocks_) != get_u32(p + lens_at_ - 8))
    fail_corrupt(path_, "checksum mismatch in the block statistics");
  stats_ok_ = true;
}

FileBlockStats FileBlocks::stats(size_t b) const {
  if (!stats_ok_) check_stats();
  if (b >= blocks_) fail_corrupt(path_, "file block past the end");
  FileBlockStats st;
  if (!st.read(reinterpret_cast<const unsigned char*>(file_.data()) + stats_at_ + lcp_.size() +
               kBlockStatBytes * b))
    fail_corrupt(path_, "bad statistics of file block " + std::to_string(b));
  return st;
}

std::string_view FileBlocks::block(size_t b) const {
  if (b >= blocks_) fail_corrupt(path_, "file block past the end");
  // It lies after the block before, within the file, with room for its
  // records and its crc; the last one ends the file.
  const size_t room = file_.size() - first_;
  const size_t start = offset(b);
  const size_t end = b + 1 < blocks_ ? offset(b + 1) : room;
  if ((b == 0 && start != 0) || end > room || start > end ||
      end - start < records_in(b) * kMinFileRecord + 4 * restarts_in(b) + 4)
    fail_corrupt(path_, "bad offset of file block " + std::to_string(b));
  return file_.substr(first_ + start, end - start);
}

void FileBlocks::decode(size_t b, DocInfo* docs, std::string& paths, size_t* ends, size_t upto) const {
  decode_from(b, 0, docs, paths, ends, upto);
}

std::string_view FileBlocks::checked_block(size_t b, size_t& len) const {
  const std::string_view blk = block(b);
  len = blk.size() - 4;
  if (block_ok_.empty()) block_ok_.assign((blocks_ + 63) / 64, 0);
  if (!(block_ok_[b / 64] >> (b % 64) & 1)) {
    if (crc32c(blk.data(), len) != get_u32(reinterpret_cast<const unsigned char*>(blk.data()) + len))
      fail_corrupt(path_, "checksum mismatch in file block " + std::to_string(b));
    block_ok_[b / 64] |= uint64_t{1} << (b % 64);
  }
  return blk;
}

// Past the restart table, in the block.
size_t FileBlocks::restart_at(size_t b, std::string_view blk, size_t len, size_t r) const {
  const size_t restarts = restarts_in(b);
  const size_t at = r ? get_u32(reinterpret_cast<const unsigned char*>(blk.data()) + 4 * (r / kRestart - 1))
                      : 4 * restarts;
  if (at < 4 * restarts || at > len) fail_corrupt(path_, "bad restart in file block " + std::to_string(b));
  return at;
}

void FileBlocks::path_of(size_t b, size_t i, std::string& out) const {
  size_t len;
  const std::string_view blk = checked_block(b, len);
  if (i >= records_in(b)) fail(SCIPIS_E_INTERNAL, "record %zu of file block %zu", i, b);
  const size_t from = i / kRestart * kRestart, at = restart_at(b, blk, len, from);
  Cursor c(blk.data() + at, len - at);
  out.clear();
  for (size_t r = from; r <= i; r++) {
    // seq, size, mtime, tokens, ctime, inode, uid, gid, mode, tail.
    for (int f = 0; f < 10; f++) c.varint();
    const uint64_t shared = c.varint(), suffix = c.varint();
    const std::string_view tail = c.bytes(suffix);
    if (!c.ok() || shared > out.size()) fail_corrupt(path_, "bad record in file block " + std::to_string(b));
    out.resize(shared);
    out.append(tail);
  }
}

void FileBlocks::decode_from(size_t b, size_t from, DocInfo* docs, std::string& paths, size_t* ends,
                             size_t upto) const {
  size_t len;
  const std::string_view blk = checked_block(b, len);
  const size_t n = std::min(upto, records_in(b));
  auto restart_at = [&](size_t r) { return this->restart_at(b, blk, len, r); };
  if (from % kRestart != 0 || from > n) fail(SCIPIS_E_INTERNAL, "file block decoded from record %zu", from);
  const size_t first_at = restart_at(from);
  Cursor c(blk.data() + first_at, len - first_at);
  size_t prev_at = paths.size(), prev_len = 0;
  for (size_t i = from; i < n; i++) {
    DocInfo& d = docs[i - from];
    const bool restart = i % kRestart == 0;
    // Read from the block's start, every restart must begin where the
    // table says (read from a restart, the crc vouches for the rest).
    if (restart && i && from == 0 && restart_at(i) != len - c.left())
      fail_corrupt(path_, "bad restart in file block " + std::to_string(b));
    if (restart) prev_len = 0;
    const uint64_t seq = c.varint();
    d.size = c.varint();
    const int64_t mtime = unzigzag(c.varint());
    d.tokens = c.varint();
    const uint64_t ctime_delta = c.varint();
    const uint64_t ino = c.varint(), uid = c.varint(), gid = c.varint(), mode = c.varint();
    d.tail = c.varint();
    const uint64_t shared = c.varint();
    const uint64_t suffix = c.varint();
    // The suffix lies in the block: shared and suffix are bounded by bytes
    // present before the path is sized.
    const std::string_view tail = c.bytes(suffix);
    if (!c.ok() || shared > prev_len || d.tail > (uint64_t{1} << 32)) fail_corrupt(path_, "bad record in file block " + std::to_string(b));
    // A 32-bit field is its value or, after the first record, the
    // previous one's plus a difference; either must land in 32 bits.
    auto field32 = [&](uint64_t v, uint32_t prev) {
      constexpr int64_t kMax = UINT32_MAX;
      const int64_t dlt = restart ? 0 : unzigzag(v);
      const int64_t x = restart ? (v > UINT32_MAX ? -1 : static_cast<int64_t>(v))
                                : (dlt < -kMax || dlt > kMax ? -1 : static_cast<int64_t>(prev) + dlt);
      if (x < 0 || x > kMax) fail_corrupt(path_, "bad record in file block " + std::to_string(b));
      return static_cast<uint32_t>(x);
    };
    const DocInfo* p = restart ? nullptr : &docs[i - from - 1];
    if (restart) {
      d.seq = seq;
      d.mtime_ns = mtime;
      d.ino = ino;
    } else {
      d.seq = p->seq + seq;
      d.mtime_ns = static_cast<int64_t>(static_cast<uint64_t>(p->mtime_ns) +
                                        static_cast<uint64_t>(mtime));
      d.ino = p->ino + static_cast<uint64_t>(unzigzag(ino));
    }
    d.ctime_ns = static_cast<int64_t>(static_cast<uint64_t>(d.mtime_ns) +
                                      static_cast<uint64_t>(unzigzag(ctime_delta)));
    d.uid = field32(uid, p ? p->uid : 0);
    d.gid = field32(gid, p ? p->gid : 0);
    d.mode = field32(mode, p ? p->mode : 0);
    const size_t at = paths.size();
    paths.resize(at + shared + tail.size());
    std::memcpy(paths.data() + at, paths.data() + prev_at, shared);
    std::memcpy(paths.data() + at + shared, tail.data(), tail.size());
    prev_at = at;
    prev_len = shared + tail.size();
    ends[i - from] = paths.size();
  }
  if (n == records_in(b) && c.left() != 0)
    fail_corrupt(path_, "trailing bytes in file block " + std::to_string(b));
  static_assert(kLenChunk % kFileBlock == 0, "a block's lengths lie in one chunk");
  const unsigned char* arr = len_chunk(b * kFileBlock / kLenChunk) + 4 * (b * kFileBlock % kLenChunk);
  for (size_t i = from; i < n; i++)
    if (get_u32(arr + 4 * i) != std::min<uint64_t>(docs[i - from].tokens, kLenInRecord))
      fail_corrupt(path_, "length array differs from file block " + std::to_string(b));
}

void FileData::load(const std::string& path, FileData& out) {
  const FileBlocks fb(path, out.bytes);
  if (fb.blocks()) fb.stats(0);  // checks them all
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

FileMeta::FileMeta(std::string path, std::string_view b, uint64_t records) : path_(std::move(path)) {
  FileHeader h = check_header(path_, kMagicFileMeta, b.data(), b.size());
  std::string_view body(b.data() + kHeaderSize, b.size() - kHeaderSize);
  check_body(path_, h, body);
  if (h.count > body.size() / 12 || body.size() != h.count * 12) fail_corrupt(path_, "bad length");
  entries_ = reinterpret_cast<const unsigned char*>(body.data());
  count_ = static_cast<size_t>(h.count);
  // One pass, nothing copied: the binary search needs the order.
  for (size_t i = 0; i < count_; i++) {
    if (get_u32(entries_ + 12 * i + 8) >= records) fail_corrupt(path_, "entry names an unknown record");
    if (i && (hash_at(i - 1) > hash_at(i) ||
              (hash_at(i - 1) == hash_at(i) && get_u32(entries_ + 12 * i - 4) >= get_u32(entries_ + 12 * i + 8))))
      fail_corrupt(path_, "entries out of order");
  }
}

std::vector<uint32_t> FileMeta::find(uint64_t hash) const {
  size_t lo = first_not_below(count_, hash, [&](size_t i) { return hash_at(i); });
  std::vector<uint32_t> out;
  for (; lo < count_ && hash_at(lo) == hash; lo++) out.push_back(get_u32(entries_ + 12 * lo + 8));
  return out;
}

}  // namespace scipis
