#include "index/tfidf_index.h"

#include <algorithm>
#include <cstring>

#include "index/radix_sort.h"
#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"

namespace scipis {

namespace {
constexpr size_t kSlotBytes = sizeof(uint64_t) + sizeof(TermEntry*) + 1;
// A guess of the index bytes one term takes (entry, bytes, TF array, slot),
// used to size the table once instead of rehashing as it grows.
constexpr uint64_t kBytesPerTermGuess = 256;
constexpr size_t kFrontMax = size_t{1} << 15;
constexpr uint32_t kMaxRelSeq = UINT32_MAX - 1;  // UINT32_MAX: no document
}  // namespace

TfIdfIndex::TfIdfIndex(uint64_t budget, int depth, DistinctTerms* sketch)
    : budget_(budget),
      depth_(depth),
      sketch_(sketch),
      arena_(std::min<size_t>(kHugePage, std::max<size_t>(4096, budget / 32))) {
  size_t front = 64;
  while (front < kFrontMax && front * sizeof(uint64_t) * 64 < budget_) front *= 2;
  front_.assign(front, 0);
  front_mask_ = front - 1;
  reserve();
}

void TfIdfIndex::reserve() {
  // The last flush shows how many terms this budget holds on this input.
  const size_t terms = std::max(static_cast<size_t>(budget_ / kBytesPerTermGuess), last_terms_);
  table_.reserve(terms);
  order_.reserve(terms);
}

TermEntry* TfIdfIndex::make_entry(const TermKey& k) {
  auto* e = static_cast<TermEntry*>(arena_.alloc(sizeof(TermEntry) + k.n));
  *e = TermEntry{k.prefix, static_cast<uint32_t>(k.n), 0, UINT32_MAX, 0, nullptr};
  std::memcpy(e + 1, k.p, k.n);
  order_.push_back(e);
  term_bytes_ += k.n;
  if (sketch_) sketch_->add(k.hash);
  return e;
}

TermEntry* TfIdfIndex::lookup(const TermKey& k) {
  auto [it, inserted] = table_.try_emplace(k.hash, nullptr);
  if (!inserted) {
    if (TermEntry* e = among(it->second, k)) return e;
  }
  TermEntry* e = make_entry(k);
  if (it->second) same_hash_[e] = it->second;
  it->second = e;
  return e;
}

void TfIdfIndex::start_document(TermEntry* e, uint32_t rel, uint32_t count) {
  if (e->cur_tf) {
    if (!e->tail || e->tail->fill == static_cast<uint32_t>(depth_)) {
      auto* c = static_cast<TfChunk*>(
          arena_.alloc(sizeof(TfChunk) + 2 * sizeof(uint32_t) * static_cast<size_t>(depth_)));
      c->prev = e->tail;
      c->fill = 0;
      e->tail = c;
    }
    uint32_t* s = seqs(e->tail);
    const uint32_t slot = e->tail->fill++;
    s[slot] = e->cur_seq;
    s[depth_ + slot] = e->cur_tf;
  }
  e->cur_seq = rel;
  e->cur_tf = count;
  e->df++;
  postings_++;
  if (rel > last_rel_) last_rel_ = rel;
}

size_t TfIdfIndex::memory() const {
  return arena_.bytes() + table_.capacity() * kSlotBytes + front_.size() * sizeof(uint64_t) +
         order_.capacity() * sizeof(TermEntry*);
}

bool TfIdfIndex::full() const {
  if (table_.empty()) return false;
  // Relative seqs are 32-bit.
  if (last_rel_ >= kMaxRelSeq - 1) return true;
  const size_t mem = memory();
  if (mem * 10 >= budget_ * 9) return true;
  size_t grow = 0;
  const size_t cap = table_.capacity();
  if (table_.size() + 1 > cap - cap / 8) grow += (cap + 1) * kSlotBytes;
  if (order_.size() == order_.capacity())
    grow += std::max<size_t>(order_.capacity(), 1) * sizeof(TermEntry*);
  if (grow && mem + grow > budget_) return true;
  // The next chunk or term may need a fresh arena page.
  return mem + arena_.page_size() > budget_;
}

void TfIdfIndex::serialise(int split_factor, std::string& data,
                           std::vector<std::string>& metas) const {
  const size_t n = order_.size();
  const uint64_t sf = static_cast<uint64_t>(split_factor);

  // One pass over the entries in allocation order (front to back in
  // memory) writes each term's posting block to data and its finished
  // dictionary entry to staging; sorting then moves 16-byte keys only,
  // and the dictionaries are assembled by copying entries out of staging.
  data.assign(kHeaderSize + n * (5 + 4) + postings_ * (10 + 5), '\0');
  char* const base = data.data();
  char* out = base + kHeaderSize;
  std::string staging(n * (1 + 10 + 10 + 5) + term_bytes_, '\0');
  char* st = staging.data();
  std::vector<KeyIndex> keys(n);
  std::vector<size_t> per_split(sf + 1, 0);
  std::vector<size_t> split_bytes(sf, 0);
  std::vector<const TfChunk*> chain;  // a term's TF arrays, last first
  for (size_t i = 0; i < n; i++) {
    const TermEntry* e = order_[i];
    // Entries are read in order, but their TF arrays lie anywhere.
    if (i + 16 < n && order_[i + 16]->tail) __builtin_prefetch(order_[i + 16]->tail);
    char* const start = out;
    out = write_varint(out, e->df);
    uint64_t prev = 0;
    chain.clear();
    for (const TfChunk* c = e->tail; c; c = c->prev) {
      if (c->prev) __builtin_prefetch(c->prev);
      chain.push_back(c);
    }
    for (size_t ci = chain.size(); ci-- > 0;) {
      const TfChunk* c = chain[ci];
      const uint32_t* s = reinterpret_cast<const uint32_t*>(c + 1);
      for (uint32_t j = 0; j < c->fill; j++) {
        const uint64_t seq = base_seq_ + s[j];
        out = write_varint(out, seq - prev);
        out = write_varint(out, s[depth_ + j]);
        prev = seq;
      }
    }
    out = write_varint(out, base_seq_ + e->cur_seq - prev);
    out = write_varint(out, e->cur_tf);
    out = write_u32(out, crc32c(start, static_cast<size_t>(out - start)));

    char* const entry = st;
    *st++ = static_cast<char>(e->len);
    std::memcpy(st, e->bytes(), e->len);
    st += e->len;
    st = write_varint(st, static_cast<uint64_t>(start - base));
    st = write_varint(st, static_cast<uint64_t>(out - start));
    st = write_varint(st, e->df);
    const uint64_t h = fnv1a(e->term());
    const size_t split = h % sf;
    const uint64_t at = static_cast<uint64_t>(entry - staging.data());
    const uint64_t len = static_cast<uint64_t>(st - entry);
    keys[i] = KeyIndex{h, at << 16 | len};  // entries are < 300 bytes
    per_split[split + 1]++;
    split_bytes[split] += len;
  }
  data.resize(static_cast<size_t>(out - base));
  {
    std::string header;
    FileHeader h;
    h.count = n;
    put_header(header, kMagicTfData, h);
    std::memcpy(data.data(), header.data(), kHeaderSize);
  }
  auto entry_of = [&](const KeyIndex& k) { return staging.data() + (k.value >> 16); };
  auto term_of = [&](const KeyIndex& k) {
    const char* p = entry_of(k);
    return std::string_view(p + 1, static_cast<unsigned char>(p[0]));
  };

  // Dictionary order: by split (a counting sort), then by hash (a radix
  // sort), then by term where hashes tie.
  for (size_t s = 0; s < sf; s++) per_split[s + 1] += per_split[s];
  std::vector<KeyIndex> sorted(n), scratch(n);
  {
    std::vector<size_t> at(per_split.begin(), per_split.end() - 1);
    for (const KeyIndex& k : keys) sorted[at[k.key % sf]++] = k;
  }
  keys = std::vector<KeyIndex>();
  metas.assign(sf, std::string());
  for (size_t s = 0; s < sf; s++) {
    KeyIndex* first = sorted.data() + per_split[s];
    KeyIndex* last = sorted.data() + per_split[s + 1];
    radix_sort(first, static_cast<size_t>(last - first), scratch.data());
    for (KeyIndex* run = first; run != last;) {
      KeyIndex* end = run + 1;
      while (end != last && end->key == run->key) ++end;
      if (end - run > 1)
        std::sort(run, end, [&](const KeyIndex& x, const KeyIndex& y) {
          return term_of(x) < term_of(y);
        });
      run = end;
    }
    const size_t count = static_cast<size_t>(last - first);
    std::string& m = metas[s];
    m.assign(kHeaderSize + count * 4 + split_bytes[s], '\0');
    char* const body = m.data() + kHeaderSize;
    char* offs = body;
    char* const entries = body + count * 4;
    char* w = entries;
    for (const KeyIndex* k = first; k != last; ++k) {
      if (k + 16 < last) __builtin_prefetch(entry_of(k[16]));
      const size_t len = k->value & 0xffff;
      offs = write_u32(offs, static_cast<uint32_t>(w - entries));
      std::memcpy(w, entry_of(*k), len);
      w += len;
    }
    FileHeader mh;
    mh.aux = static_cast<uint32_t>(s);
    mh.count = count;
    mh.body_crc = crc32c(body, static_cast<size_t>(w - body));
    std::string header;
    put_header(header, kMagicTfMeta, mh);
    std::memcpy(m.data(), header.data(), kHeaderSize);
  }
}

void TfIdfIndex::clear() {
  same_hash_.clear();
  last_terms_ = table_.size();
  table_.clear();
  order_.clear();
  arena_.reset();
  postings_ = 0;
  term_bytes_ = 0;
  last_rel_ = 0;
  base_seq_ = UINT64_MAX;
  std::fill(front_.begin(), front_.end(), 0);
  epoch_++;
  reserve();
}

}  // namespace scipis
