#include <algorithm>
#include <cstring>

#include "am/am_source.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis::am {

namespace {

constexpr unsigned char kEntryVersion = 2;  // 1: no filter values

// The distinct terms of a value with their counts, ascending: the tokens
// sorted and counted in runs (a row's few tokens need no hash table).
void count_terms(const Tokenizer& tok, std::string& buf, std::vector<std::string_view>& toks,
                 std::vector<std::pair<std::string_view, uint32_t>>& out, uint32_t& tokens) {
  toks.clear();
  out.clear();
  tok.tokenize_in_place(reinterpret_cast<unsigned char*>(buf.data()), buf.size(),
                        [&](const char* s, size_t n) { toks.emplace_back(s, n); });
  if (toks.size() >= UINT32_MAX) fail(SCIPIS_E_INVALID, "value has too many tokens to index");
  tokens = static_cast<uint32_t>(toks.size());
  std::sort(toks.begin(), toks.end());
  for (size_t i = 0; i < toks.size();) {
    size_t j = i + 1;
    while (j < toks.size() && toks[j] == toks[i]) j++;
    out.emplace_back(toks[i], static_cast<uint32_t>(j - i));
    i = j;
  }
}

[[noreturn]] void bad_entry(const char* why) { fail_corrupt("pending entry", why); }

}  // namespace

std::string entry_encode(const Tokenizer& tok, uint64_t tid, const char* text, size_t len,
                         bool is_null, uint32_t nvals, const uint64_t* vals, const uint8_t* nulls) {
  if (tid > kMaxTid) fail(SCIPIS_E_INVALID, "row identifier out of range");
  if (nvals > kMaxVals) fail(SCIPIS_E_INVALID, "too many filter columns");
  std::string out;
  out.push_back(static_cast<char>(kEntryVersion));
  for (int i = 0; i < 6; i++) out.push_back(static_cast<char>(tid >> (8 * i)));
  out.push_back(static_cast<char>(nvals));
  for (uint32_t c = 0; c < nvals; c++) {
    const bool n = nulls && nulls[c];
    out.push_back(n ? 1 : 0);
    if (!n) put_u64(out, vals[c]);
  }
  if (is_null) {
    put_u32(out, kLenNull);
    put_varint(out, 0);
    return out;
  }
  std::string buf(text, len);
  uint32_t tokens;
  std::vector<std::string_view> toks;
  std::vector<std::pair<std::string_view, uint32_t>> terms;
  count_terms(tok, buf, toks, terms, tokens);
  put_u32(out, tokens);
  put_varint(out, terms.size());
  for (auto& [t, n] : terms) {
    out.push_back(static_cast<char>(t.size()));
    out.append(t);
    put_varint(out, n);
  }
  return out;
}

uint64_t entry_tid(std::string_view entry) {
  const unsigned char v = entry.empty() ? 0 : static_cast<unsigned char>(entry[0]);
  if (entry.size() < (v == 1 ? 11u : 12u) || v < 1 || v > kEntryVersion) bad_entry("not an entry");
  uint64_t tid = 0;
  for (int i = 0; i < 6; i++) tid |= static_cast<uint64_t>(static_cast<unsigned char>(entry[1 + i])) << (8 * i);
  return tid;
}

void MemIndex::set_nvals(uint32_t n) {
  if (n > kMaxVals) fail(SCIPIS_E_INVALID, "too many filter columns");
  if (!docs_.empty() && n != vals_.ncols) fail(SCIPIS_E_INTERNAL, "filter columns changed after the first row");
  vals_.ncols = n;
}

void MemIndex::vals(uint32_t ord, uint64_t* v, uint8_t* nulls) {
  const size_t at = static_cast<size_t>(ord) * vals_.ncols;
  std::copy_n(vals_.v.data() + at, vals_.ncols, v);
  std::copy_n(vals_.nulls.data() + at, vals_.ncols, nulls);
}

bool MemIndex::passes(uint32_t ord, const Filters& fs) {
  const size_t at = static_cast<size_t>(ord) * vals_.ncols;
  return vals_pass(fs, vals_.v.data() + at, vals_.nulls.data() + at);
}

bool Source::passes(uint32_t ord, const Filters& fs) {
  if (fs.empty()) return true;
  uint64_t v[kMaxVals];
  uint8_t n[kMaxVals];
  vals(ord, v, n);
  return vals_pass(fs, v, n);
}

void check_filters(Source& src, const Filters& fs, const std::string& what) {
  for (const Filter& f : fs)
    if (f.col >= src.nvals()) fail_corrupt(what, "holds fewer filter columns than its index");
}

void MemIndex::add_doc(uint64_t tid, uint32_t len, const uint64_t* vals, const uint8_t* nulls) {
  docs_.push_back({tid, len});
  if (vals_.ncols) vals_.add(vals, nulls);
  stats_.ndocs++;
  if (len != kLenNull && len > 0) {
    stats_.counted++;
    stats_.tokens += len;
  }
  doc_bytes_ += sizeof(DocEntry) + vals_.ncols * (sizeof(uint64_t) + 1);
  if (budget_) terms_.set_budget(budget_ > doc_bytes_ ? budget_ - doc_bytes_ : 1);
}

void MemIndex::add_posting(const MemTerms::Key& k, uint32_t tf) {
  if (terms_.add(k, static_cast<uint32_t>(docs_.size() - 1), tf)) stats_.nterms++;
}

void MemIndex::add_text(const Tokenizer& tok, uint64_t tid, const char* text, size_t len,
                        bool is_null, const uint64_t* vals, const uint8_t* nulls) {
  if (is_null) {
    add_own_text(tok, tid, nullptr, 0, true, vals, nulls);
    return;
  }
  scratch_.assign(text, len);
  add_own_text(tok, tid, scratch_.data(), scratch_.size(), false, vals, nulls);
}

void MemIndex::add_own_text(const Tokenizer& tok, uint64_t tid, char* text, size_t len,
                            bool is_null, const uint64_t* vals, const uint8_t* nulls) {
  if (docs_.size() >= UINT32_MAX - 1) fail(SCIPIS_E_INTERNAL, "too many rows in one segment");
  if (is_null) {
    add_doc(tid, kLenNull, vals, nulls);
    return;
  }
  // Each token goes to its term's postings, counted there: no sort of the
  // row's tokens. Millions of terms make each lookup a cache miss or two;
  // the slot is asked for kAhead tokens early and its postings' last
  // chunk kNear tokens early, so the misses overlap instead of following
  // one another.
  constexpr size_t kAhead = 16, kNear = 8;
  add_doc(tid, 0, vals, nulls);
  toks_.clear();
  tok.tokenize_in_place(reinterpret_cast<unsigned char*>(text), len, [&](const char* s, size_t n) {
    toks_.push_back(MemTerms::Key::of(s, n));
  });
  const size_t tokens = toks_.size();
  if (tokens >= UINT32_MAX) fail(SCIPIS_E_INVALID, "value has too many tokens to index");
  for (size_t i = 0; i < tokens + kAhead; i++) {
    if (i < tokens) terms_.prefetch(toks_[i]);
    if (i >= kNear && i - kNear < tokens) terms_.prefetch_postings(toks_[i - kNear]);
    if (i >= kAhead) add_posting(toks_[i - kAhead], 1);
  }
  docs_.back().len = static_cast<uint32_t>(tokens);
  if (tokens > 0) {
    stats_.counted++;
    stats_.tokens += tokens;
  }
}

void MemIndex::add_entry(std::string_view entry) {
  const uint64_t tid = entry_tid(entry);
  Cursor c(entry.data() + 7, entry.size() - 7);
  uint64_t v[kMaxVals];
  uint8_t nulls[kMaxVals];
  uint32_t nv = 0;
  if (entry[0] != 1) {
    const std::string_view nb = c.bytes(1);
    nv = nb.empty() ? kMaxVals + 1 : static_cast<unsigned char>(nb[0]);
    if (nv > kMaxVals || (!docs_.empty() && nv != vals_.ncols)) bad_entry("bad filter value count");
    for (uint32_t i = 0; i < nv; i++) {
      const std::string_view f = c.bytes(1);
      nulls[i] = f.empty() ? 2 : static_cast<uint8_t>(f[0]);
      v[i] = nulls[i] == 0 ? c.u64() : 0;
      if (!c.ok() || nulls[i] > 1) bad_entry("bad filter value");
    }
  } else if (!docs_.empty() && vals_.ncols != 0) {
    bad_entry("bad filter value count");
  }
  if (docs_.empty()) vals_.ncols = nv;
  const uint32_t len = c.u32();
  const uint64_t n = c.varint();
  if (!c.ok() || (len == kLenNull && n != 0) || n > c.left()) bad_entry("bad header");
  add_doc(tid, len, v, nulls);
  uint64_t sum = 0;
  std::string_view prev;
  for (uint64_t i = 0; i < n; i++) {
    const std::string_view lb = c.bytes(1);
    const size_t tl = lb.empty() ? 0 : static_cast<unsigned char>(lb[0]);
    std::string_view t = c.bytes(tl);
    const uint64_t tf = c.varint();
    if (!c.ok() || tl == 0 || tl > kMaxToken || tf == 0 || tf > len || (i > 0 && t <= prev))
      bad_entry("bad term");
    sum += tf;
    prev = t;
    add_posting(MemTerms::Key::of(t.data(), t.size()), static_cast<uint32_t>(tf));
  }
  if (c.left() != 0 || (len != kLenNull && sum != len)) bad_entry("lengths disagree");
}

bool MemIndex::find(std::string_view term, TermPostings& out, bool postings) {
  if (term.empty() || term.size() > kMaxToken) return false;
  const MemTerms::Slot* t = terms_.find(MemTerms::Key::of(term.data(), term.size()));
  if (!t) return false;
  out.df = t->df;
  if (postings) terms_.postings(*t, out.ords, out.tfs);
  return true;
}

bool MemIndex::next_term(std::string& term, TermPostings& out) {
  if (next_ == 0 && sorted_.empty()) sorted_ = terms_.sorted();
  if (next_ >= sorted_.size()) return false;
  const MemTerms::Slot* t = sorted_[next_++];
  term.assign(terms_.term(*t));
  out.df = t->df;
  terms_.postings(*t, out.ords, out.tfs);
  return true;
}

bool Source::find_blocks(std::string_view term, TermBlocks& out) {
  TermPostings p;
  if (!find(term, p, true)) return false;
  out.df = p.df;
  out.ords = std::move(p.ords);
  out.tfs = std::move(p.tfs);
  return true;
}

void TermBlocks::decode(size_t b, uint32_t* o, uint32_t* t) const {
  if (!reader) {
    std::copy(ords.begin(), ords.end(), o);
    std::copy(tfs.begin(), tfs.end(), t);
    return;
  }
  const uint32_t n = reader->blocks()[b].count;
  uint64_t seqs[kBlockPostings];
  if (fetch) {
    const BlockInfo& k = reader->blocks()[b];
    payload.resize(k.bytes);
    fetch(region_off + k.offset, k.bytes, payload.data());
    reader->decode_payload(b, payload.data(), seqs, t);
  } else {
    reader->decode(b, seqs, t);
  }
  for (uint32_t i = 0; i < n; i++) o[i] = static_cast<uint32_t>(seqs[i]);
}

}  // namespace scipis::am
