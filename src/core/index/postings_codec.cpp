#include "index/postings_codec.h"

#include <bit>
#include <cstring>

#include "util/bytes.h"
#include "util/error.h"

namespace scipis {

unsigned bit_width(uint64_t v) { return v ? 64u - static_cast<unsigned>(__builtin_clzll(v)) : 0u; }

size_t packed_bytes(size_t n, unsigned w) { return (n * w + 7) / 8; }

size_t max_region_bytes(size_t n) {
  const size_t nb = (n + kBlockPostings - 1) / kBlockPostings;
  // df; per block six varints (10 + 3 + 5 + 10 + 5 + 10), width bytes, a
  // crc; gaps and tfs at most 64 and 32 bits each; the header's crc.
  return 10 + nb * (43 + 2 + 4) + n * (8 + 4) + 4;
}

char* pack_bits(char* out, const uint64_t* v, size_t n, unsigned w) {
  static_assert(std::endian::native == std::endian::little, "a word's bytes in stream order");
  if (w == 0) return out;
  // A store per 64 bits rather than a loop per byte, whose exits the
  // branch predictor missed at every width (a flush packs 20 million
  // postings); the bytes are the same, and none past the last.
  unsigned __int128 acc = 0;
  unsigned have = 0;
  for (size_t i = 0; i < n; i++) {
    acc |= static_cast<unsigned __int128>(v[i]) << have;
    have += w;
    if (have >= 64) {
      const uint64_t word = static_cast<uint64_t>(acc);
      std::memcpy(out, &word, 8);
      out += 8;
      acc >>= 64;
      have -= 64;
    }
  }
  for (; have >= 8; have -= 8) {
    *out++ = static_cast<char>(static_cast<uint8_t>(acc));
    acc >>= 8;
  }
  if (have) *out++ = static_cast<char>(static_cast<uint8_t>(acc));
  return out;
}

namespace {
// Values i.. of n from p on, byte by byte; acc holds have bits already read.
bool finish_unpack(const unsigned char* p, const char*& in, uint64_t* v, size_t i, size_t n, unsigned w,
                   uint64_t mask, unsigned __int128 acc, unsigned have) {
  for (; i < n; i++) {
    while (have < w) {
      acc |= static_cast<unsigned __int128>(*p++) << have;
      have += 8;
    }
    v[i] = static_cast<uint64_t>(acc) & mask;
    acc >>= w;
    have -= w;
  }
  in = reinterpret_cast<const char*>(p);
  return true;
}
}  // namespace

bool unpack_bits(const char*& in, const char* end, uint64_t* v, size_t n, unsigned w) {
  if (w == 0) {
    for (size_t i = 0; i < n; i++) v[i] = 0;
    return true;
  }
  if (w > 64 || static_cast<size_t>(end - in) < packed_bytes(n, w)) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(in);
  const uint64_t mask = w == 64 ? UINT64_MAX : (uint64_t{1} << w) - 1;
  size_t i = 0;
  if (w <= 56) {
    // A word load per value while eight bytes from the value's first byte
    // lie inside the input; the bytes loop below finishes the rest.
    const size_t avail = static_cast<size_t>(end - in);
    size_t bit = 0;
    for (; i < n && bit / 8 + 8 <= avail; i++, bit += w) v[i] = (load_u64(in + bit / 8) >> (bit % 8)) & mask;
    p += bit / 8;
    if (bit % 8) {
      // Resume mid-byte: the byte's bits already used are dropped.
      unsigned __int128 acc = *p++ >> (bit % 8);
      unsigned have = 8 - static_cast<unsigned>(bit % 8);
      return finish_unpack(p, in, v, i, n, w, mask, acc, have);
    }
  }
  return finish_unpack(p, in, v, i, n, w, mask, 0, 0);
}


char* write_small_region(char* out, const uint64_t* seqs, const uint32_t* tfs, size_t n,
                         uint64_t base) {
  uint64_t gaps[kSmallRegion], tf1[kSmallRegion];
  uint64_t max_gap = 0, max_tf = 0;
  for (size_t i = 0; i < n; i++) {
    tf1[i] = tfs[i] - 1;
    max_tf = std::max(max_tf, tf1[i]);
    if (i) {
      gaps[i - 1] = seqs[i] - seqs[i - 1] - 1;
      max_gap = std::max(max_gap, gaps[i - 1]);
    }
  }
  const unsigned gw = bit_width(max_gap), tw = bit_width(max_tf);
  out = write_varint(out, seqs[0] - base);
  *out++ = static_cast<char>(gw);
  *out++ = static_cast<char>(tw);
  out = pack_bits(out, gaps, n - 1, gw);
  return pack_bits(out, tf1, n, tw);
}

void RegionReader::read_small(uint64_t df, uint64_t base, uint64_t seq_limit) {
  if (df < 2) fail_corrupt(path_, "bad posting count");
  Cursor c(region_.data(), region_.size());
  const uint64_t first = c.varint();
  if (!c.ok() || c.left() < 2 || first >= seq_limit - std::min(base, seq_limit))
    fail_corrupt(path_, "bad small posting region");
  const char* p = reinterpret_cast<const char*>(c.pos());
  const char* const end = region_.data() + region_.size();
  const unsigned gw = static_cast<uint8_t>(p[0]), tw = static_cast<uint8_t>(p[1]);
  p += 2;
  uint64_t gaps[kSmallRegion], tf1[kSmallRegion];
  const size_t n = static_cast<size_t>(df);
  if (gw > 64 || tw > 32 || !unpack_bits(p, end, gaps, n - 1, gw) ||
      !unpack_bits(p, end, tf1, n, tw) || p != end)
    fail_corrupt(path_, "posting block has a bad length");
  small_n_ = static_cast<uint32_t>(n);
  uint64_t seq = base + first, max_tf = 0;
  for (size_t i = 0; i < n; i++) {
    if (i) {
      // Past the limit, or wrapping round.
      if (gaps[i - 1] >= seq_limit - seq - 1) fail_corrupt(path_, "posting names an unknown document");
      seq += gaps[i - 1] + 1;
    }
    if (tf1[i] >= UINT32_MAX) fail_corrupt(path_, "bad posting");
    small_seqs_[i] = seq;
    small_tfs_[i] = static_cast<uint32_t>(tf1[i] + 1);
    max_tf = std::max<uint64_t>(max_tf, small_tfs_[i]);
  }
  blocks_.resize(1);
  blocks_[0] = BlockInfo{seq, static_cast<uint32_t>(max_tf), 0, 0, region_.size(), static_cast<uint32_t>(n), 0, 0};
}

namespace {
// Freed block arrays of this thread, for the next regions. Plain
// (trivially destructible) storage, emptied by a cleaner at the thread's
// end: a list freed after that, by another thread-local's destructor,
// is then simply deleted.
constexpr size_t kKeptArrays = 16;
// At most this many entries kept in all (16 MiB): a backend keeps no more
// between queries, whatever its terms' lists.
constexpr size_t kMaxKeptEntries = size_t{1} << 18;
struct KeptArray {
  BlockInfo* p;
  size_t cap;
};
thread_local KeptArray kept_arrays[kKeptArrays];
// Readers of this thread's last queries (RegionReader::make, keep): a query
// opens one per term and segment, 1.6 KiB each, and allocating them was a
// tenth of a frequent term's query.
constexpr size_t kKeptReaders = 32;
thread_local RegionReader* kept_readers[kKeptReaders];
thread_local size_t kept_reader_count = 0;
thread_local size_t kept_entries = 0;
thread_local bool kept_closed = false;
struct KeptCleaner {
  bool armed = false;  // set with the first array kept: the cleaner then exists
  ~KeptCleaner() {
    drop_kept_block_lists();
    kept_closed = true;
  }
};
thread_local KeptCleaner kept_cleaner;
}  // namespace

void drop_kept_block_lists() {
  // Readers first: their block lists are kept as they go.
  while (kept_reader_count) delete kept_readers[--kept_reader_count];
  for (KeptArray& k : kept_arrays) {
    delete[] k.p;
    k = KeptArray{nullptr, 0};
  }
  kept_entries = 0;
}

BlockList::~BlockList() {
  if (!heap_ || cap_ > kMaxKeptEntries - kept_entries || kept_closed) return;
  kept_cleaner.armed = true;
  for (KeptArray& k : kept_arrays) {
    if (!k.p) {
      k = KeptArray{heap_.release(), cap_};
      kept_entries += cap_;
      return;
    }
  }
}

void BlockList::resize(size_t n) {
  if (n <= 1 && !heap_) {
    data_ = &one_;
  } else if (!heap_ || n > cap_) {
    // The smallest kept array that holds n, else a new one.
    KeptArray* best = nullptr;
    for (KeptArray& k : kept_arrays)
      if (k.p && k.cap >= n && (!best || k.cap < best->cap)) best = &k;
    if (best) {
      heap_.reset(best->p);
      cap_ = best->cap;
      kept_entries -= best->cap;
      *best = KeptArray{nullptr, 0};
    } else {
      cap_ = std::max<size_t>(n, 16);
      heap_ = std::make_unique_for_overwrite<BlockInfo[]>(cap_);
    }
    data_ = heap_.get();
  }
  n_ = n;
}

RegionReader::RegionReader(const std::string& path, std::string_view region, uint64_t expect_df,
                           uint64_t base, uint64_t seq_limit) {
  open(path, region, expect_df, base, seq_limit);
}

void RegionReader::open(const std::string& path, std::string_view region, uint64_t expect_df, uint64_t base,
                        uint64_t seq_limit) {
  path_ = path;
  region_ = region;
  base_ = base;
  verified_ = nullptr;
  small_n_ = 0;
  if (expect_df <= kSmallRegion) {
    read_small(expect_df, base, seq_limit);
    return;
  }
  if (!parse_skip(region, region.size(), expect_df, seq_limit))
    fail_corrupt(path, "bad posting skip entry");
}

std::unique_ptr<RegionReader> RegionReader::make(const std::string& path, std::string_view region,
                                                 uint64_t expect_df, uint64_t base, uint64_t seq_limit,
                                                 VerifiedBytes* verified) {
  std::unique_ptr<RegionReader> r;
  if (!kept_reader_count) {
    r = std::make_unique<RegionReader>(path, region, expect_df, base, seq_limit);
  } else {
    r.reset(kept_readers[--kept_reader_count]);
    r->open(path, region, expect_df, base, seq_limit);
  }
  r->verified_ = verified;
  return r;
}

void RegionReader::keep(std::unique_ptr<RegionReader> r) {
  if (!r || kept_closed || kept_reader_count == kKeptReaders) return;
  kept_cleaner.armed = true;
  kept_readers[kept_reader_count++] = r.release();
}

std::unique_ptr<RegionReader> RegionReader::from_prefix(const std::string& path, std::string_view prefix,
                                                        uint64_t region_size, uint64_t expect_df,
                                                        uint64_t base, uint64_t seq_limit) {
  if (expect_df <= kSmallRegion || prefix.size() > region_size)
    fail_corrupt(path, "bad posting region");
  std::unique_ptr<RegionReader> r(new RegionReader(path, base));
  if (!r->parse_skip(prefix, region_size, expect_df, seq_limit)) return nullptr;
  r->region_ = prefix;
  return r;
}

bool RegionReader::parse_skip(std::string_view data, uint64_t region_size, uint64_t expect_df,
                              uint64_t seq_limit) {
  const bool whole = data.size() == region_size;
  if (region_size < 8) fail_corrupt(path_, "posting block too short");
  Cursor c(data.data(), data.size());
  const uint64_t n = c.varint();
  if (!c.ok()) {
    if (!whole) return false;
    fail_corrupt(path_, "bad posting count");
  }
  if (n != expect_df) fail_corrupt(path_, "posting count disagrees with the dictionary");
  // A block takes at least 8 bytes (skip entry and widths), even when its
  // gaps and tfs take no bits at all.
  if (n / kBlockPostings > region_size / 8) fail_corrupt(path_, "bad posting count");
  const size_t nb = static_cast<size_t>((n + kBlockPostings - 1) / kBlockPostings);
  blocks_.resize(nb);
  uint64_t last = base_;
  for (size_t b = 0; b < nb; b++) {
    BlockInfo& k = blocks_[b];
    const uint64_t gap = c.varint();
    k.bytes = static_cast<size_t>(c.varint());
    const uint64_t max_tf = c.varint();
    k.min_len = c.varint();
    k.best_tf = c.varint();
    k.best_len = c.varint();
    if (!c.ok() && !whole) return false;
    k.count = static_cast<uint32_t>(b + 1 < nb ? kBlockPostings : n - b * kBlockPostings);
    // Each block holds count distinct documents after the last one.
    const bool best_ok = k.min_len ? k.best_tf >= 1 && k.best_tf <= max_tf && k.best_len >= k.min_len &&
                                         k.best_len >= k.best_tf
                                   : k.best_tf == 0 && k.best_len == 0;
    if (!c.ok() || !best_ok || max_tf == 0 || max_tf > UINT32_MAX || gap >= seq_limit ||
        (b && gap < k.count) || (!b && gap + 1 < k.count) || k.bytes > region_size)
      fail_corrupt(path_, "bad posting skip entry");
    if (gap >= seq_limit - std::min(last, seq_limit)) fail_corrupt(path_, "posting names an unknown document");
    last += gap;
    k.last_seq = last;
    k.max_tf = static_cast<uint32_t>(max_tf);
  }
  size_t at = static_cast<size_t>(reinterpret_cast<const char*>(c.pos()) - data.data());
  if (data.size() - at < 4) {
    if (!whole) return false;
    fail_corrupt(path_, "posting block too short");
  }
  if (crc32c(data.data(), at) != get_u32(reinterpret_cast<const unsigned char*>(data.data()) + at))
    fail_corrupt(path_, "posting block checksum mismatch");
  at += 4;
  for (BlockInfo& k : blocks_) {
    if (k.bytes < 6 || k.bytes > region_size - at) fail_corrupt(path_, "posting block has a bad length");
    k.offset = at;
    at += k.bytes;
  }
  if (at != region_size) fail_corrupt(path_, "posting block has a bad length");
  return true;
}

void RegionReader::decode(size_t b, uint64_t* seqs, uint32_t* tfs) const {
  if (small_n_) {
    std::copy(small_seqs_, small_seqs_ + small_n_, seqs);
    std::copy(small_tfs_, small_tfs_ + small_n_, tfs);
    return;
  }
  const BlockInfo& k = blocks_[b];
  if (k.offset + k.bytes > region_.size()) fail_corrupt(path_, "posting block read past what is at hand");
  decode_payload(b, region_.data() + k.offset, seqs, tfs);
}

void RegionReader::decode_payload(size_t b, const char* payload, uint64_t* seqs, uint32_t* tfs) const {
  const BlockInfo& k = blocks_[b];
  const char* p = payload;
  const char* end = p + k.bytes - 4;
  if (!verified_ || !verified_->has(p, k.bytes)) {
    if (crc32c(p, k.bytes - 4) != get_u32(reinterpret_cast<const unsigned char*>(end)))
      fail_corrupt(path_, "posting block checksum mismatch");
    if (verified_) verified_->add(p, k.bytes);
  }
  const unsigned gw = static_cast<uint8_t>(p[0]), tw = static_cast<uint8_t>(p[1]);
  p += 2;
  uint64_t gaps[kBlockPostings], tf1[kBlockPostings];
  if (gw > 64 || tw > 32 || !unpack_bits(p, end, gaps, k.count, gw) ||
      !unpack_bits(p, end, tf1, k.count, tw) || p != end)
    fail_corrupt(path_, "posting block has a bad length");
  uint64_t next = b ? blocks_[b - 1].last_seq + 1 : base_;
  for (uint32_t i = 0; i < k.count; i++) {
    // A gap past the block's last document would also wrap round.
    if (gaps[i] > k.last_seq - std::min(next, k.last_seq) || next > k.last_seq ||
        tf1[i] >= k.max_tf)
      fail_corrupt(path_, "bad posting");
    seqs[i] = next + gaps[i];
    next = seqs[i] + 1;
    tfs[i] = static_cast<uint32_t>(tf1[i] + 1);
  }
  if (seqs[k.count - 1] != k.last_seq) fail_corrupt(path_, "posting skip entry disagrees with its block");
}

}  // namespace scipis
