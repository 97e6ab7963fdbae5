#include "index/tfidf_index.h"

#include <algorithm>
#include <cstring>

#include "index/huge_pages.h"
#include "index/postings_codec.h"
#include "index/segment_format.h"
#include "index/term_dict.h"
#include "index/tf_meta_writer.h"
#include "index/tokenizer.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {

namespace {
// Open addressing stays short while the table is at most 3/4 full.
constexpr double kMaxLoad = 0.75;
// Arena bytes per term (TF arrays, long terms' bytes) assumed before the
// first flush shows the real figure; it only sets where the table ends and
// the arena begins.
constexpr double kArenaPerTermGuess = 40;
constexpr uint32_t kMaxRelSeq = UINT32_MAX - 1;  // UINT32_MAX: no document
size_t round8(size_t n) { return (n + 7) & ~size_t{7}; }
}  // namespace

namespace {
size_t chunk_bytes_for(size_t cap) {
  return round8(sizeof(TfChunk) + 2 * sizeof(uint32_t) * cap);
}
uint16_t max_cap_for(int depth) {
  return static_cast<uint16_t>(std::max(depth, kMaxChunkCap));
}
size_t region_bytes_for(uint64_t budget, int depth) {
  return std::min(budget, TfIdfIndex::kMaxBudget) +
         TfIdfIndex::kAddsPerFullCheck * (chunk_bytes_for(max_cap_for(depth)) + round8(kMaxToken));
}
// Terms, postings and term bytes an index can hold: every term has a
// table slot of 32 bytes in the region (and at least 256 slots exist);
// every posting but a term's current one fills a TF array entry of 8
// bytes.
struct Capacity {
  size_t terms, postings, term_bytes;
};
Capacity capacity_for(uint64_t budget, int depth) {
  const size_t region = region_bytes_for(budget, depth);
  const size_t terms = std::max<size_t>(256 + TfIdfIndex::kAddsPerFullCheck + 1,
                                        region / sizeof(TermSlot));
  return {terms, terms + region / (2 * sizeof(uint32_t)), 8 * terms + region};
}
}  // namespace

size_t TfIdfIndex::held_bound(uint64_t budget, int depth) {
  const Capacity c = capacity_for(budget, depth);
  // The region, the sort scratch, its radix copy and the gathered counts
  // and lengths (each at most twice what it needs, as OutBuffer and
  // vectors round), every split's groups
  // (three words each; a split's last group may be short, so at most
  // terms / kTermGroup + kMaxSplits groups) and dictionary notes.
  constexpr size_t kMaxSplits = 4096;  // the split_factor option's range
  return 2 * region_bytes_for(budget, depth) + 4 * c.terms * sizeof(KeyIndex) +
         2 * c.terms * (sizeof(Counts) + 1) +
         TfMetaWriter::held_bound(c.terms, c.term_bytes, kMaxSplits) +
         2 * c.postings * (sizeof(uint64_t) + sizeof(uint32_t));
}

size_t TfIdfIndex::flush_bound(uint64_t budget, int depth, int split_factor) {
  const Capacity c = capacity_for(budget, depth);
  const size_t sf = static_cast<size_t>(split_factor);
  // Each split's groups round up by one, and each buffer holds at most
  // half again the largest reservation it was reset for (OutBuffer::reset),
  // itself at most its reservation at capacity.
  return 2 * (data_reserve(c.terms, c.postings) + meta_reserve(c.terms, c.term_bytes) +
              sf * meta_reserve(kTermGroup, 0));
}

TfIdfIndex::TfIdfIndex(uint64_t budget, int depth, DistinctTerms* sketch, size_t most_terms)
    : budget_(std::min(budget, kMaxBudget)),
      depth_(depth),
      most_terms_(most_terms),
      sketch_(sketch),
      max_cap_(max_cap_for(depth)) {
  // Headroom past the budget for the adds between two full() checks.
  region_bytes_ = region_bytes_for(budget_, depth_);
  region_ = static_cast<char*>(huge_alloc(region_bytes_, &zeroed_, huge_region()));
  layout(kArenaPerTermGuess);
}

// A table of a few thousand terms and the arena its postings use touch a
// few 4 KiB pages; on 2 MiB pages each touch would clear a whole one.
bool TfIdfIndex::huge_region() const { return most_terms_ == 0 || most_terms_ > (size_t{1} << 16); }

TfIdfIndex::~TfIdfIndex() { huge_free(region_, region_bytes_); }

void TfIdfIndex::layout(double arena_per_term) {
  // Table and arena share 90% of the budget so that both fill up at about
  // the same time, at the arena bytes per term the last flush saw.
  const double avail = 0.9 * static_cast<double>(budget_);
  const double terms = std::max(0.0, avail / (sizeof(TermSlot) / kMaxLoad + arena_per_term));
  cap_ = std::max<size_t>(256, static_cast<size_t>(terms / kMaxLoad) + kAddsPerFullCheck + 1);
  // full() stops at kAddsPerFullCheck terms below the load limit.
  if (most_terms_)
    cap_ = std::min(cap_, std::max<size_t>(256, static_cast<size_t>(static_cast<double>(
                                                    most_terms_ + 2 * kAddsPerFullCheck + 1) /
                                                kMaxLoad) + 1));
  limit_ = static_cast<size_t>(static_cast<double>(cap_) * kMaxLoad);
  slots_ = reinterpret_cast<TermSlot*>(region_);
  const size_t table_bytes = (cap_ * sizeof(TermSlot) + 63) & ~size_t{63};
  // A fresh mapping is zero already: an indexer that gets no file (a
  // refresh of a tree that did not change) touches none of its table.
  if (!zeroed_) std::memset(region_, 0, table_bytes);
  zeroed_ = false;
  arena_ = region_ + table_bytes;
  const size_t soft = static_cast<size_t>(0.9 * static_cast<double>(budget_));
  arena_cap_ = soft > table_bytes ? soft - table_bytes : 0;
  arena_used_ = kUnit;  // unit 0 means none
}

uint32_t TfIdfIndex::alloc(size_t bytes) {
  const size_t at = arena_used_;
  const size_t end = at + round8(bytes);
  // full() keeps this from happening when callers check it as they must.
  if (end > region_bytes_ - static_cast<size_t>(arena_ - region_))
    fail(SCIPIS_E_INTERNAL, "TF-IDF index arena overrun (full() not checked)");
  arena_used_ = end;
  return static_cast<uint32_t>(at / kUnit);
}

TermSlot* TfIdfIndex::lookup(const TermKey& k, uint32_t tag) {
  if (spent_) used_spent();
  size_t i = home(k.hash);
  while (true) {
    TermSlot& s = slots_[i];
    if (matches(s, tag, k)) return &s;
    if (!s.tag) break;
    i = next(i);
  }
  if (terms_ + 1 >= cap_)
    fail(SCIPIS_E_INTERNAL, "TF-IDF index table overrun (full() not checked)");
  TermSlot& s = slots_[i];
  s = TermSlot{k.prefix, tag, 0, UINT32_MAX, 0, 0, 0};
  if (k.n > 8) {
    s.bytes = alloc(k.n);
    std::memcpy(unit(s.bytes), k.p, k.n);
  }
  terms_++;
  term_bytes_ += k.n;
  if (sketch_) sketch_->add(k.hash);
  return &s;
}

TfChunk* TfIdfIndex::new_chunk(TermSlot* e) {
  const TfChunk* last = e->tail ? chunk(e->tail) : nullptr;
  const uint16_t cap =
      last ? static_cast<uint16_t>(std::min<int>(2 * last->cap, max_cap_)) : static_cast<uint16_t>(depth_);
  const uint32_t u = alloc(chunk_bytes_for(cap));
  TfChunk* c = chunk(u);
  c->prev = e->tail;
  c->fill = 0;
  c->cap = cap;
  e->tail = u;
  return c;
}

size_t TfIdfIndex::memory() const {
  return static_cast<size_t>(arena_ - region_) + arena_used_;
}

bool TfIdfIndex::full() const {
  if (terms_ == 0) return false;
  // Relative seqs are 32-bit.
  if (last_rel_ >= kMaxRelSeq - 1) return true;
  return terms_ + kAddsPerFullCheck >= limit_ || arena_used_ >= arena_cap_;
}

bool TfIdfIndex::nearly_full(double frac) const {
  if (terms_ == 0) return false;
  return static_cast<double>(terms_ + kAddsPerFullCheck) >= frac * static_cast<double>(limit_) ||
         static_cast<double>(arena_used_) >= frac * static_cast<double>(arena_cap_) ||
         last_rel_ >= kMaxRelSeq / 2;
}

// The table's slot order is nearly the dictionary order already: a term
// sits at or after its home slot, homes ascend with the hash, and a run of
// occupied slots is never crossed by a term from outside it. Read from an
// empty slot e0 round the table, sorting each run by hash, the terms come
// in hash order rotated to begin at the first hash whose home is e0; one
// rotation finishes the order. A table filled with other hashes (tests
// force some) is caught by the check that follows and sorted in full.
size_t TfIdfIndex::dictionary_order(KeyIndex* keys) const {
  size_t e0 = 0;
  while (slots_[e0].tag) e0++;
  const uint64_t hb = static_cast<uint64_t>(
      ((static_cast<unsigned __int128>(e0) << 64) + cap_ - 1) / cap_);
  auto term_of = [&](const KeyIndex& k) {
    return std::string_view(term_bytes(slots_[k.value]), slots_[k.value].len());
  };
  auto before_from_e0 = [&](const KeyIndex& x, const KeyIndex& y) {
    if (x.key != y.key) return x.key - hb < y.key - hb;
    return term_of(x) < term_of(y);
  };
  size_t at = 0, run = 0;
  for (size_t i = e0, seen = 0; seen <= cap_; seen++, i = next(i)) {
    const size_t ahead = i + 16 < cap_ ? i + 16 : i + 16 - cap_;
    if (slots_[ahead].len() > 8) __builtin_prefetch(unit(slots_[ahead].bytes));
    const TermSlot& e = slots_[i];
    if (e.tag) {
      keys[at++] = KeyIndex{dict_hash({term_bytes(e), e.len()}), i};
      continue;
    }
    if (at - run > 1) {
      if (at - run <= 16) {
        for (size_t j = run + 1; j < at; j++)
          for (size_t m = j; m > run && before_from_e0(keys[m], keys[m - 1]); m--)
            std::swap(keys[m], keys[m - 1]);
      } else {
        std::sort(keys + run, keys + at, before_from_e0);
      }
    }
    run = at;
  }
  // Hashes at or above hb came first; the smaller ones wrap round to them.
  const size_t wrap = static_cast<size_t>(
      std::partition_point(keys, keys + at, [&](const KeyIndex& k) { return k.key >= hb; }) -
      keys);
  std::rotate(keys, keys + wrap, keys + at);
  auto before = [&](const KeyIndex& x, const KeyIndex& y) {
    if (x.key != y.key) return x.key < y.key;
    return term_of(x) < term_of(y);
  };
  for (size_t j = 1; j < at; j++) {
    if (before(keys[j], keys[j - 1])) {
      std::sort(keys, keys + at, before);
      break;
    }
  }
  return at;
}

namespace {
// Where each byte value's keys start, from their counts.
void starts_of(const uint32_t* count, uint32_t* at) {
  for (uint32_t c = 0, i = 0; i < 256; i++) {
    at[i] = c;
    c += count[i];
  }
}

// Least significant byte first: the low Bytes bytes of n keys in from, with
// to as scratch; returns the array that holds the result.
template <int Bytes, typename K>
K* lsd_passes(K* from, K* to, size_t n) {
  // Every pass's counts from one read of the keys, not one read per pass
  // (32-bit: an index holds at most kMaxBudget / 32 terms).
  uint32_t count[Bytes][256] = {};
  for (size_t i = 0; i < n; i++) {
    const uint64_t k = from[i].key;
#pragma GCC unroll 8
    for (int b = 0; b < Bytes; b++) count[b][(k >> (8 * b)) & 0xff]++;
  }
  for (int b = 0; b < Bytes; b++) {
    const int shift = 8 * b;
    // A byte every key shares orders nothing.
    if (count[b][(from[0].key >> shift) & 0xff] == n) continue;
    uint32_t at[256];
    starts_of(count[b], at);
    for (size_t i = 0; i < n; i++) to[at[(from[i].key >> shift) & 0xff]++] = from[i];
    std::swap(from, to);
  }
  return from;
}

template <typename K>
void insertion_by_key(K* keys, size_t n) {
  for (size_t i = 1; i < n; i++) {
    const K k = keys[i];
    size_t j = i;
    for (; j > 0 && keys[j - 1].key > k.key; j--) keys[j] = keys[j - 1];
    keys[j] = k;
  }
}

// Keys past this many (16 bytes each) are first split by their top byte,
// so that each part's seven passes run in the core's cache rather than
// in memory (a 64 MiB table's flush of the Linux tree sorts about
// 480,000: 0.76x the time, bench/results/2026-11-30-s54-sort).
constexpr size_t kTopByteFirst = size_t{1} << 16;
}  // namespace

void TfIdfIndex::radix_sort(KeyIndex* keys, size_t n) const {
  // A few keys (a refresh's segment of one small file): insertion, as
  // stable as the passes, without their histograms.
  if (n <= 32) {
    insertion_by_key(keys, n);
    return;
  }
  KeyIndex* const tmp = tmp_keys_;
  if (n <= kTopByteFirst) {
    KeyIndex* const got = lsd_passes<8>(keys, tmp, n);
    if (got != keys) std::copy(got, got + n, keys);
    return;
  }
  uint32_t count[256] = {};
  for (size_t i = 0; i < n; i++) count[keys[i].key >> 56]++;
  uint32_t at[256];
  starts_of(count, at);
  for (size_t i = 0; i < n; i++) tmp[at[keys[i].key >> 56]++] = keys[i];
  for (size_t from = 0, i = 0; i < 256; from += count[i], i++) {
    KeyIndex* const part = tmp + from;
    const size_t m = count[i];
    if (m <= 32) {
      insertion_by_key(part, m);
      std::copy(part, part + m, keys + from);
      continue;
    }
    KeyIndex* const got = lsd_passes<7>(part, keys + from, m);
    if (got != keys + from) std::copy(got, got + m, keys + from);
  }
}

namespace {
// Runs of terms sharing a word up to this long are sorted by their whole
// bytes (insertion), longer ones a word at a time.
constexpr ptrdiff_t kSmallTies = 16;
// Runs longer than this are sorted by their next word with the radix sort.
constexpr ptrdiff_t kRadixRun = 1024;

// Byte order of two terms that share their first `from` bytes as
// zero-padded words, eight bytes at a time, inline. Those bytes need no
// compare: a term shorter than from is a prefix of every longer one (their
// bytes past its end are zero, as its padding), so the lengths decide.
bool bytes_less(std::string_view a, std::string_view b, size_t from) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = from;
  for (; i + 8 <= n; i += 8) {
    const uint64_t x = __builtin_bswap64(load_u64(a.data() + i)), y = __builtin_bswap64(load_u64(b.data() + i));
    if (x != y) return x < y;
  }
  for (; i < n; i++)
    if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  return a.size() < b.size();
}
}  // namespace

namespace {
// What bytes_less is given for a term of up to 8 bytes: below `from` (at
// least 8) it reads nothing, and such a term has no bytes above it.
const char kNoBytes[8] = {};
}  // namespace

// keys [first, last) are sorted by their word word-1; runs that share it
// are sorted by the next word, and so on, so that a tie costs one load of
// the term's bytes per word instead of a memcmp per comparison. Zero
// padding is not a byte order when terms hold NUL bytes (the whitespace
// tokenizer keeps them): terms equal in every word of the longest are
// then ordered by length, the shorter (a prefix of the other) first. A
// run's keys are its shared word again on return. Keys hold their term's
// place in gathered_ and its bytes' arena unit (see serialise), so a word
// is one load that nothing before it waits on.
void TfIdfIndex::sort_ties(KeyIndex* first, KeyIndex* last, size_t word, const uint8_t* lens) const {
  auto len_of = [lens](const KeyIndex& k) -> size_t { return lens[static_cast<uint32_t>(k.value)]; };
  auto bytes_of = [this](const KeyIndex& k) {
    return static_cast<const char*>(unit(static_cast<uint32_t>(k.value >> 32)));
  };
  // Most runs are a few terms long: a prefetch within a run would come too
  // late, so the first level loads the next words of tied terms 16 keys
  // ahead, across runs.
  KeyIndex* ahead = first;
  auto load_ahead = [&](KeyIndex* at) {
    if (word != 1) return;
    for (KeyIndex* to = last - at > 16 ? at + 16 : last; ahead < to; ++ahead) {
      // (A term of up to 8 bytes has unit 0: a harmless prefetch.)
      if ((ahead != first && ahead[-1].key == ahead->key) ||
          (ahead + 1 != last && ahead[1].key == ahead->key))
        __builtin_prefetch(bytes_of(*ahead) + 8);
    }
  };
  for (KeyIndex* run = first; run != last;) {
    KeyIndex* end = run + 1;
    while (end != last && end->key == run->key) ++end;
    load_ahead(end);
    if (end - run > 1) {
      size_t longest = 0;
      for (KeyIndex* k = run; k != end; ++k) longest = std::max(longest, len_of(*k));
      if (end - run <= kSmallTies && longest > 8 * word) {
        // A short run: its terms compared whole once their bytes are in
        // cache, rather than one level per word. (Whole: a word padded
        // with zeros equals one with NUL bytes.)
        auto whole = [&](const KeyIndex& k) {
          const size_t n = len_of(k);
          return std::string_view(n > 8 ? bytes_of(k) : kNoBytes, n);
        };
        for (KeyIndex* k = run + 1; k != end; ++k) {
          const KeyIndex x = *k;
          const std::string_view tx = whole(x);
          KeyIndex* j = k;
          for (; j != run && bytes_less(tx, whole(j[-1]), 8 * word); --j) *j = j[-1];
          *j = x;
        }
      } else if (longest <= 8 * word) {
        std::sort(run, end, [&](const KeyIndex& x, const KeyIndex& y) { return len_of(x) < len_of(y); });
      } else {
        const uint64_t shared = run->key;
        const size_t at = 8 * word;
        for (KeyIndex* k = run; k != end; ++k) {
          if (k + 16 < end && len_of(k[16]) > at) __builtin_prefetch(bytes_of(k[16]) + at);
          // The word-th 8 bytes, big-endian, zero padded past the end
          // (a term's arena bytes are whole words).
          const size_t n = len_of(*k);
          k->key = n > at ? __builtin_bswap64(token_prefix_unsafe(bytes_of(*k) + at, n - at)) : 0;
        }
        if (end - run > kRadixRun)
          radix_sort(run, static_cast<size_t>(end - run));
        else
          std::sort(run, end, [](const KeyIndex& x, const KeyIndex& y) { return x.key < y.key; });
        sort_ties(run, end, word + 1, lens);
        for (KeyIndex* k = run; k != end; ++k) k->key = shared;
      }
    }
    run = end;
  }
}

void TfIdfIndex::used_spent() {
  fail(SCIPIS_E_INTERNAL, "TF-IDF index used after its flush without being cleared");
}

void TfIdfIndex::serialise(int split_factor, OutBuffer& data, std::vector<OutBuffer>& metas,
                           const PathIndex* docs) {
  if (spent_) used_spent();
  spent_ = true;
  const size_t n = terms_;
  const uint32_t sf = static_cast<uint32_t>(split_factor);
  const uint64_t base_seq = n ? base_seq_ : 0;

  // Splits are consecutive ranges of the hash order; each is then sorted
  // by bytes. Posting regions are written straight into the data buffer
  // as their dictionary groups are, so a group's regions lie together.
  // One split reads the table once, in slot order: its keys go to the
  // table's memory behind the read (the at-th key's 16 bytes end at or
  // before the at-th term's slot, at or after the at-th, ends), the radix
  // sort's copy and then the counts after them (2 * 16 * n bytes, and the
  // table has more than 32 * n).
  KeyIndex* sorted;
  if (sf == 1) {
    sorted = reinterpret_cast<KeyIndex*>(region_);
    tmp_keys_ = sorted + n;
  } else {
    sort_keys_.reset(n * sizeof(KeyIndex));
    sorted = reinterpret_cast<KeyIndex*>(sort_keys_.data());
    radix_tmp_.reset(n * sizeof(KeyIndex));
    tmp_keys_ = reinterpret_cast<KeyIndex*>(radix_tmp_.data());
  }
  // A split's counts take the radix copy's place once its sort is done.
  Counts* const split_counts = reinterpret_cast<Counts*>(tmp_keys_);
  static_assert(sizeof(Counts) == sizeof(KeyIndex) && 2 * sizeof(KeyIndex) == sizeof(TermSlot),
                "a term's key and radix copy, or key and counts, fit in its slot's bytes");
  std::vector<size_t> per_split(size_t{sf} + 1, 0);
  std::vector<size_t> split_bytes(sf, 0);
  // Each term's counts and length go to gathered_ at its place in this
  // first order, and its key becomes its first word, big-endian, by which
  // its split is sorted, with that place and its bytes' unit beside it.
  gathered_.reset(n * (sizeof(Counts) + 1));
  auto* const gathered = reinterpret_cast<Counts*>(gathered_.data());
  uint8_t* const lens = reinterpret_cast<uint8_t*>(gathered + n);
  // e by value: its words are read before the key written over them.
  auto note = [&](size_t at, TermSlot e) {
    gathered[at] = Counts{e.df, e.cur_seq, e.cur_tf, e.tail};
    lens[at] = static_cast<uint8_t>(e.len());
    sorted[at] = KeyIndex{__builtin_bswap64(e.prefix), at | uint64_t{e.bytes} << 32};
  };
  if (sf == 1) {
    // One split needs no hash order: the terms in slot order.
    size_t at = 0;
    for (size_t i = 0; i < cap_; i++) {
      if (!slots_[i].tag) continue;
      if (at == n) fail(SCIPIS_E_INTERNAL, "TF-IDF index lost count of its terms");
      TermSlot e;
      std::memcpy(&e, &slots_[i], sizeof e);
      note(at++, e);
    }
    if (at != n) fail(SCIPIS_E_INTERNAL, "TF-IDF index lost count of its terms");
    per_split[1] = n;
    split_bytes[0] = term_bytes_;
  } else {
    if (dictionary_order(sorted) != n) fail(SCIPIS_E_INTERNAL, "TF-IDF index lost count of its terms");
    // Splits are consecutive ranges of the hash order, so the hash is not
    // needed once a term is counted into its split.
    for (size_t i = 0; i < n; i++) {
      if (i + 16 < n) __builtin_prefetch(&slots_[sorted[i + 16].value]);
      const uint32_t split = dict_split(sorted[i].key, sf);
      const TermSlot& e = slots_[sorted[i].value];
      per_split[split + 1]++;
      split_bytes[split] += e.len();
      note(i, e);
    }
    for (size_t s = 0; s < sf; s++) per_split[s + 1] += per_split[s];
  }

  size_t reserved = data_reserve(n, postings_);
  for (size_t s = 0; s < sf; s++)
    reserved += meta_reserve(per_split[s + 1] - per_split[s], split_bytes[s]);
  if (2 * reserved > flush_bound(budget_, depth_, split_factor))
    fail(SCIPIS_E_INTERNAL, "TF-IDF index flush exceeds its memory bound");
  data.reset(data_reserve(n, postings_));
  char* const base = data.data();
  char* out = base + kHeaderSize;
  uint64_t blocks = 0;
  metas.resize(sf);  // buffers handed in are reused
  auto len_of = [docs](uint64_t seq) { return docs ? docs->tokens_of(seq) : 0; };
  // A term's df postings, in seq order, into term_seqs_ and term_tfs_,
  // filled from the end as its TF arrays are walked from the last (the
  // vectors only grow: clearing and refilling them cost a bound check per
  // posting).
  auto gather = [&](const Counts* e) {
    const size_t df = e->df;
    if (term_seqs_.size() < df) {
      term_seqs_.resize(df);
      term_tfs_.resize(df);
    }
    uint64_t* const sq_out = term_seqs_.data();
    uint32_t* const tf_out = term_tfs_.data();
    size_t at = df - 1;
    sq_out[at] = base_seq + e->cur_seq;
    tf_out[at] = e->cur_tf;
    for (uint32_t u = e->tail; u; u = chunk(u)->prev) {
      const TfChunk* c = chunk(u);
      if (c->prev) __builtin_prefetch(chunk(c->prev));
      if (c->fill > at) fail(SCIPIS_E_INTERNAL, "TF-IDF index lost count of a term's postings");
      at -= c->fill;
      const uint32_t* pr = pairs(c);
      for (uint32_t i = 0; i < c->fill; i++) {
        sq_out[at + i] = base_seq + pr[2 * i];
        tf_out[at + i] = pr[2 * i + 1];
      }
    }
    if (at != 0) fail(SCIPIS_E_INTERNAL, "TF-IDF index lost count of a term's postings");
  };
  size_t all_bytes = 0;
  for (size_t s = 0; s < sf; s++) all_bytes += split_bytes[s];
  meta_.reset(n, all_bytes);
  std::vector<size_t> split_count(sf, 0);
  for (size_t s = 0; s < sf; s++) {
    KeyIndex* const first = sorted + per_split[s];
    KeyIndex* const last = sorted + per_split[s + 1];
    const size_t count = static_cast<size_t>(last - first);
    // The first word orders most terms without their bytes: a radix sort
    // by it, then terms sharing it by their next words.
    radix_sort(first, count);
    sort_ties(first, last, 1, lens);
    // The split's counts in sorted order, beside the keys, which keep the
    // terms' bytes (their first word, or arena unit and length). The
    // regions and the dictionary then read both in order.
    Counts* const counts = split_counts;
    for (size_t i = 0; i < count; i++) {
      if (i + 32 < count) __builtin_prefetch(&gathered[static_cast<uint32_t>(first[i + 32].value)]);
      const uint32_t at = static_cast<uint32_t>(first[i].value);
      counts[i] = gathered[at];
      first[i].key = __builtin_bswap64(first[i].key);
      first[i].value = (first[i].value >> 32) << 8 | lens[at];
    }
    auto term_at = [&](size_t i) {
      const size_t len = first[i].value & 0xff;
      return std::string_view(len <= 8 ? reinterpret_cast<const char*>(&first[i].key)
                                       : static_cast<const char*>(unit(static_cast<uint32_t>(
                                             first[i].value >> 8))),
                              len);
    };
    const size_t groups = (count + kTermGroup - 1) / kTermGroup;
    const uint64_t hot_from = hot_df([counts](size_t i) { return counts[i].df; }, count);
    split_count[s] = count;
    meta_.begin_split();
    // Group by group: the posting regions, noting each entry's code and
    // x and the hot terms, then the group's dictionary entries. (A split's
    // codes noted whole were two words a term of fresh pages per flush.)
    uint64_t entry_code[kTermGroup], entry_x[kTermGroup];
    // TF arrays sit anywhere in the region: last arrays are loaded 32
    // terms (two groups) ahead, the arrays before them 16 ahead, by which
    // time the last arrays they are read from have come.
    auto prefetch = [&](size_t i) {
      if (i + 32 < count && counts[i + 32].tail) __builtin_prefetch(unit(counts[i + 32].tail));
      if (i + 16 < count && counts[i + 16].tail) {
        const uint32_t prev = chunk(counts[i + 16].tail)->prev;
        if (prev) __builtin_prefetch(unit(prev));
      }
    };
    for (size_t i = 0; i < std::min<size_t>(count, 32); i++)
      if (counts[i].tail) __builtin_prefetch(unit(counts[i].tail));
    for (size_t g = 0; g < groups; g++) {
      const size_t g0 = g * kTermGroup;
      const size_t gn = std::min(kTermGroup, count - g0);
      meta_.add_group(static_cast<uint64_t>(out - base));
      for (size_t j = 0; j < gn; j++) prefetch(g0 + j);
      // The next group's term bytes, for its entries after its regions.
      for (size_t i = g0 + kTermGroup; i < std::min(count, g0 + 2 * kTermGroup); i++)
        if ((first[i].value & 0xff) > 8) __builtin_prefetch(unit(static_cast<uint32_t>(first[i].value >> 8)));
      // Small regions, their crc, then large ones.
      char* const span = out;
      for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
          meta_.set_small_bytes(static_cast<uint64_t>(out - span));
          if (out != span) out = write_u32(out, crc32c(span, static_cast<size_t>(out - span)));
        }
        for (size_t j = 0; j < gn; j++) {
          const Counts* e = &counts[g0 + j];
          if (e->df == 1) {
            // Most terms of logs (ids, numbers) are in one document: that
            // posting sits in the entry, with no region in the data file.
            if (e->tail) fail(SCIPIS_E_INTERNAL, "TF-IDF index: a term of one document has a TF array");
            if (pass == 0) {
              entry_code[j] = uint64_t{e->cur_tf} << 1 | 1;
              entry_x[j] = e->cur_seq;
            }
            continue;
          }
          if ((e->df <= kSmallRegion) != (pass == 0)) continue;
          gather(e);
          char* const start = out;
          out = pass == 0 ? write_small_region(out, term_seqs_.data(), term_tfs_.data(), e->df, base_seq)
                          : write_region(out, term_seqs_.data(), term_tfs_.data(), e->df, base_seq, len_of);
          entry_code[j] = uint64_t{e->df} << 1;
          entry_x[j] = static_cast<uint64_t>(out - start);
          blocks++;
          if (e->df >= hot_from && static_cast<size_t>(out - start) <= UINT32_MAX) {
            meta_.add_hot(term_at(g0 + j), static_cast<uint64_t>(start - base),
                          static_cast<uint32_t>(out - start), e->df, static_cast<uint32_t>(g));
          }
        }
      }
      for (size_t j = 0; j < gn; j++) meta_.add_entry(term_at(g0 + j), j == 0, entry_code[j], entry_x[j]);
    }
  }
  meta_.finish(sf, split_count.data(), split_bytes.data(), base_seq, metas);
  seal_tf_data(data, static_cast<size_t>(out - base), blocks);
}

void TfIdfIndex::clear(uint64_t budget) {
  const double per_term = terms_ ? static_cast<double>(arena_used_) / static_cast<double>(terms_)
                                 : kArenaPerTermGuess;
  if (budget && std::min(budget, kMaxBudget) != budget_) {
    huge_free(region_, region_bytes_);
    region_ = nullptr;
    budget_ = std::min(budget, kMaxBudget);
    region_bytes_ = region_bytes_for(budget_, depth_);
    region_ = static_cast<char*>(huge_alloc(region_bytes_, &zeroed_, huge_region()));
  }
  spent_ = false;
  terms_ = 0;
  postings_ = 0;
  term_bytes_ = 0;
  last_rel_ = 0;
  base_seq_ = UINT64_MAX;
  epoch_++;
  layout(per_term);
}

}  // namespace scipis
