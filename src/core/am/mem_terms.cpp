#include "am/mem_terms.h"

#include <algorithm>
#include <cstring>

#include "util/error.h"

namespace scipis::am {

namespace {
constexpr size_t kFirstCap = 256;
constexpr uint32_t kFirstBlockUnits = 512;  // 4 KiB: a row's index stays small
constexpr size_t kMaxBlocks = size_t{1} << (32 - 20);
size_t units_for(size_t bytes) { return (bytes + 7) / 8; }
}  // namespace

MemTerms::MemTerms() : slots_(new Slot[kFirstCap]()), cap_(kFirstCap), shift_(64 - 8) {}

uint32_t MemTerms::alloc(size_t bytes) {
  const uint32_t need = static_cast<uint32_t>(units_for(bytes));
  // Unit 0 of block 0 stays unused: 0 means none.
  if (blocks_.empty() || used_units_ + need > block_units_) {
    if (blocks_.size() == kMaxBlocks) fail(SCIPIS_E_NOMEM, "index in memory too large");
    block_units_ = blocks_.empty() ? kFirstBlockUnits
                                   : std::min<uint32_t>(2 * block_units_, 1u << kUnitBits);
    blocks_.push_back(std::make_unique<char[]>(size_t{block_units_} * 8));
    arena_bytes_ += size_t{block_units_} * 8;
    used_units_ = blocks_.size() == 1 ? 1 : 0;
  }
  const uint32_t u = static_cast<uint32_t>((blocks_.size() - 1) << kUnitBits) | used_units_;
  used_units_ += need;
  return u;
}

void MemTerms::grow() {
  std::unique_ptr<Slot[]> old = std::move(slots_);
  const size_t old_cap = cap_;
  cap_ *= 2;
  shift_--;
  slots_.reset(new Slot[cap_]());
  for (size_t i = 0; i < old_cap; i++) {
    const Slot& s = old[i];
    if (!s.tag) continue;
    const std::string_view t = term(s);
    size_t j = home(token_hash(t.data(), t.size(), s.prefix));
    while (slots_[j].tag) j = (j + 1) & (cap_ - 1);
    slots_[j] = s;
  }
}

const MemTerms::Slot* MemTerms::find(const Key& k) const {
  const uint32_t tag = tag_of(k);
  for (size_t i = home(k.hash);; i = (i + 1) & (cap_ - 1)) {
    const Slot& s = slots_[i];
    if (!s.tag) return nullptr;
    if (matches(s, tag, k)) return &s;
  }
}

void MemTerms::append(Slot& s, uint32_t tf, uint32_t gap) {
  constexpr size_t kMost = 10;  // two varints of 32 bits
  Chunk* c = s.tail ? reinterpret_cast<Chunk*>(unit(s.tail)) : nullptr;
  if (c && c->cap - c->used >= static_cast<int>(kMost)) {
    // Written in place: no call to copy two bytes.
    char* at = reinterpret_cast<char*>(c + 1) + c->used;
    c->used = static_cast<uint16_t>(write_varint(write_varint(at, tf), gap) - reinterpret_cast<char*>(c + 1));
    return;
  }
  char buf[kMost];
  const size_t n = static_cast<size_t>(write_varint(write_varint(buf, tf), gap) - buf);
  if (!c || static_cast<size_t>(c->cap - c->used) < n) {
    // Each chunk twice the last: a rare term wastes little, a frequent
    // one's chain stays short.
    const uint16_t cap = static_cast<uint16_t>(
        std::max<size_t>(c ? std::min<size_t>(2u * c->cap, kMaxChunk) : 8, n));
    const uint32_t u = alloc(sizeof(Chunk) + cap);
    Chunk* nc = reinterpret_cast<Chunk*>(unit(u));
    nc->prev = s.tail;
    nc->used = 0;
    nc->cap = cap;
    s.tail = u;
    c = nc;
  }
  char* at = reinterpret_cast<char*>(c + 1) + c->used;
  for (size_t i = 0; i < n; i++) at[i] = buf[i];
  c->used = static_cast<uint16_t>(c->used + n);
}

bool MemTerms::add(const Key& k, uint32_t ord, uint32_t tf) {
  const uint32_t tag = tag_of(k);
  size_t i = home(k.hash);
  for (;; i = (i + 1) & (cap_ - 1)) {
    Slot& s = slots_[i];
    if (!s.tag) break;
    if (!matches(s, tag, k)) continue;
    if (s.cur_seq == ord) {
      s.cur_tf += tf;
      return false;
    }
    append(s, s.cur_tf, ord - s.cur_seq);
    s.cur_seq = ord;
    s.cur_tf = tf;
    s.df++;
    return false;
  }
  Slot& s = slots_[i];
  s = Slot{k.prefix, tag, 1, ord, tf, 0, 0};
  if (k.n > 8) {
    s.bytes = alloc(k.n);
    std::memcpy(unit(s.bytes), k.p, k.n);
  }
  // At most 3/4 full, probes stay short; 7/8 while the caller makes room.
  if (++terms_ * 4 > cap_ * 3 &&
      (!budget_ || bytes() + cap_ * sizeof(Slot) <= budget_ || terms_ * 8 > cap_ * 7))
    grow();
  return true;
}

void MemTerms::postings(const Slot& s, std::vector<uint32_t>& ords,
                        std::vector<uint32_t>& tfs) const {
  ords.resize(s.df);
  tfs.resize(s.df);
  // The chain runs back from the last chunk.
  std::vector<const Chunk*>& chain = chain_;
  chain.clear();
  for (uint32_t u = s.tail; u; u = reinterpret_cast<const Chunk*>(unit(u))->prev)
    chain.push_back(reinterpret_cast<const Chunk*>(unit(u)));
  uint64_t ord = ords.empty() ? 0 : s.cur_seq;
  size_t i = 0;
  bool ok = true;
  // The first posting's row is the last's less every gap: decode first,
  // then place.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    Cursor c(reinterpret_cast<const char*>(*it + 1), (*it)->used);
    while (c.ok() && c.left() > 0 && i + 1 < s.df) {
      tfs[i] = static_cast<uint32_t>(c.varint());
      ords[i] = static_cast<uint32_t>(c.varint());  // the gap, for now
      i++;
    }
    ok = ok && c.ok() && c.left() == 0;
  }
  if (!ok || i + 1 != s.df) fail(SCIPIS_E_INTERNAL, "postings in memory disagree");
  tfs[i] = s.cur_tf;
  ords[i] = s.cur_seq;
  while (i-- > 0) {
    const uint32_t gap = ords[i];
    if (gap == 0 || gap > ord) fail(SCIPIS_E_INTERNAL, "postings in memory disagree");
    ord -= gap;
    ords[i] = static_cast<uint32_t>(ord);
  }
}

std::vector<const MemTerms::Slot*> MemTerms::sorted() const {
  // By the first 8 bytes as one big-endian word, then the whole term: few
  // byte compares.
  std::vector<std::pair<uint64_t, const Slot*>> keyed;
  keyed.reserve(terms_);
  for (size_t i = 0; i < cap_; i++)
    if (slots_[i].tag) keyed.emplace_back(__builtin_bswap64(slots_[i].prefix), &slots_[i]);
  std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return term(*a.second) < term(*b.second);
  });
  std::vector<const Slot*> out;
  out.reserve(keyed.size());
  for (auto& k : keyed) out.push_back(k.second);
  return out;
}

}  // namespace scipis::am
