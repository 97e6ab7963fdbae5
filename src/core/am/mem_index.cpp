#include <algorithm>
#include <cstring>

#include "am/am_source.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis::am {

namespace {

constexpr unsigned char kEntryVersion = 1;

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
                         bool is_null) {
  if (tid > kMaxTid) fail(SCIPIS_E_INVALID, "row identifier out of range");
  std::string out;
  out.push_back(static_cast<char>(kEntryVersion));
  for (int i = 0; i < 6; i++) out.push_back(static_cast<char>(tid >> (8 * i)));
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
  if (entry.size() < 11 || static_cast<unsigned char>(entry[0]) != kEntryVersion)
    bad_entry("not an entry");
  uint64_t tid = 0;
  for (int i = 0; i < 6; i++) tid |= static_cast<uint64_t>(static_cast<unsigned char>(entry[1 + i])) << (8 * i);
  return tid;
}

void MemIndex::add_doc(uint64_t tid, uint32_t len) {
  docs_.push_back({tid, len});
  stats_.ndocs++;
  if (len != kLenNull && len > 0) {
    stats_.counted++;
    stats_.tokens += len;
  }
  bytes_ += sizeof(DocEntry);
}

std::string_view MemIndex::keep(std::string_view term) {
  if (arena_left_ < term.size()) {
    // Chunks grow from 4 KiB to 256 KiB: a small index stays small.
    const size_t chunk = std::min<size_t>(size_t{4096} << std::min<size_t>(arena_.size(), 6), 256 << 10);
    arena_.push_back(std::make_unique<char[]>(chunk));
    arena_at_ = arena_.back().get();
    arena_left_ = chunk;
    bytes_ += chunk;
  }
  std::memcpy(arena_at_, term.data(), term.size());
  std::string_view kept(arena_at_, term.size());
  arena_at_ += term.size();
  arena_left_ -= term.size();
  return kept;
}

void MemIndex::add_posting(std::string_view term, uint32_t tf) {
  const uint32_t ord = static_cast<uint32_t>(docs_.size() - 1);
  auto it = map_.find(term);
  if (it == map_.end()) {
    map_.emplace(keep(term), Posts{1, ord, ord, tf, {}});
    bytes_ += sizeof(std::pair<std::string_view, Posts>) + 8;
    stats_.nterms++;
    return;
  }
  Posts& p = it->second;
  // The row's term again (a value's tokens come unsorted): one more.
  if (p.last == ord) {
    p.last_tf += tf;
    return;
  }
  char buf[20];
  char* e = write_varint(write_varint(buf, p.last_tf), ord - p.last);
  const size_t cap = p.enc.capacity();
  p.enc.insert(p.enc.end(), buf, e);
  bytes_ += p.enc.capacity() - cap;
  p.last = ord;
  p.last_tf = tf;
  p.n++;
}

void MemIndex::fill(const Posts& p, TermPostings& out) {
  out.df = p.n;
  out.ords.resize(p.n);
  out.tfs.resize(p.n);
  Cursor c(p.enc.data(), p.enc.size());
  uint64_t ord = p.ord0;
  for (uint32_t i = 0; i + 1 < p.n; i++) {
    out.ords[i] = static_cast<uint32_t>(ord);
    out.tfs[i] = static_cast<uint32_t>(c.varint());
    ord += c.varint();
  }
  if (!c.ok() || c.left() != 0 || ord != p.last) fail(SCIPIS_E_INTERNAL, "postings in memory disagree");
  out.ords[p.n - 1] = p.last;
  out.tfs[p.n - 1] = p.last_tf;
}

void MemIndex::add_text(const Tokenizer& tok, uint64_t tid, const char* text, size_t len,
                        bool is_null) {
  if (is_null) {
    add_own_text(tok, tid, nullptr, 0, true);
    return;
  }
  scratch_.assign(text, len);
  add_own_text(tok, tid, scratch_.data(), scratch_.size(), false);
}

void MemIndex::add_own_text(const Tokenizer& tok, uint64_t tid, char* text, size_t len,
                            bool is_null) {
  if (docs_.size() >= UINT32_MAX - 1) fail(SCIPIS_E_INTERNAL, "too many rows in one segment");
  if (is_null) {
    add_doc(tid, kLenNull);
    return;
  }
  // Each token goes to its term's postings, counted there: no sort of the
  // row's tokens. Millions of terms make each lookup a cache miss or two;
  // asked for kAhead tokens early, the misses overlap instead of following
  // one another (a tenth of a build's time).
  constexpr size_t kAhead = 16;
  add_doc(tid, 0);
  toks_.clear();
  tok.tokenize_in_place(reinterpret_cast<unsigned char*>(text), len,
                        [&](const char* s, size_t n) { toks_.emplace_back(s, n); });
  const size_t tokens = toks_.size();
  if (tokens >= UINT32_MAX) fail(SCIPIS_E_INVALID, "value has too many tokens to index");
  for (size_t i = 0; i < std::min(tokens, kAhead); i++) map_.prefetch(toks_[i]);
  for (size_t i = 0; i < tokens; i++) {
    if (i + kAhead < tokens) map_.prefetch(toks_[i + kAhead]);
    add_posting(toks_[i], 1);
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
  const uint32_t len = c.u32();
  const uint64_t n = c.varint();
  if (!c.ok() || (len == kLenNull && n != 0) || n > c.left()) bad_entry("bad header");
  add_doc(tid, len);
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
    add_posting(t, static_cast<uint32_t>(tf));
  }
  if (c.left() != 0 || (len != kLenNull && sum != len)) bad_entry("lengths disagree");
}

bool MemIndex::find(std::string_view term, TermPostings& out, bool postings) {
  auto it = map_.find(term);
  if (it == map_.end()) return false;
  out.df = it->second.n;
  if (postings) fill(it->second, out);
  return true;
}

bool MemIndex::next_term(std::string& term, TermPostings& out) {
  if (next_ == 0 && sorted_.empty()) {
    // By the first 8 bytes as one word, then the rest: few byte compares.
    std::vector<std::pair<uint64_t, std::pair<const std::string_view, Posts>*>> keyed;
    keyed.reserve(map_.size());
    for (auto& kv : map_)
      keyed.emplace_back(term_key(kv.first), &kv);
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return a.second->first < b.second->first;
    });
    sorted_.reserve(keyed.size());
    for (auto& k : keyed) sorted_.push_back(k.second);
  }
  if (next_ >= sorted_.size()) return false;
  auto* kv = sorted_[next_++];
  term.assign(kv->first);
  fill(kv->second, out);
  std::vector<unsigned char>().swap(kv->second.enc);
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
