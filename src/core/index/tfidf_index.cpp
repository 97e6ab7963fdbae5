#include "index/tfidf_index.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"

namespace scipis {

namespace {
constexpr size_t kSlotBytes = sizeof(TermEntry*) + 1;
}

TfIdfIndex::TfIdfIndex(uint64_t budget, int depth)
    : budget_(budget),
      depth_(depth),
      arena_(std::min<size_t>(1u << 20, std::max<size_t>(4096, budget / 32))) {}

TfChunk* TfIdfIndex::new_chunk() {
  size_t bytes = sizeof(TfChunk) + 2 * sizeof(uint32_t) * static_cast<size_t>(depth_);
  auto* c = static_cast<TfChunk*>(arena_.alloc(bytes));
  c->next = nullptr;
  c->fill = 0;
  return c;
}

TermEntry* TfIdfIndex::lookup(std::string_view term, size_t hash) {
  TermKey key{term, hash};
  auto it = set_.find(key);
  if (it != set_.end()) return *it;
  char* copy = static_cast<char*>(arena_.alloc(term.size(), 1));
  std::memcpy(copy, term.data(), term.size());
  auto* e = static_cast<TermEntry*>(arena_.alloc(sizeof(TermEntry)));
  TfChunk* c = new_chunk();
  *e = TermEntry{copy, static_cast<uint32_t>(term.size()), 0, key.hash, c, c,
                 UINT64_MAX, nullptr, nullptr};
  set_.insert(e);
  return e;
}

void TfIdfIndex::append(TermEntry* e, uint64_t seq) {
  if (base_seq_ == UINT64_MAX) base_seq_ = seq;
  if (e->tail->fill == static_cast<uint32_t>(depth_)) {
    TfChunk* c = new_chunk();
    e->tail->next = c;
    e->tail = c;
  }
  uint32_t* s = seqs(e->tail);
  uint32_t slot = e->tail->fill++;
  s[slot] = static_cast<uint32_t>(seq - base_seq_);
  s[depth_ + slot] = 1;
  e->last_seq = seq;
  e->last_tf = &s[depth_ + slot];
  e->df++;
}

size_t TfIdfIndex::memory() const {
  return arena_.bytes() + set_.capacity() * kSlotBytes;
}

bool TfIdfIndex::full() const {
  size_t mem = memory();
  if (mem * 10 >= budget_ * 9) return true;
  size_t cap = set_.capacity();
  if (set_.size() + 1 > cap - cap / 8) {
    size_t grown = arena_.bytes() + (2 * cap + 1) * kSlotBytes;
    if (grown > budget_ && !set_.empty()) return true;
  }
  // The next chunk or term copy may need a fresh arena page.
  return mem + arena_.page_size() > budget_ && !set_.empty();
}

void TfIdfIndex::serialise(int split_factor, std::string& data,
                           std::vector<std::string>& metas) const {
  // Metadata is ordered by (split, term hash, term): sorting integers is
  // cheap, and a query finds a term by binary search on its hash.
  struct Item {
    uint64_t split, hash;
    const TermEntry* e;
  };
  std::vector<Item> items;
  items.reserve(set_.size());
  for (const TermEntry* e : set_) {
    uint64_t h = fnv1a(e->term());
    items.push_back({h % static_cast<uint64_t>(split_factor), h, e});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.split != b.split) return a.split < b.split;
    if (a.hash != b.hash) return a.hash < b.hash;
    return a.e->term() < b.e->term();
  });

  size_t postings = 0;
  for (const auto& it : items) postings += it.e->df;
  std::string body;
  body.reserve(items.size() * 6 + postings * 4);
  std::vector<std::string> entries(split_factor);
  for (auto& e : entries) e.reserve(items.size() / split_factor * 24 + 64);
  std::vector<std::vector<uint32_t>> offsets(split_factor);
  for (const auto& [split, hash, e] : items) {
    std::string_view term = e->term();
    size_t start = body.size();
    put_varint(body, e->df);
    uint64_t prev = 0;
    for (const TfChunk* c = e->head; c; c = c->next) {
      const uint32_t* s = reinterpret_cast<const uint32_t*>(c + 1);
      for (uint32_t i = 0; i < c->fill; i++) {
        uint64_t seq = base_seq_ + s[i];
        put_varint(body, seq - prev);
        put_varint(body, s[depth_ + i]);
        prev = seq;
      }
    }
    put_u32(body, crc32c(body.data() + start, body.size() - start));
    std::string& m = entries[split];
    offsets[split].push_back(static_cast<uint32_t>(m.size()));
    m.push_back(static_cast<char>(term.size()));
    m.append(term);
    put_varint(m, kHeaderSize + start);
    put_varint(m, body.size() - start);
    put_varint(m, e->df);
  }
  data.clear();
  FileHeader h;
  h.count = items.size();
  put_header(data, kMagicTfData, h);
  data += body;

  metas.assign(split_factor, std::string());
  for (int s = 0; s < split_factor; s++) {
    std::string mbody;
    for (uint32_t off : offsets[s]) put_u32(mbody, off);
    mbody += entries[s];
    FileHeader mh;
    mh.aux = static_cast<uint32_t>(s);
    mh.count = offsets[s].size();
    mh.body_crc = crc32c(mbody.data(), mbody.size());
    put_header(metas[s], kMagicTfMeta, mh);
    metas[s] += mbody;
  }
}

void TfIdfIndex::clear() {
  set_.clear();
  arena_.reset();
  prev_ = nullptr;
  base_seq_ = UINT64_MAX;
}

}  // namespace scipis
