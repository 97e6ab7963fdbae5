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
// A guess of the index bytes one term takes (entry, bytes, TF arrays, its
// share of the table), used to size the table once: a rehash re-inserts
// every term into a new table of fresh memory the kernel must zero.
constexpr uint64_t kBytesPerTermGuess = 112;
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
  // The bytes are rounded up to whole words, so that the copy below may
  // store whole words.
  auto* e = static_cast<TermEntry*>(arena_.alloc(sizeof(TermEntry) + ((k.n + 7) & ~size_t{7})));
  *e = TermEntry{k.prefix, static_cast<uint32_t>(k.n), 0, UINT32_MAX, 0, nullptr};
  // Most terms are 16 bytes or less: two word stores instead of a call.
  char* b = reinterpret_cast<char*>(e + 1);
  if (k.n <= 8) {
    std::memcpy(b, &k.prefix, 8);
  } else if (k.n <= 16) {
    std::memcpy(b, &k.prefix, 8);
    std::memcpy(b + k.n - 8, k.p + k.n - 8, 8);
  } else {
    std::memcpy(b, k.p, k.n);
  }
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

void TfIdfIndex::serialise(int split_factor, OutBuffer& data,
                           std::vector<OutBuffer>& metas) const {
  const size_t n = order_.size();
  const uint64_t sf = static_cast<uint64_t>(split_factor);

  // Dictionary order: by split (a counting sort), then by hash (a radix
  // sort), then by term where hashes tie. One pass in that order then
  // writes each term's posting block and its dictionary entry, straight
  // into the output buffers: no staging copy, and the posting blocks of a
  // key range lie together in the data file.
  sort_keys_.reset(n * sizeof(KeyIndex));
  sort_out_.reset(n * sizeof(KeyIndex));
  auto* keys = reinterpret_cast<KeyIndex*>(sort_keys_.data());
  auto* sorted = reinterpret_cast<KeyIndex*>(sort_out_.data());
  std::vector<size_t> per_split(sf + 1, 0);
  std::vector<size_t> split_bytes(sf, 0);
  // A division per term shows in the profile; split factors are usually
  // powers of two.
  const bool pow2 = (sf & (sf - 1)) == 0;
  auto split_of = [&](uint64_t h) { return pow2 ? h & (sf - 1) : h % sf; };
  for (size_t i = 0; i < n; i++) {
    const TermEntry* e = order_[i];
    const uint64_t h = fnv1a(e->term());
    keys[i] = KeyIndex{h, reinterpret_cast<uintptr_t>(e)};
    const uint64_t split = split_of(h);
    per_split[split + 1]++;
    split_bytes[split] += e->len;
  }
  for (size_t s = 0; s < sf; s++) per_split[s + 1] += per_split[s];
  {
    std::vector<size_t> at(per_split.begin(), per_split.end() - 1);
    for (size_t i = 0; i < n; i++) sorted[at[split_of(keys[i].key)]++] = keys[i];
  }
  KeyIndex* const scratch = keys;  // keys are all in sorted now
  auto entry_of = [](const KeyIndex& k) { return reinterpret_cast<const TermEntry*>(k.value); };

  // Worst cases: a varint takes 5 (u32) or 10 bytes, a block's crc 4.
  data.reset(kHeaderSize + n * (5 + 4) + postings_ * (10 + 5));
  char* const base = data.data();
  char* out = base + kHeaderSize;
  metas.resize(sf);  // buffers handed in are reused
  std::vector<const TfChunk*> chain;  // a term's TF arrays, last first
  for (size_t s = 0; s < sf; s++) {
    KeyIndex* first = sorted + per_split[s];
    KeyIndex* last = sorted + per_split[s + 1];
    radix_sort(first, static_cast<size_t>(last - first), scratch);
    for (KeyIndex* run = first; run != last;) {
      KeyIndex* end = run + 1;
      while (end != last && end->key == run->key) ++end;
      if (end - run > 1)
        std::sort(run, end, [&](const KeyIndex& x, const KeyIndex& y) {
          return entry_of(x)->term() < entry_of(y)->term();
        });
      run = end;
    }
    const size_t count = static_cast<size_t>(last - first);
    OutBuffer& m = metas[s];
    m.reset(kHeaderSize + count * (4 + 1 + 10 + 10 + 5) + split_bytes[s]);
    char* const body = m.data() + kHeaderSize;
    char* offs = body;
    char* const entries = body + count * 4;
    char* w = entries;
    for (const KeyIndex* k = first; k != last; ++k) {
      // Entries come in hash order, from anywhere in the arena: load the
      // entry 32 terms ahead, its last TF array 16 ahead.
      if (k + 32 < last) __builtin_prefetch(entry_of(k[32]));
      if (k + 16 < last && entry_of(k[16])->tail) __builtin_prefetch(entry_of(k[16])->tail);
      const TermEntry* e = entry_of(*k);
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
        const uint32_t* sq = reinterpret_cast<const uint32_t*>(c + 1);
        for (uint32_t j = 0; j < c->fill; j++) {
          const uint64_t seq = base_seq_ + sq[j];
          out = write_varint(out, seq - prev);
          out = write_varint(out, sq[depth_ + j]);
          prev = seq;
        }
      }
      out = write_varint(out, base_seq_ + e->cur_seq - prev);
      out = write_varint(out, e->cur_tf);
      out = write_u32(out, crc32c(start, static_cast<size_t>(out - start)));

      offs = write_u32(offs, static_cast<uint32_t>(w - entries));
      *w++ = static_cast<char>(e->len);
      std::memcpy(w, e->bytes(), e->len);
      w += e->len;
      w = write_varint(w, static_cast<uint64_t>(start - base));
      w = write_varint(w, static_cast<uint64_t>(out - start));
      w = write_varint(w, e->df);
    }
    m.trim(static_cast<size_t>(w - m.data()));
    FileHeader mh;
    mh.aux = static_cast<uint32_t>(s);
    mh.count = count;
    mh.body_crc = crc32c(body, static_cast<size_t>(w - body));
    std::string header;
    put_header(header, kMagicTfMeta, mh);
    std::memcpy(m.data(), header.data(), kHeaderSize);
  }
  data.trim(static_cast<size_t>(out - base));
  FileHeader h;
  h.count = n;
  std::string header;
  put_header(header, kMagicTfData, h);
  std::memcpy(data.data(), header.data(), kHeaderSize);
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
