#include "index/term_dict.h"

#include "util/bytes.h"
#include "util/error.h"

#include <algorithm>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace scipis {

namespace {

unsigned reverse_bits(unsigned code, int len) {
  unsigned r = 0;
  for (int i = 0; i < len; i++, code >>= 1) r = (r << 1) | (code & 1);
  return r;
}

// The symbols freq counts, ascending, into syms; returns how many. From a
// bit mask of the counts that are not zero, four at a time: a flush lists
// nineteen contexts' symbols, and a branch (or a dependent store) per
// symbol was most of a small segment's codes.
int used_symbols(const uint32_t* freq, uint8_t* syms) {
  uint64_t mask[4] = {};
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  for (int s = 0; s < 256; s += 4) {
    const __m128i f = _mm_loadu_si128(reinterpret_cast<const __m128i*>(freq + s));
    const int unused = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(f, zero)));
    mask[s >> 6] |= static_cast<uint64_t>(~unused & 0xf) << (s & 63);
  }
#else
  for (int s = 0; s < 256; s++) mask[s >> 6] |= static_cast<uint64_t>(freq[s] != 0) << (s & 63);
#endif
  int n = 0;
  for (int w = 0; w < 4; w++)
    for (uint64_t m = mask[w]; m; m &= m - 1) syms[n++] = static_cast<uint8_t>(64 * w + __builtin_ctzll(m));
  return n;
}

// Moffat and Katajainen's in-place method over the used symbols sorted by
// weight: no heap, no allocation (a flush builds one code per context,
// nineteen of them even for a segment of a few terms). Sets len of the n
// symbols syms lists (the others are left as they are).
void code_lengths_of(const uint32_t* freq, const uint8_t* syms, int n, uint8_t* len) {
  if (n == 0) return;
  if (n == 1) {
    len[syms[0]] = 1;
    return;
  }
  uint64_t key[256];  // weight << 8 | symbol
  for (int i = 0; i < n; i++) key[i] = uint64_t{freq[syms[i]]} << 8 | syms[i];
  std::sort(key, key + n);
  for (;;) {
    uint64_t a[256];
    for (int i = 0; i < n; i++) a[i] = key[i] >> 8;
    // The tree: internal node `next` takes the two lightest of the leaves
    // left and the internal nodes made; a node consumed holds its parent.
    int root = 0, leaf = 0;
    for (int next = 0; next < n - 1; next++) {
      for (int child = 0; child < 2; child++) {
        uint64_t w;
        if (leaf >= n || (root < next && a[root] < a[leaf])) {
          w = a[root];
          a[root++] = static_cast<uint64_t>(next);
        } else {
          w = a[leaf++];
        }
        a[next] = child ? a[next] + w : w;
      }
    }
    // Depths of the internal nodes, root first, then of the leaves.
    a[n - 2] = 0;
    for (int next = n - 3; next >= 0; next--) a[next] = a[a[next]] + 1;
    int avail = 1, used = 0, depth = 0, next = n - 1;
    root = n - 2;
    while (avail > 0) {
      while (root >= 0 && a[root] == static_cast<uint64_t>(depth)) {
        used++;
        root--;
      }
      while (avail > used) {
        a[next--] = static_cast<uint64_t>(depth);
        avail--;
      }
      avail = 2 * used;
      depth++;
      used = 0;
    }
    int deepest = 0;
    for (int i = 0; i < n; i++) deepest = std::max(deepest, static_cast<int>(a[i]));
    if (deepest <= kMaxCodeBits) {
      for (int i = 0; i < n; i++) len[key[i] & 0xff] = static_cast<uint8_t>(a[i]);
      return;
    }
    // Too deep: flatter weights (halved, none dropped), in their order.
    for (int i = 0; i < n; i++) key[i] = ((key[i] >> 8) / 2 + 1) << 8 | (key[i] & 0xff);
    std::sort(key, key + n);
  }
}

}  // namespace

void code_lengths(const uint32_t* freq, uint8_t* len) {
  uint8_t syms[256];
  std::memset(len, 0, 256);
  code_lengths_of(freq, syms, used_symbols(freq, syms), len);
}

void DictEncoder::reset(size_t terms, size_t term_bytes) {
  std::memset(freq_, 0, sizeof freq_);
  counted_ = 0;
  notes_.reset(symbols_bound(terms, term_bytes) * sizeof(uint16_t));
  symbols_ = 0;
  groups_.clear();
  groups_.reserve(terms / kTermGroup + 1);
  prev_ = {};
  read_group_ = 0;
}

namespace {
// Bytes a and b share at their start, eight at a time.
size_t shared_prefix(const char* a, const char* b, size_t n) {
  size_t p = 0;
  for (; p + 8 <= n; p += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + p, 8);
    std::memcpy(&y, b + p, 8);
    if (x != y) return p + static_cast<size_t>(__builtin_ctzll(x ^ y)) / 8;
  }
  while (p < n && a[p] == b[p]) p++;
  return p;
}

constexpr uint16_t symbol(int ctx, unsigned byte) { return static_cast<uint16_t>(ctx << 8 | byte); }

// Notes symbol s at w and counts it (one pass over an entry's symbols: a
// second, reading them back to count them, was a third of add's time).
inline uint16_t* note(uint16_t* w, uint32_t* freq, uint16_t s) {
  *w = s;
  freq[s]++;
  return w + 1;
}

// The symbols of a varint's bytes, the i-th in context ctx + min(i, 2).
uint16_t* varint_symbols(uint16_t* w, uint32_t* freq, int ctx, uint64_t v) {
  for (int i = 0;; i++) {
    const int c = ctx + std::min(i, 2);
    if (v < 0x80) return note(w, freq, symbol(c, static_cast<unsigned>(v)));
    w = note(w, freq, symbol(c, static_cast<unsigned>((v & 0x7f) | 0x80)));
    v >>= 7;
  }
}
}  // namespace

void DictEncoder::add(std::string_view term, bool first, uint64_t code, uint64_t x) {
  // A group's first term is coded whole; the others share the bytes they
  // have in common with the term before.
  const size_t p = first ? 0 : shared_prefix(prev_.data(), term.data(), std::min(prev_.size(), term.size()));
  if (first || groups_.empty()) {
    unsigned char k[8] = {};
    std::memcpy(k, term.data(), std::min<size_t>(8, term.size()));
    uint64_t key = 0;
    for (unsigned char b : k) key = key << 8 | b;
    groups_.push_back(GroupNote{key, 0, symbols_});
  }
  groups_.back().entries++;
  const size_t most = 22 + (term.size() - p);
  if ((symbols_ + most) * sizeof(uint16_t) > notes_.size()) {
    // More than reset was told of: the notes so far, into twice the room.
    OutBuffer more(2 * (symbols_ + most) * sizeof(uint16_t));
    std::memcpy(more.data(), notes_.data(), symbols_ * sizeof(uint16_t));
    notes_ = std::move(more);
  }
  uint16_t* const start = reinterpret_cast<uint16_t*>(notes_.data()) + symbols_;
  uint32_t* const freq = &freq_[0][0];
  uint16_t* w = start;
  w = note(w, freq, symbol(kCtxPrefix, static_cast<unsigned>(p)));
  w = note(w, freq, symbol(kCtxSuffixLen, static_cast<unsigned>(term.size() - p)));
  const auto* t = reinterpret_cast<const unsigned char*>(term.data());
  for (size_t i = p; i < term.size(); i++)
    w = note(w, freq, symbol(kCtxChar + (i ? kCharClass.of[t[i - 1]] : 0), t[i]));
  w = varint_symbols(w, freq, kCtxCode, code);
  w = varint_symbols(w, freq, code & 1 ? kCtxSeq : kCtxRegion, x);
  symbols_ += static_cast<size_t>(w - start);
  // An entry counts at most 277 symbols: halving well before 2^32 keeps
  // every count in range and every seen symbol counted.
  counted_ += static_cast<uint64_t>(w - start);
  if (counted_ > (uint64_t{1} << 31)) {
    for (auto& ctx : freq_)
      for (auto& f : ctx) f = f ? f / 2 + 1 : 0;
    counted_ = 0;
  }
  prev_ = term;
}

char* DictEncoder::finish_counts(char* out) {
  for (int c = 0; c < kContexts; c++) {
    uint8_t syms[256];
    const int n = used_symbols(freq_[c], syms);
    uint8_t len[256] = {};
    code_lengths_of(freq_[c], syms, n, len);
    // Canonical codes: by length, then symbol (syms ascends).
    uint16_t count[kMaxCodeBits + 1] = {}, next[kMaxCodeBits + 2] = {};
    for (int i = 0; i < n; i++) count[len[syms[i]]]++;
    unsigned code = 0;
    for (int b = 1; b <= kMaxCodeBits; b++) {
      code = (code + count[b - 1]) << 1;
      next[b] = static_cast<uint16_t>(code);
    }
    for (int i = 0; i < n; i++) {
      const int l = len[syms[i]];
      code_[c * 256 + syms[i]] = reverse_bits(next[l]++, l) | static_cast<uint32_t>(l) << 16;
    }
    std::memset(out, 0, 128);
    for (int i = 0; i < n; i++) out[syms[i] >> 1] |= static_cast<char>(len[syms[i]] << (4 * (syms[i] & 1)));
    out += 128;
  }
  return out;
}

char* DictEncoder::encode_group(char* out, size_t n) {
  if (read_group_ >= groups_.size() || groups_[read_group_].entries != n)
    fail(SCIPIS_E_INTERNAL, "TF dictionary group %zu coded with %zu entries", read_group_, n);
  const GroupNote& g = groups_[read_group_++];
  group_key_ = g.key;
  const uint16_t* s = reinterpret_cast<const uint16_t*>(notes_.data()) + g.first_symbol;
  const uint16_t* const end = reinterpret_cast<const uint16_t*>(notes_.data()) +
                              (read_group_ < groups_.size() ? groups_[read_group_].first_symbol : symbols_);
  // Three codes (at most 45 bits) join the at most 7 bits left, then every
  // whole byte is stored with one unaligned write.
  uint64_t acc = 0;
  unsigned bits = 0;
  auto put = [&](uint16_t sym) {
    const uint32_t c = code_[sym];
    acc |= uint64_t{c & 0xffffu} << bits;
    bits += c >> 16;
  };
  auto spill = [&] {
    std::memcpy(out, &acc, 8);
    const unsigned bytes = bits >> 3;
    out += bytes;
    acc >>= 8 * bytes;
    bits &= 7;
  };
  for (; end - s >= 3; s += 3) {
    put(s[0]);
    put(s[1]);
    put(s[2]);
    spill();
  }
  for (; s != end; ++s) {
    put(*s);
    spill();
  }
  if (bits) *out++ = static_cast<char>(acc);
  return out;
}

bool DictDecoder::load(const char* p) {
  std::memcpy(raw_, p, kCodeTableBytes);
  tables_.assign(kContexts, Table{});
  for (int c = 0; c < kContexts; c++) {
    Table& t = tables_[c];
    uint8_t len[256];
    for (int s = 0; s < 256; s += 2) {
      const auto b = static_cast<unsigned char>(*p++);
      len[s] = b & 0x0f;
      len[s + 1] = b >> 4;
    }
    for (int s = 0; s < 256; s++) t.count[len[s]]++;
    t.count[0] = 0;
    // A prefix code: the lengths may leave codes unused, never overlap.
    int64_t left = 1;
    for (int b = 1; b <= kMaxCodeBits; b++) {
      left = left * 2 - t.count[b];
      if (left < 0) return false;
    }
    uint16_t at = 0;
    for (int b = 1; b <= kMaxCodeBits; b++) {
      t.first_index[b] = at;
      at = static_cast<uint16_t>(at + t.count[b]);
    }
    for (int b = 1, first = 0; b <= kMaxCodeBits; b++) {
      t.first_code[b] = static_cast<uint16_t>(first);
      first = (first + t.count[b]) << 1;
    }
    uint16_t fill[kMaxCodeBits + 1];
    std::memcpy(fill, t.first_index, sizeof fill);
    for (int s = 0; s < 256; s++)
      if (len[s]) t.symbols[fill[len[s]]++] = static_cast<uint8_t>(s);
    unsigned code = 0, next[kMaxCodeBits + 1] = {};
    for (int b = 1; b <= kMaxCodeBits; b++) {
      code = (code + (b > 1 ? t.count[b - 1] : 0)) << 1;
      next[b] = code;
    }
    for (int s = 0; s < 256; s++) {
      const int l = len[s];
      if (!l) continue;
      const unsigned r = reverse_bits(next[l]++, l);
      if (l <= kFastBits)
        for (unsigned f = r; f < (1u << kFastBits); f += 1u << l)
          t.fast[f] = static_cast<uint16_t>(s | l << 8);
    }
  }
  return true;
}

namespace {
struct ReversedBytes {
  uint8_t of[256];
  constexpr ReversedBytes() : of() {
    for (unsigned b = 0; b < 256; b++) {
      unsigned r = 0;
      for (int i = 0; i < 8; i++) r |= (b >> i & 1) << (7 - i);
      of[b] = static_cast<uint8_t>(r);
    }
  }
};
constexpr ReversedBytes kReversedBytes;
}  // namespace

DictDecoder::Reader::Reader(const DictDecoder& d, const char* p, const char* end)
    : d_(d),
      p_(reinterpret_cast<const unsigned char*>(p)),
      end_(reinterpret_cast<const unsigned char*>(end)) {}

void DictDecoder::Reader::refill() {
  if (end_ - p_ >= 8) {
    uint64_t v;
    std::memcpy(&v, p_, 8);
    acc_ |= v << bits_;
    p_ += (63 - bits_) >> 3;
    bits_ |= 56;
    return;
  }
  while (bits_ <= 56) {
    if (p_ < end_) {
      acc_ |= uint64_t{*p_++} << bits_;
    } else {
      pad_ += 8;  // zeros past the end: fine only if never consumed
    }
    bits_ += 8;
  }
}

bool DictDecoder::Reader::slow_symbol(int ctx, unsigned& sym) {
  const Table& t = d_.tables_[ctx];
  // Longer than the fast table's codes: canonical decoding from there on,
  // on the next kMaxCodeBits bits with the code's first bit highest (a
  // bit at a time from the first was a tenth of a dictionary lookup).
  const unsigned v = (unsigned{kReversedBytes.of[acc_ & 0xff]} << 8 | kReversedBytes.of[(acc_ >> 8) & 0xff]) >>
                     (16 - kMaxCodeBits);
  for (int b = kFastBits + 1; b <= kMaxCodeBits; b++) {
    const unsigned code = (v >> (kMaxCodeBits - b)) - t.first_code[b];
    if (code < t.count[b]) {
      sym = t.symbols[t.first_index[b] + code];
      acc_ >>= b;
      bits_ -= static_cast<unsigned>(b);
      return pad_ <= bits_;
    }
  }
  return false;
}

bool DictDecoder::Reader::varint_rest(int ctx, unsigned first, uint64_t& v) {
  v = first & 0x7f;
  for (int i = 1, shift = 7; shift < 64; i++, shift += 7) {
    unsigned b;
    if (!symbol(ctx + std::min(i, 2), b)) return false;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

bool DictDecoder::Reader::next(char* term, size_t& len, DictEntry& e) {
  unsigned prefix, suffix;
  if (!symbol(kCtxPrefix, prefix) || !symbol(kCtxSuffixLen, suffix) || prefix > len ||
      suffix > kMaxTermBytes - prefix || prefix + suffix == 0)
    return false;
  // The byte the new term's first own byte replaces (none when it extends
  // the term before it).
  const bool extends = prefix == len;
  const unsigned char replaced = extends ? 0 : static_cast<unsigned char>(term[prefix]);
  for (unsigned i = prefix; i < prefix + suffix; i++) {
    unsigned b;
    if (!symbol(static_cast<int>(char_context(term, i)), b)) return false;
    term[i] = static_cast<char>(b);
  }
  if (!varint(kCtxCode, e.code)) return false;
  if (!varint(e.code & 1 ? kCtxSeq : kCtxRegion, e.x)) return false;
  e.shared = prefix;
  e.after = suffix > 0 && (extends || static_cast<unsigned char>(term[prefix]) > replaced);
  len = prefix + suffix;
  e.len = len;
  return true;
}

bool DictDecoder::Reader::at_end() const {
  // Whole bytes left unread would be trailing garbage.
  return p_ == end_ && bits_ - pad_ < 8;
}

}  // namespace scipis
