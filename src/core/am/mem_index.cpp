#include <algorithm>

#include "am/am_source.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis::am {

namespace {

constexpr unsigned char kEntryVersion = 1;

// The distinct terms of a value with their counts, ascending.
std::vector<std::pair<std::string_view, uint32_t>> count_terms(const Tokenizer& tok,
                                                               std::string& buf,
                                                               uint32_t& tokens) {
  absl::flat_hash_map<std::string_view, uint32_t> tf;
  tokens = 0;
  tok.tokenize_in_place(reinterpret_cast<unsigned char*>(buf.data()), buf.size(),
                        [&](const char* s, size_t n) {
                          tf[std::string_view(s, n)]++;
                          tokens++;
                        });
  std::vector<std::pair<std::string_view, uint32_t>> out(tf.begin(), tf.end());
  std::sort(out.begin(), out.end());
  return out;
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
  auto terms = count_terms(tok, buf, tokens);
  if (len / 2 + 1 >= kLenNull) fail(SCIPIS_E_INVALID, "value too long to index");
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

void MemIndex::add_posting(std::string_view term, uint32_t tf) {
  auto it = map_.find(absl::string_view(term.data(), term.size()));
  if (it == map_.end()) {
    it = map_.try_emplace(std::string(term)).first;
    bytes_ += term.size() + 64;
    stats_.nterms++;
  }
  it->second.ords.push_back(static_cast<uint32_t>(docs_.size() - 1));
  it->second.tfs.push_back(tf);
  bytes_ += 8;
}

void MemIndex::add_text(const Tokenizer& tok, uint64_t tid, const char* text, size_t len,
                        bool is_null) {
  if (docs_.size() >= UINT32_MAX - 1) fail(SCIPIS_E_INTERNAL, "too many rows in one segment");
  if (is_null) {
    add_doc(tid, kLenNull);
    return;
  }
  scratch_.assign(text, len);
  uint32_t tokens;
  auto terms = count_terms(tok, scratch_, tokens);
  add_doc(tid, tokens);
  for (auto& [t, n] : terms) add_posting(t, n);
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
  auto it = map_.find(absl::string_view(term.data(), term.size()));
  if (it == map_.end()) return false;
  out.df = it->second.ords.size();
  if (postings) {
    out.ords = it->second.ords;
    out.tfs = it->second.tfs;
  }
  return true;
}

bool MemIndex::next_term(std::string& term, TermPostings& out) {
  if (next_ == 0 && sorted_.empty()) {
    for (auto& kv : map_) sorted_.push_back(&kv);
    std::sort(sorted_.begin(), sorted_.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
  }
  if (next_ >= sorted_.size()) return false;
  const auto* kv = sorted_[next_++];
  term = kv->first;
  out.df = kv->second.ords.size();
  out.ords = kv->second.ords;
  out.tfs = kv->second.tfs;
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

void TermBlocks::decode(size_t b, std::vector<uint32_t>& o, std::vector<uint32_t>& t) const {
  if (!reader) {
    o = ords;
    t = tfs;
    return;
  }
  const uint32_t n = reader->blocks()[b].count;
  uint64_t seqs[kBlockPostings];
  uint32_t f[kBlockPostings];
  reader->decode(b, seqs, f);
  o.resize(n);
  t.assign(f, f + n);
  for (uint32_t i = 0; i < n; i++) o[i] = static_cast<uint32_t>(seqs[i]);
}

}  // namespace scipis::am
