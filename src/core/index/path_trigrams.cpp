#include "index/path_trigrams.h"

#include <algorithm>
#include <numeric>

#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/mem_account.h"

namespace scipis {

namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint32_t kB = kTrigramBlock;

template <typename T>
using Vec = std::vector<T, mem::Accounted<T>>;

uint32_t trigram_at(const char* p) {
  return static_cast<uint32_t>(static_cast<unsigned char>(p[0])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(p[1])) << 8 |
         static_cast<unsigned char>(p[2]);
}

unsigned width(uint32_t v) { return v ? 32 - static_cast<unsigned>(__builtin_clz(v)) : 0; }

size_t varint_len(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) n++;
  return n;
}

// A block's bytes after its first record's varint.
size_t packed_len(uint32_t k, unsigned w) {
  return k > 1 ? 1 + ((k - 1) * size_t{w} + 7) / 8 : 0;
}

// Trigram -> dense id, by open addressing: a trigram is below 2^24, so an
// all-ones slot is free. Sized by the distinct trigrams, not by the 2^24
// possible ones, which would cost 64 MiB for a flush of ten paths.
class TrigramIds {
 public:
  TrigramIds() { resize(12); }
  // The id of t: the next one if t is new.
  uint32_t add(uint32_t t) {
    size_t i = slot(t);
    for (; slots_[i] != kFree; i = (i + 1) & mask_)
      if (static_cast<uint32_t>(slots_[i] >> 32) == t) return static_cast<uint32_t>(slots_[i]);
    const auto id = static_cast<uint32_t>(used_++);
    slots_[i] = uint64_t{t} << 32 | id;
    if (used_ * 2 > mask_) resize(bits_ + 1);
    return id;
  }
  // The id of t, which was added (pass 2 sees pass 1's trigrams).
  uint32_t get(uint32_t t) const {
    size_t i = slot(t);
    while (static_cast<uint32_t>(slots_[i] >> 32) != t) i = (i + 1) & mask_;
    return static_cast<uint32_t>(slots_[i]);
  }

 private:
  static constexpr uint64_t kFree = ~uint64_t{0};
  size_t slot(uint32_t t) const { return (t * 0x9E3779B97F4A7C15ull) >> (64 - bits_); }
  void resize(unsigned bits) {
    Vec<uint64_t> old(size_t{1} << bits, kFree);
    old.swap(slots_);
    bits_ = bits;
    mask_ = (size_t{1} << bits) - 1;
    for (uint64_t s : old)
      if (s != kFree) {
        size_t i = slot(static_cast<uint32_t>(s >> 32));
        while (slots_[i] != kFree) i = (i + 1) & mask_;
        slots_[i] = s;
      }
  }
  Vec<uint64_t> slots_;
  unsigned bits_ = 0;
  size_t mask_ = 0, used_ = 0;
};

// One trigram's list while it is built. Pass 1 counts its records and
// sizes its blocks; pass 2 writes them where pass 1 placed them. What
// every record touches is kept to 32 bytes: half a cache line.
struct Building {
  uint32_t count = 0;  // its records, counted by pass 1
  uint32_t done = 0;   // records written by pass 2
  uint32_t last = kNone;
  uint32_t first = 0;  // the open block's first record
  uint32_t w = 0;      // the open block's bit width
  uint64_t at = 0;     // its bytes (pass 1), or the open block's packed values (pass 2)
};
struct Placed {
  uint32_t trigram;
  uint64_t widths = 0;          // its blocks' widths, from here in the width log
  uint64_t start = 0, end = 0;  // its blocks in the file, before the crc
};

// Values go in w bits from bit `bit` on: OR-ed in, so the file starts
// zeroed, and only bytes holding some of v's bits are touched.
void put_bits(unsigned char* o, uint64_t bit, uint32_t v) {
  unsigned char* p = o + bit / 8;
  for (uint64_t x = uint64_t{v} << (bit % 8); x; x >>= 8) *p++ |= static_cast<unsigned char>(x);
}

// Calls f(id, record) for each trigram of each path, in record order
// (the same trigram twice in a path is for the caller to skip). Paths in
// crawl order share long prefixes with the path before: the ids of the
// trigrams within the shared prefix are that path's, not looked up again.
template <typename Id, typename F>
void each_trigram(std::string_view paths, std::span<const uint32_t> lens, Id&& id, F&& f) {
  const char* p = paths.data();
  const char* prev = p;
  uint32_t prev_len = 0;
  Vec<uint32_t> ids, prev_ids;
  for (size_t r = 0; r < lens.size(); r++) {
    const uint32_t n = lens[r];
    size_t shared = 0;
    const size_t most = std::min(n, prev_len);
    while (shared < most && p[shared] == prev[shared]) shared++;
    if (n > ids.size()) ids.resize(n);
    size_t i = 0;
    for (; i + 3 <= shared; i++) f(ids[i] = prev_ids[i], static_cast<uint32_t>(r));
    for (; i + 3 <= n; i++) f(ids[i] = id(trigram_at(p + i)), static_cast<uint32_t>(r));
    ids.swap(prev_ids);
    prev = p;
    prev_len = n;
    p += n;
  }
}

}  // namespace

std::string build_path_trigrams(std::string_view paths, std::span<const uint32_t> lens) {
  if (lens.size() > kNone) fail(SCIPIS_E_INTERNAL, "%zu paths in one segment", lens.size());
  uint64_t total = 0;
  for (uint32_t n : lens) total += n;
  if (total != paths.size()) fail(SCIPIS_E_INTERNAL, "path lengths do not add up");

  TrigramIds ids;
  Vec<Building> lists;
  Vec<Placed> placed;
  // Each block's width, in the order blocks close: id << 6 | w (ids
  // number distinct trigrams, under 2^24; w is at most 32).
  Vec<uint32_t> closed;
  each_trigram(paths, lens, [&](uint32_t t) {
    const uint32_t id = ids.add(t);
    if (id == lists.size()) {
      lists.emplace_back();
      placed.push_back(Placed{t});
    }
    return id;
  }, [&](uint32_t id, uint32_t r) {
    Building& b = lists[id];
    if (b.last == r) return;
    if (b.count % kB == 0) {
      if (b.count) {
        b.at += packed_len(kB, b.w);
        closed.push_back(id << 6 | b.w);
      }
      b.at += varint_len(b.count ? r - b.first - kB : r);
      b.first = r;
      b.w = 0;
    } else {
      b.w = std::max(b.w, width(r - b.last - 1));
    }
    b.count++;
    b.last = r;
  });

  // Lists in trigram order, each followed by its crc; each block's width
  // moves from the log, in the order blocks closed, to its list's run.
  Vec<uint32_t> order(lists.size());
  for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return placed[a].trigram < placed[b].trigram; });
  const size_t table = kHeaderSize + kTrigramEntry * lists.size();
  uint64_t pos = table, blocks = 0;
  for (uint32_t id : order) {
    Building& b = lists[id];
    Placed& p = placed[id];
    const uint32_t k = b.count - (b.count - 1) / kB * kB;
    b.at += packed_len(k, b.w);
    closed.push_back(id << 6 | b.w);
    p.start = pos;
    p.end = pos + b.at;
    pos = p.end + 4;
    p.widths = blocks;
    blocks += (b.count + kB - 1) / kB;
  }
  Vec<uint8_t> widths(blocks);
  for (const uint32_t c : closed) widths[placed[c >> 6].widths + lists[c >> 6].done++] = c & 63;
  closed = Vec<uint32_t>();
  for (uint32_t id = 0; id < lists.size(); id++) {
    Building& b = lists[id];
    b.at = placed[id].start;
    b.done = 0;
    b.last = kNone;
    b.w = 0;
  }

  // A block's varint and width go first; at then stays on its packed
  // values, the i-th of which starts at bit (i - 1) * w, until the next
  // block.
  std::string out(pos, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  each_trigram(paths, lens, [&](uint32_t t) { return ids.get(t); }, [&](uint32_t id, uint32_t r) {
    Building& b = lists[id];
    if (b.last == r) return;
    const uint32_t i = b.done % kB;
    if (i == 0) {
      if (b.done) b.at += packed_len(kB, b.w) - 1;
      char* w = reinterpret_cast<char*>(o + b.at);
      b.at += static_cast<uint64_t>(write_varint(w, b.done ? r - b.first - kB : r) - w);
      b.first = r;
      if (b.count - b.done > 1) {
        b.w = widths[placed[id].widths + b.done / kB];
        o[b.at++] = static_cast<unsigned char>(b.w);
      }
    } else if (b.w) {
      put_bits(o, b.at * 8 + (i - 1) * uint64_t{b.w}, r - b.last - 1);
    }
    b.done++;
    b.last = r;
  });

  for (size_t i = 0; i < order.size(); i++) {
    const Building& b = lists[order[i]];
    const Placed& p = placed[order[i]];
    const uint32_t k = b.count - (b.count - 1) / kB * kB;
    if (b.done != b.count || b.at + packed_len(k, b.w) - (k > 1) != p.end)
      fail(SCIPIS_E_INTERNAL, "trigram list of %u records misplaced", b.count);
    write_u32(out.data() + p.end, crc32c(o + p.start, p.end - p.start));
    char* e = out.data() + kHeaderSize + kTrigramEntry * i;
    e = write_u32(e, p.trigram);
    e = write_u32(e, b.count);
    write_u64(e, p.end + 4 - table);
  }
  FileHeader h;
  h.aux = static_cast<uint32_t>(lists.size());
  h.count = lens.size();
  h.body_crc = crc32c(o + kHeaderSize, table - kHeaderSize);
  std::string header;
  put_header(header, kMagicPathTrigrams, h);
  out.replace(0, kHeaderSize, header);
  return out;
}

namespace {

// Walks one list block by block, from the headers alone until a block
// may hold a record sought; every bound is checked before it is used.
class ListCursor {
 public:
  ListCursor(const std::string& path, const unsigned char* data, size_t len, uint32_t count,
             uint32_t records)
      : path_(path), data_(data), len_(len), count_(count), records_(records) {
    if (crc32c(data, len) != get_u32(data + len)) fail_corrupt(path_, "trigram list checksum mismatch");
  }

  void decode_all(std::vector<uint32_t>& out) {
    uint32_t v[kB];
    while (next()) {
      decode(v);
      if (!out.empty() && v[0] <= out.back()) fail_corrupt(path_, "trigram list out of order");
      out.insert(out.end(), v, v + k_);
    }
  }

  // Keeps the records of v (ascending) that the list holds.
  void keep_common(std::vector<uint32_t>& v) {
    uint32_t vals[kB];
    uint32_t decoded = 0, i = 0;
    size_t kept = 0;
    bool have = next();
    Block ahead = have ? peek() : Block{};
    for (const uint32_t x : v) {
      while (ahead.k && ahead.first <= x) {
        take(ahead);
        ahead = peek();
        decoded = 0;
      }
      if (!have || x < first_) continue;
      if (!decoded) {
        decode(vals);
        decoded = k_;
        i = 0;
      }
      while (i < decoded && vals[i] < x) i++;
      if (i < decoded && vals[i] == x) v[kept++] = x;
    }
    v.resize(kept);
  }

 private:
  struct Block {
    uint64_t first = 0;
    uint32_t k = 0;  // 0: no block
    uint32_t w = 0;
    size_t packed = 0, end = 0;
  };

  // The header of the block after the current one, unchecked for order.
  Block peek() const {
    Block b;
    if (done_ == count_) {
      if (at_ != len_) fail_corrupt(path_, "trailing bytes in a trigram list");
      return b;
    }
    Cursor c(data_ + at_, len_ - at_);
    const uint64_t g = c.varint();
    b.k = std::min(kB, count_ - done_);
    if (!c.ok() || g >= records_) fail_corrupt(path_, "bad trigram block");
    b.first = done_ ? first_ + kB + g : g;
    if (b.first + b.k > records_) fail_corrupt(path_, "trigram record past the segment");
    if (b.k > 1) {
      const std::string_view w = c.bytes(1);
      if (!c.ok() || static_cast<unsigned char>(w[0]) > 32) fail_corrupt(path_, "bad trigram block");
      b.w = static_cast<unsigned char>(w[0]);
    }
    b.packed = at_ + static_cast<size_t>(c.pos() - (data_ + at_));
    const size_t bytes = b.k > 1 ? ((b.k - 1) * size_t{b.w} + 7) / 8 : 0;
    if (bytes > len_ - b.packed) fail_corrupt(path_, "trigram block past its list");
    b.end = b.packed + bytes;
    return b;
  }
  void take(const Block& b) {
    first_ = b.first;
    k_ = b.k;
    w_ = b.w;
    packed_ = b.packed;
    at_ = b.end;
    done_ += b.k;
  }
  bool next() {
    const Block b = peek();
    if (b.k) take(b);
    return b.k;
  }
  // The current block's records.
  void decode(uint32_t* v) const {
    uint64_t r = first_, acc = 0;
    unsigned bits = 0;
    const unsigned char* p = data_ + packed_;
    const uint64_t mask = (uint64_t{1} << w_) - 1;
    v[0] = static_cast<uint32_t>(r);
    for (uint32_t i = 1; i < k_; i++) {
      while (bits < w_) {
        acc |= uint64_t{*p++} << bits;
        bits += 8;
      }
      r += (acc & mask) + 1;
      acc >>= w_;
      bits -= w_;
      if (r >= records_) fail_corrupt(path_, "trigram record past the segment");
      v[i] = static_cast<uint32_t>(r);
    }
  }

  const std::string& path_;
  const unsigned char* data_;
  size_t len_;
  uint32_t count_, records_;
  uint32_t done_ = 0;  // records in the blocks up to the current one
  size_t at_ = 0;      // the current block's end
  uint64_t first_ = 0;
  uint32_t k_ = 0, w_ = 0;
  size_t packed_ = 0;
};

}  // namespace

PathTrigrams::PathTrigrams(std::string path, std::string_view file) : path_(std::move(path)) {
  const FileHeader h = check_header(path_, kMagicPathTrigrams, file.data(), file.size());
  if (h.count > kNone) fail_corrupt(path_, "record count exceeds 2^32 - 1");
  if (h.aux > (1u << 24)) fail_corrupt(path_, "more trigrams than there are");
  const uint64_t table = uint64_t{h.aux} * kTrigramEntry;
  if (table > file.size() - kHeaderSize) fail_corrupt(path_, "trigram table exceeds the file");
  check_body(path_, h, file.substr(kHeaderSize, table));
  records_ = static_cast<uint32_t>(h.count);
  trigrams_ = h.aux;
  table_ = reinterpret_cast<const unsigned char*>(file.data()) + kHeaderSize;
  lists_ = table_ + table;
  room_ = file.size() - kHeaderSize - table;
  // The last list ends the file: a file cut short or grown fails here.
  if ((trigrams_ ? get_u64(table_ + kTrigramEntry * (trigrams_ - 1) + 8) : 0) != room_)
    fail_corrupt(path_, "trigram lists cut short or followed by trailing bytes");
  // The entries a query reads are bounded then (find): a new backend's
  // first pattern opens every segment's index and reads a few entries.
}

size_t trigram_lower_bound(const unsigned char* table, size_t n, uint32_t t) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (get_u32(table + kTrigramEntry * mid) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

std::optional<TrigramList> PathTrigrams::find(uint32_t trigram) const {
  const size_t lo = trigram_lower_bound(table_, trigrams_, trigram);
  if (lo == trigrams_ || get_u32(table_ + kTrigramEntry * lo) != trigram) return std::nullopt;
  return list(lo);
}

TrigramList PathTrigrams::list(size_t i) const {
  const unsigned char* e = table_ + kTrigramEntry * i;
  // A list lies after the one before, within the file, and holds at least
  // a byte per block and its crc.
  const uint64_t start = i ? get_u64(e - kTrigramEntry + 8) : 0;
  const uint64_t end = get_u64(e + 8);
  const uint32_t c = get_u32(e + 4);
  if (i && get_u32(e - kTrigramEntry) >= get_u32(e)) fail_corrupt(path_, "trigram table out of order");
  if (c == 0 || c > records_) fail_corrupt(path_, "bad trigram record count");
  if (end > room_ || end < start || end - start < 4 + (c + kB - 1) / kB)
    fail_corrupt(path_, "bad trigram list end");
  return TrigramList{lists_ + start, static_cast<size_t>(end - start - 4), c};
}

uint32_t PathTrigrams::trigram(size_t i) const { return get_u32(table_ + kTrigramEntry * i); }


std::vector<uint32_t> intersect_trigram_lists(const std::string& path, std::vector<TrigramList> lists,
                                              uint32_t records) {
  // A list of every record (a trigram of the collection's root, say) says
  // nothing: it is not read.
  std::erase_if(lists, [&](const TrigramList& l) { return l.count == records; });
  std::vector<uint32_t> out;
  if (lists.empty()) {
    out.resize(records);
    std::iota(out.begin(), out.end(), 0u);
    return out;
  }
  // Smallest first: the candidates only shrink, and the longer lists are
  // then mostly skipped over block by block.
  std::sort(lists.begin(), lists.end(),
            [](const TrigramList& a, const TrigramList& b) { return a.count < b.count; });
  out.reserve(lists[0].count);
  ListCursor(path, lists[0].data, lists[0].len, lists[0].count, records).decode_all(out);
  for (size_t i = 1; i < lists.size() && !out.empty(); i++)
    ListCursor(path, lists[i].data, lists[i].len, lists[i].count, records).keep_common(out);
  return out;
}

std::vector<uint32_t> pattern_trigrams(const PathPattern& pattern) {
  std::vector<uint32_t> tris;
  for (const std::string& run : pattern.literal_runs())
    for (size_t i = 0; i + 3 <= run.size(); i++) tris.push_back(trigram_at(run.data() + i));
  std::sort(tris.begin(), tris.end());
  tris.erase(std::unique(tris.begin(), tris.end()), tris.end());
  return tris;
}

std::optional<std::vector<uint32_t>> PathTrigrams::candidates(const PathPattern& pattern) const {
  const std::vector<uint32_t> tris = pattern_trigrams(pattern);
  if (tris.empty()) return std::nullopt;
  std::vector<TrigramList> lists;
  for (const uint32_t t : tris) {
    const auto l = find(t);
    if (!l) return std::vector<uint32_t>();
    lists.push_back(*l);
  }
  return intersect_trigram_lists(path_, std::move(lists), records_);
}

}  // namespace scipis
