#include "am/seg_reader.h"

#include <algorithm>
#include <cstring>

#include "index/postings_codec.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis::am {

PagedSegment::PagedSegment(const scipis_am_reader& rd, const scipis_am_segment& seg)
    : rd_(rd), seg_(seg), what_("segment " + std::to_string(seg.id)) {
  if (rd.payload == 0 || seg.bytes < kFooterBytes ||
      seg.bytes > static_cast<uint64_t>(seg.npages) * rd.payload ||
      seg.bytes <= static_cast<uint64_t>(seg.npages - 1) * rd.payload)
    fail_corrupt(what_, "segment length disagrees with its pages");
  const bool cache = cacheable(rd_);
  const SegKey key{{rd_.cache_rel[0], rd_.cache_rel[1], rd_.cache_rel[2]}, seg_.id, seg_.start, seg_.npages, seg_.bytes};
  if (cache) meta_ = PageCache::instance().meta(key);
  if (meta_) {
    f_ = meta_->f;
    docs_end_ = meta_->docs_end;
    tid_bits_ = meta_->tid_bits;
    val_at_ = meta_->val_at;
    val_bits_ = meta_->val_bits;
    val_cache_.resize(val_at_.size());
    sums_ = meta_->val_sums;
    return;
  }
  std::string raw(kFooterBytes, '\0');
  read(seg.bytes - kFooterBytes, kFooterBytes, raw.data());
  f_ = decode_footer(raw, seg.bytes, what_);
  docs_end_ = f_.docs_fixed_bytes();
  if (f_.version >= 3 && f_.ndocs > 0) {
    // The tid groups' bits end where the last group's do.
    const uint64_t last = f_.tid_groups() - 1;
    unsigned char e[kTidDirEntry];
    read(f_.ndocs * f_.len_bytes() + last * kTidDirEntry, kTidDirEntry, reinterpret_cast<char*>(e));
    const TidGroup tg = get_tid_group(e);
    const uint64_t end = tg.at + tg.bytes(f_.ndocs - last * kTidGroup);
    if (tg.block_bits > 32 || tg.off_bits > 16 || end > f_.index_off - docs_end_)
      fail_corrupt(what_, "bad row identifier group");
    tid_bits_ = end;
    docs_end_ += end;
    // Each filter column's bits end where its last group's do.
    const uint64_t vgroups = (f_.ndocs + kValGroup - 1) / kValGroup;
    for (uint32_t c = 0; c < f_.nvals(); c++) {
      const uint64_t dir = vgroups * kValDirEntry;
      if (dir > f_.index_off - docs_end_) fail_corrupt(what_, "bad filter value group");
      unsigned char v[kValDirEntry];
      read(docs_end_ + dir - kValDirEntry, kValDirEntry, reinterpret_cast<char*>(v));
      const ValGroup vg = get_val_group(v);
      const uint64_t vend = vg.at + vg.bytes(f_.ndocs - (vgroups - 1) * kValGroup);
      if (vg.bits > 64 || vg.step == 0 || vg.at > f_.index_off || vend > f_.index_off - docs_end_ - dir)
        fail_corrupt(what_, "bad filter value group");
      val_at_.push_back(docs_end_);
      val_bits_.push_back(vend);
      docs_end_ += dir + vend;
    }
  }
  val_cache_.resize(val_at_.size());
  sums_ = std::make_shared<ValSums>(val_at_.size());
  if (cache) {
    auto m = std::make_shared<SegMeta>();
    m->f = f_;
    m->docs_end = docs_end_;
    m->tid_bits = tid_bits_;
    m->val_at = val_at_;
    m->val_bits = val_bits_;
    m->val_sums = sums_;
    // The next opening narrows its dictionary search to kIndexChunk
    // groups without reading the index.
    for (uint64_t g = 0; g < f_.groups; g += kIndexChunk) m->chunk_keys.push_back(index_entry(g).key);
    meta_ = m;
    PageCache::instance().put_meta(key, std::move(m));
  }
}

PagedSegment::~PagedSegment() { release_pages(); }

void PagedSegment::release_pages() {
  for (auto& [page, h] : pages_)
    if (h.slot != PageCache::kNoSlot) PageCache::instance().unpin(h.slot);
  pages_.clear();
  last_page_ = UINT32_MAX;
  last_ = nullptr;
}

void PagedSegment::load(uint32_t page) {
  if (page == last_page_) return;
  auto it = pages_.find(page);
  if (it == pages_.end()) {
    // A scan keeps a few pages of each segment at hand (1 MiB at 8 KiB
    // pages; its state lives across rounds): the backend's page cache
    // holds the rest.
    if (pages_.size() >= kLocalPages) release_pages();
    PageKey key{{rd_.cache_rel[0], rd_.cache_rel[1], rd_.cache_rel[2]},
                seg_.id, seg_.start, seg_.npages, seg_.bytes, page};
    const bool cache = cacheable(rd_);
    Held h{nullptr, PageCache::kNoSlot, nullptr};
    if (cache) h.bytes = PageCache::instance().get(key, &h.slot);
    if (!h.bytes) {
      h.own = std::make_unique_for_overwrite<unsigned char[]>(rd_.payload);
      scipis_error err{};
      if (rd_.read_page(rd_.ctx, &seg_, page, h.own.get(), &err) != 0) throw Error(err.code, err.message);
      h.bytes = h.own.get();
      if (cache) h.slot = PageCache::instance().put(key, h.own, rd_.payload);
    }
    it = pages_.emplace(page, std::move(h)).first;
  }
  last_page_ = page;
  last_ = it->second.bytes;
}

void PagedSegment::read(uint64_t off, size_t n, char* dst) {
  if (off > seg_.bytes || n > seg_.bytes - off) fail_corrupt(what_, "offset past the segment's end");
  while (n > 0) {
    const size_t at = static_cast<size_t>(off % rd_.payload);
    load(static_cast<uint32_t>(off / rd_.payload));
    const size_t take = std::min(n, static_cast<size_t>(rd_.payload) - at);
    std::memcpy(dst, last_ + at, take);
    dst += take;
    off += take;
    n -= take;
  }
}

const unsigned char* PagedSegment::span(uint64_t off, size_t n) {
  if (off > seg_.bytes || n > seg_.bytes - off) fail_corrupt(what_, "offset past the segment's end");
  const size_t at = static_cast<size_t>(off % rd_.payload);
  if (at + n > rd_.payload) return nullptr;
  load(static_cast<uint32_t>(off / rd_.payload));
  return last_ + at;
}

uint64_t PagedSegment::tid(uint32_t ord) {
  if (ord >= f_.ndocs) fail_corrupt(what_, "row ordinal out of range");
  unsigned char raw[kTidDirEntry > 8 ? kTidDirEntry : 8] = {};
  uint64_t t;
  if (f_.version < 3) {
    read(static_cast<uint64_t>(ord) * kDocBytesV2, 6, reinterpret_cast<char*>(raw));
    t = get_tid(raw);
  } else {
    const uint64_t g = ord / kTidGroup, i = ord % kTidGroup;
    if (g != tid_group_) {
      read(f_.ndocs * f_.len_bytes() + g * kTidDirEntry, kTidDirEntry, reinterpret_cast<char*>(raw));
      const TidGroup tg = get_tid_group(raw);
      const uint64_t rows = std::min<uint64_t>(kTidGroup, f_.ndocs - g * kTidGroup);
      if (tg.block_bits > 32 || tg.off_bits > 16 || tg.at > tid_bits_ || tg.bytes(rows) > tid_bits_ - tg.at)
        fail_corrupt(what_, "bad row identifier group");
      tg_ = tg;
      tid_group_ = g;
    }
    const TidGroup& tg = tg_;
    const unsigned w = tg.block_bits + tg.off_bits;
    const uint64_t pos = i * w;
    const size_t n = static_cast<size_t>((pos % 8 + w + 7) / 8);
    const uint64_t off = f_.docs_fixed_bytes() + tg.at + pos / 8;
    std::memset(raw, 0, 8);
    if (const unsigned char* p = span(off, n))
      for (size_t b = 0; b < n; b++) raw[b] = p[b];
    else
      read(off, n, reinterpret_cast<char*>(raw));
    const uint64_t v = (get_u64(raw) >> (pos % 8)) & (w == 64 ? ~0ull : (1ull << w) - 1);
    t = tid_of(tg, v);
  }
  if (t > kMaxTid) fail_corrupt(what_, "bad row identifier");
  return t;
}

uint32_t PagedSegment::len(uint32_t ord) {
  if (ord >= f_.ndocs) fail_corrupt(what_, "row ordinal out of range");
  unsigned char raw[4];
  if (f_.version < 3) {
    read(static_cast<uint64_t>(ord) * kDocBytesV2 + 6, 4, reinterpret_cast<char*>(raw));
    return get_len(raw, 4);
  }
  const uint32_t w = f_.len_bytes();
  const uint64_t off = static_cast<uint64_t>(ord) * w;
  if (const unsigned char* p = span(off, w)) return get_len(p, w);
  read(off, w, reinterpret_cast<char*>(raw));
  return get_len(raw, w);
}

template <typename F>
void PagedSegment::each_len_byte(const uint32_t* ords, size_t n, F&& f) {
  const uint32_t payload = rd_.payload;
  for (size_t i = 0; i < n;) {
    if (ords[i] >= f_.ndocs) fail_corrupt(what_, "row ordinal out of range");
    const uint32_t page = ords[i] / payload;
    const uint64_t page_end = std::min<uint64_t>(static_cast<uint64_t>(page + 1) * payload, f_.ndocs);
    const uint64_t first = static_cast<uint64_t>(page) * payload;
    load(page);
    for (; i < n && ords[i] < page_end; i++) f(i, last_ + (ords[i] - first));
  }
}

void PagedSegment::lens(const uint32_t* ords, size_t n, uint32_t* out) {
  const uint32_t w = f_.len_bytes();
  if (f_.version < 3 || w != 1) {
    for (size_t i = 0; i < n; i++) out[i] = len(ords[i]);
    return;
  }
  // One byte a row, read in place. A term's rows lie far apart, each
  // length a miss in the CPU's caches: all are asked for first, so that
  // the misses overlap (only prefetched: the pages are loaded again for the
  // reads, as more than kLocalPages of them may come and go).
  if (n > 1) each_len_byte(ords, n, [](size_t, const unsigned char* p) { __builtin_prefetch(p); });
  each_len_byte(ords, n, [&](size_t i, const unsigned char* p) { out[i] = get_len(p, 1); });
}

const ValGroup& PagedSegment::val_group(uint32_t c, uint64_t g) {
  ValCache& vc = val_cache_[c];
  if (vc.g == g) return vc.vg;
  const uint64_t groups = (f_.ndocs + kValGroup - 1) / kValGroup;
  if (c >= val_at_.size() || g >= groups) fail_corrupt(what_, "row ordinal out of range");
  unsigned char buf[kValDirEntry];
  const uint64_t off = val_at_[c] + g * kValDirEntry;
  const unsigned char* raw = span(off, kValDirEntry);
  if (!raw) {
    read(off, kValDirEntry, reinterpret_cast<char*>(buf));
    raw = buf;
  }
  const ValGroup vg = get_val_group(raw);
  const uint64_t rows = std::min<uint64_t>(kValGroup, f_.ndocs - g * kValGroup);
  const uint64_t full = rows == 64 ? ~0ull : (1ull << rows) - 1;
  if (vg.bits > 64 || vg.min > vg.max || vg.step == 0 || (vg.nulls & ~full) || vg.at > val_bits_[c] ||
      vg.bytes(rows) > val_bits_[c] - vg.at)
    fail_corrupt(what_, "bad filter value group");
  vc.g = g;
  vc.vg = vg;
  return vc.vg;
}

uint64_t PagedSegment::val_key(uint32_t c, const ValGroup& vg, uint32_t ord) {
  const unsigned w = vg.bits;
  if (w == 0) return vg.min;
  const uint64_t pos = static_cast<uint64_t>(ord % kValGroup) * w;
  const uint64_t off = val_at_[c] + ((f_.ndocs + kValGroup - 1) / kValGroup) * kValDirEntry + vg.at + pos / 8;
  const size_t n = static_cast<size_t>((pos % 8 + w + 7) / 8);  // up to 9 bytes
  unsigned char raw[16] = {};
  if (const unsigned char* p = span(off, n))
    std::memcpy(raw, p, n);
  else
    read(off, n, reinterpret_cast<char*>(raw));
  const unsigned sh = static_cast<unsigned>(pos % 8);
  uint64_t v = get_u64(raw) >> sh;
  if (sh && w + sh > 64) v |= static_cast<uint64_t>(raw[8]) << (64 - sh);
  if (w < 64) v &= (1ull << w) - 1;
  if (v > vg.top()) fail_corrupt(what_, "filter value out of its group's range");
  return vg.min + v * vg.step;
}

void PagedSegment::vals(uint32_t ord, uint64_t* v, uint8_t* nulls) {
  if (ord >= f_.ndocs) fail_corrupt(what_, "row ordinal out of range");
  const uint64_t g = ord / kValGroup;
  for (uint32_t c = 0; c < f_.nvals(); c++) {
    const ValGroup& vg = val_group(c, g);
    ValCache& vc = val_cache_[c];
    if (vc.dg != g) {
      // The whole group at once: callers of vals() read rows in order.
      const uint64_t rows = std::min<uint64_t>(kValGroup, f_.ndocs - g * kValGroup);
      const size_t nb = static_cast<size_t>(vg.bytes(rows));
      const uint64_t off = val_at_[c] + ((f_.ndocs + kValGroup - 1) / kValGroup) * kValDirEntry + vg.at;
      std::string& buf = val_buf_;
      buf.resize(nb);
      read(off, nb, buf.data());
      const char* p = buf.data();
      if (!unpack_bits(p, buf.data() + nb, vc.keys, rows, vg.bits)) fail_corrupt(what_, "bad filter value group");
      for (uint64_t i = 0; i < rows; i++) {
        if (vc.keys[i] > vg.top()) fail_corrupt(what_, "filter value out of its group's range");
        vc.keys[i] = vg.min + vc.keys[i] * vg.step;
      }
      vc.dg = g;
    }
    nulls[c] = (vg.nulls >> (ord % kValGroup)) & 1;
    v[c] = nulls[c] ? 0 : vc.keys[ord % kValGroup];
  }
}

const ValSum& PagedSegment::val_sum(uint32_t c, uint64_t s) {
  ValCache& vc = val_cache_[c];
  if (vc.s == s) return *vc.vs;
  std::vector<ValSum>& sums = (*sums_)[c];
  const uint64_t groups = (f_.ndocs + kValGroup - 1) / kValGroup;
  if (sums.empty()) sums.resize((groups + kValSuper - 1) / kValSuper);
  if (s >= sums.size()) fail_corrupt(what_, "row ordinal out of range");
  ValSum& vs = sums[s];
  if (!vs.known) vs = summarise(c, s);
  vc.s = s;
  vc.vs = &vs;
  return vs;
}

ValSum PagedSegment::summarise(uint32_t c, uint64_t s) {
  const uint64_t groups = (f_.ndocs + kValGroup - 1) / kValGroup;
  ValSum out;
  for (uint64_t g = s * kValSuper; g < std::min(groups, (s + 1) * kValSuper); g++) {
    const ValGroup& vg = val_group(c, g);
    const uint64_t rows = std::min<uint64_t>(kValGroup, f_.ndocs - g * kValGroup);
    const uint64_t full = rows == 64 ? ~0ull : (1ull << rows) - 1;
    out.nulls |= vg.nulls != 0;
    if (vg.nulls == full) continue;
    out.min = out.some ? std::min(out.min, vg.min) : vg.min;
    out.max = out.some ? std::max(out.max, vg.max) : vg.max;
    out.some = true;
  }
  out.known = true;
  return out;
}

PagedSegment::RunVerdict PagedSegment::run_verdict(uint64_t s, const Filters& fs) {
  RunVerdict v = kAll;
  for (const Filter& f : fs) {
    const ValSum& vs = val_sum(f.col, s);
    if (!vs.some || vs.max < f.lo || vs.min > f.hi) return kNone;
    if (vs.nulls || vs.min < f.lo || vs.max > f.hi) v = kEach;
  }
  return v;
}

bool PagedSegment::passes(uint32_t ord, const Filters& fs) {
  if (ord >= f_.ndocs) fail_corrupt(what_, "row ordinal out of range");
  // Most rows of a window over ordered values are decided by their run.
  const RunVerdict rv = run_verdict(ord / (kValGroup * kValSuper), fs);
  if (rv != kEach) return rv == kAll;
  for (const Filter& f : fs) {
    const ValGroup& vg = val_group(f.col, ord / kValGroup);
    if ((vg.nulls >> (ord % kValGroup)) & 1) return false;
    if (vg.max < f.lo || vg.min > f.hi) return false;
    if (vg.min >= f.lo && vg.max <= f.hi) continue;
    const uint64_t v = val_key(f.col, vg, ord);
    if (v < f.lo || v > f.hi) return false;
  }
  return true;
}

void PagedSegment::filter(const uint32_t* ords, size_t n, const Filters& fs, char* keep) {
  // A run's verdict serves every row of it.
  RunVerdict verdict = kNone;
  uint64_t cur = UINT64_MAX;
  for (size_t i = 0; i < n; i++) {
    if (!keep[i]) continue;
    if (ords[i] >= f_.ndocs) fail_corrupt(what_, "row ordinal out of range");
    const uint64_t s = ords[i] / (kValGroup * kValSuper);
    if (s != cur) {
      cur = s;
      verdict = run_verdict(s, fs);
    }
    if (verdict == kNone || (verdict == kEach && !passes(ords[i], fs))) keep[i] = 0;
  }
}

bool PagedSegment::may_pass(uint32_t lo, uint32_t hi, const Filters& fs) {
  // A range of a rare term may span the segment: past this many runs its
  // few rows cost less to check one by one.
  constexpr uint64_t kMaxRuns = 16;
  // Groups are checked one by one in ranges of fewer than this many.
  constexpr uint64_t kMaxGroups = 8;
  if (fs.empty() || hi < lo || hi >= f_.ndocs) return true;
  const uint64_t s0 = lo / (kValGroup * kValSuper), s1 = hi / (kValGroup * kValSuper);
  if (s1 - s0 >= kMaxRuns) return true;
  bool any = false;
  for (uint64_t s = s0; s <= s1 && !any; s++) any = run_verdict(s, fs) != kNone;
  if (!any) return false;
  const uint64_t g0 = lo / kValGroup, g1 = hi / kValGroup;
  if (g1 - g0 >= kMaxGroups) return true;
  for (uint64_t g = g0; g <= g1; g++) {
    bool ok = true;
    for (const Filter& f : fs) {
      const ValGroup& vg = val_group(f.col, g);
      const uint64_t rows = std::min<uint64_t>(kValGroup, f_.ndocs - g * kValGroup);
      const uint64_t full = rows == 64 ? ~0ull : (1ull << rows) - 1;
      if (vg.nulls == full || vg.max < f.lo || vg.min > f.hi) {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}


DocEntry PagedSegment::doc(uint32_t ord) { return DocEntry{tid(ord), len(ord)}; }

PagedSegment::IndexEntry PagedSegment::index_entry(uint64_t g) {
  unsigned char raw[kIndexEntry];
  read(f_.index_off + g * kIndexEntry, kIndexEntry, reinterpret_cast<char*>(raw));
  IndexEntry e{get_u64(raw), get_u64(raw + 8), get_u32(raw + 16), get_u32(raw + 20)};
  if (e.off < docs_end_ || e.dict_bytes > e.bytes || e.off > f_.index_off ||
      e.bytes > f_.index_off - e.off)
    fail_corrupt(what_, "dictionary index entry out of range");
  return e;
}

template <typename F>
void PagedSegment::each_in_group(uint64_t g, F&& f) {
  const IndexEntry e = index_entry(g);
  // In place when one page holds the block (a lookup reads one a segment).
  const char* block = reinterpret_cast<const char*>(span(e.off, e.dict_bytes));
  if (!block) {
    group_bytes_.resize(e.dict_bytes);
    read(e.off, e.dict_bytes, group_bytes_.data());
    block = group_bytes_.data();
  }
  Cursor c(block, e.dict_bytes);
  const uint64_t n = c.varint();
  if (!c.ok() || n == 0 || n > kGroupTerms) fail_corrupt(what_, "bad dictionary group");
  char prev[kMaxToken];
  size_t prev_len = 0;
  uint64_t region = e.off + e.dict_bytes;
  const uint64_t end = e.off + e.bytes;
  for (uint64_t i = 0; i < n; i++) {
    std::string_view hdr = c.bytes(2);
    if (hdr.size() != 2) fail_corrupt(what_, "bad dictionary entry");
    const size_t shared = static_cast<unsigned char>(hdr[0]);
    const size_t suffix = static_cast<unsigned char>(hdr[1]);
    std::string_view s = c.bytes(suffix);
    if (!c.ok() || shared > prev_len || (i == 0 && shared) || shared + suffix == 0 ||
        shared + suffix > kMaxToken)
      fail_corrupt(what_, "bad dictionary entry");
    // Ascending: the new term differs from the last one past what they share.
    if (i > 0 && std::string_view(prev + shared, prev_len - shared) >= s)
      fail_corrupt(what_, "dictionary out of order");
    std::memcpy(prev + shared, s.data(), suffix);
    prev_len = shared + suffix;
    DictTerm t{};
    t.df = c.varint();
    if (t.df == 1) {
      const uint64_t ord = c.varint(), tf = c.varint();
      if (ord >= f_.ndocs || tf == 0 || tf > UINT32_MAX) fail_corrupt(what_, "bad posting");
      t.ord = static_cast<uint32_t>(ord);
      t.tf = static_cast<uint32_t>(tf);
    } else {
      t.region_bytes = c.varint();
      t.region_off = region;
      if (t.df < 2 || t.df > f_.ndocs || t.region_bytes > end - region)
        fail_corrupt(what_, "bad dictionary entry");
      region += t.region_bytes;
    }
    if (!c.ok()) fail_corrupt(what_, "bad dictionary entry");
    if (!f(std::string_view(prev, prev_len), t)) return;
  }
  if (c.left() != 0 || region != end) fail_corrupt(what_, "dictionary group length mismatch");
}

void PagedSegment::load_group(uint64_t g, std::vector<DictTerm>& out) {
  out.clear();
  each_in_group(g, [&](std::string_view term, DictTerm& t) {
    t.term.assign(term);
    out.push_back(std::move(t));
    return true;
  });
}

void PagedSegment::fill(const DictTerm& t, TermPostings& out) {
  out.df = t.df;
  if (t.df == 1) {
    out.ords.assign(1, t.ord);
    out.tfs.assign(1, t.tf);
    return;
  }
  // A merge reads every term: no allocation or copy per term when one page
  // holds the region.
  std::string_view region;
  if (const unsigned char* p = span(t.region_off, t.region_bytes)) {
    region = {reinterpret_cast<const char*>(p), static_cast<size_t>(t.region_bytes)};
  } else {
    region_.resize(t.region_bytes);
    read(t.region_off, region_.size(), region_.data());
    region = region_;
  }
  RegionReader rr(what_, region, t.df, 0, f_.ndocs);
  if (t.df > f_.ndocs) fail_corrupt(what_, "posting count mismatch");
  out.ords.resize(t.df);
  out.tfs.resize(t.df);
  uint64_t seqs[kBlockPostings];
  size_t at = 0;
  for (size_t b = 0; b < rr.blocks().size(); b++) {
    const uint32_t n = rr.blocks()[b].count;
    if (n > kBlockPostings || n > t.df - at) fail_corrupt(what_, "posting count mismatch");
    rr.decode(b, seqs, out.tfs.data() + at);
    for (uint32_t i = 0; i < n; i++) out.ords[at + i] = static_cast<uint32_t>(seqs[i]);
    at += n;
  }
  if (at != t.df) fail_corrupt(what_, "posting count mismatch");
}

bool PagedSegment::lookup(std::string_view term, DictTerm& out) {
  if (f_.groups == 0) return false;
  const uint64_t key = term_key(term);
  // The last group whose first key is below key may hold the term, and so
  // may every group whose first key equals it.
  uint64_t lo = 0, hi = f_.groups;
  if (meta_ && !meta_->chunk_keys.empty()) {
    // The first chunk whose first key is not below key: the first group
    // with such a key is at most its first, past the previous chunk's.
    const auto& ck = meta_->chunk_keys;
    const uint64_t c = static_cast<uint64_t>(std::lower_bound(ck.begin(), ck.end(), key) - ck.begin());
    lo = c > 0 ? (c - 1) * kIndexChunk + 1 : 0;
    hi = std::min(f_.groups, c * kIndexChunk);
  }
  while (lo < hi) {
    const uint64_t mid = (lo + hi) / 2;
    if (index_entry(mid).key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (uint64_t g = lo > 0 ? lo - 1 : 0; g < f_.groups; g++) {
    if (g >= lo && index_entry(g).key > key) break;
    int found = -1;  // -1: read on; 0: passed it; 1: found
    // Entries are checked as they are read; those past the term are not.
    each_in_group(g, [&](std::string_view t, DictTerm& d) {
      if (t < term) return true;
      found = t == term;
      if (found) {
        out = std::move(d);
        out.term.assign(t);
      }
      return false;
    });
    if (found >= 0) return found == 1;
  }
  return false;
}

bool PagedSegment::find(std::string_view term, TermPostings& out, bool postings) {
  DictTerm t;
  if (!lookup(term, t)) return false;
  if (postings)
    fill(t, out);
  else
    out.df = t.df;
  return true;
}

bool PagedSegment::find_blocks(std::string_view term, TermBlocks& out) {
  DictTerm t;
  if (!lookup(term, t)) return false;
  out.df = t.df;
  if (t.df == 1) {
    out.ords = {t.ord};
    out.tfs = {t.tf};
    return true;
  }
  out.region = std::make_unique<std::string>();
  if (t.df <= kSmallRegion) {
    out.region->resize(t.region_bytes);
    read(t.region_off, t.region_bytes, out.region->data());
    out.reader = std::make_unique<RegionReader>(what_, *out.region, t.df, 0, f_.ndocs);
    return true;
  }
  // A frequent term's region is mostly payloads a top-k query never
  // decodes: read its skip list (about 8 bytes a block) and fetch blocks
  // as they are decoded.
  uint64_t want = std::min<uint64_t>(t.region_bytes, 64 + (t.df / kBlockPostings + 1) * 10);
  for (;;) {
    out.region->resize(want);
    read(t.region_off, want, out.region->data());
    out.reader = RegionReader::from_prefix(what_, *out.region, t.region_bytes, t.df, 0, f_.ndocs);
    if (out.reader) break;
    if (want == t.region_bytes) fail_corrupt(what_, "bad posting skip list");
    want = std::min<uint64_t>(t.region_bytes, want * 2);
  }
  out.region_off = t.region_off;
  out.fetch = [this](uint64_t off, size_t n, char* dst) { read(off, n, dst); };
  return true;
}

bool PagedSegment::next_term(std::string& term, TermPostings& out) {
  while (next_in_group_ >= group_.size()) {
    if (next_group_ >= f_.groups) return false;
    load_group(next_group_++, group_);
    next_in_group_ = 0;
  }
  const DictTerm& t = group_[next_in_group_++];
  term = t.term;
  fill(t, out);
  return true;
}

}  // namespace scipis::am
