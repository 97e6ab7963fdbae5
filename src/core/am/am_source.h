// What a query or a merge reads: a segment in pages or the pending entries
// held in memory, behind one interface. Ordinals number a source's rows
// from 0 in the order they were added.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "am/am_format.h"
#include "am/mem_terms.h"
#include "index/postings_codec.h"
#include "index/tokenizer.h"
#include "scipis_engine.h"

namespace scipis::am {

struct TermPostings {
  uint64_t df = 0;
  std::vector<uint32_t> ords;  // ascending
  std::vector<uint32_t> tfs;
};

// A term's postings in one source as blocks, decoded one at a time: the
// blocks of a segment's region with their score bounds, or (pending
// entries, a term of one row) every posting as one block without a bound.
struct TermBlocks {
  uint64_t df = 0;
  std::unique_ptr<std::string> region;  // stable: reader views it
  std::unique_ptr<RegionReader> reader;
  // A reader over the region's skip list only: block b's payload is
  // fetch(region_off + offset, bytes), read when the block is decoded.
  std::function<void(uint64_t off, size_t n, char* dst)> fetch;
  uint64_t region_off = 0;
  mutable std::string payload;  // the block being decoded, when fetched
  std::vector<uint32_t> ords, tfs;  // without a reader

  size_t count() const { return reader ? reader->blocks().size() : 1; }
  const BlockInfo* info(size_t b) const { return reader ? &reader->blocks()[b] : nullptr; }
  uint32_t first(size_t b) const {
    if (!reader) return ords.front();
    return b == 0 ? 0 : static_cast<uint32_t>(reader->blocks()[b - 1].last_seq + 1);
  }
  uint32_t last(size_t b) const {
    return reader ? static_cast<uint32_t>(reader->blocks()[b].last_seq) : ords.back();
  }
  size_t postings(size_t b) const { return reader ? reader->blocks()[b].count : ords.size(); }
  // Block b's ordinals and tfs, postings(b) of each.
  void decode(size_t b, uint32_t* o, uint32_t* t) const;
};

class Source {
 public:
  virtual ~Source() = default;
  virtual const Footer& stats() = 0;
  virtual DocEntry doc(uint32_t ord) = 0;
  // A row's identifier or length alone (a segment keeps them apart).
  virtual uint64_t tid(uint32_t ord) { return doc(ord).tid; }
  virtual uint32_t len(uint32_t ord) { return doc(ord).len; }
  // The lengths of n rows, ascending ordinals.
  virtual void lens(const uint32_t* ords, size_t n, uint32_t* out) {
    for (size_t i = 0; i < n; i++) out[i] = len(ords[i]);
  }
  // False when the term is absent; with postings = false only df is set.
  virtual bool find(std::string_view term, TermPostings& out, bool postings) = 0;
  // The same as blocks; false when absent. The default holds everything.
  virtual bool find_blocks(std::string_view term, TermBlocks& out);
  // Terms in ascending byte order, one per call; false at the end.
  virtual bool next_term(std::string& term, TermPostings& out) = 0;
  // Whether row identifiers are known to ascend with ordinals.
  virtual bool tids_ascend() const { return false; }
  // Reads go through rd from now on (a later round of the same view).
  virtual void rebind(const scipis_am_reader&) {}
  // The filter columns each row holds (the index's columns after the first).
  virtual uint32_t nvals() { return 0; }
  // Row ord's filter values, nvals() of each.
  virtual void vals(uint32_t, uint64_t*, uint8_t*) {}
  // Whether row ord passes every filter (their columns below nvals()).
  virtual bool passes(uint32_t ord, const Filters& fs);
  // False when no row in [lo, hi] can pass.
  virtual bool may_pass(uint32_t, uint32_t, const Filters&) { return true; }
  // keep[i] cleared for each row ords[i] (i < n) that fails a filter.
  virtual void filter(const uint32_t* ords, size_t n, const Filters& fs, char* keep) {
    for (size_t i = 0; i < n; i++)
      if (keep[i] && !passes(ords[i], fs)) keep[i] = 0;
  }
};
// Fails unless every filter names a column the source holds.
void check_filters(Source& src, const Filters& fs, const std::string& what);

// Rows indexed in memory: the pending entries of a view, or what one
// indexer thread holds during a build (terms and postings in MemTerms).
class MemIndex : public Source {
 public:
  // Rows hold n filter values each from now on (before the first row).
  void set_nvals(uint32_t n);
  // Tokenizes the value; kLenNull rows (is_null) hold no terms. vals and
  // nulls: the row's filter values, nvals() of each.
  void add_text(const Tokenizer& tok, uint64_t tid, const char* text, size_t len, bool is_null,
                const uint64_t* vals = nullptr, const uint8_t* nulls = nullptr);
  // The same, tokenizing text in place (the caller's copy, spent).
  void add_own_text(const Tokenizer& tok, uint64_t tid, char* text, size_t len, bool is_null,
                    const uint64_t* vals = nullptr, const uint8_t* nulls = nullptr);
  // A pending entry's bytes (entry_encode); throws on damage.
  void add_entry(std::string_view entry);
  size_t bytes() const { return doc_bytes_ + terms_.bytes(); }
  // With a budget, the term table grows only while it stays within it
  // (0: no budget) and is crowded when it would have to grow past it.
  void set_budget(size_t bytes) { budget_ = bytes; }
  bool crowded() const { return terms_.crowded(); }
  bool empty() const { return docs_.empty(); }
  const std::vector<DocEntry>& docs() const { return docs_; }
  const Vals& all_vals() const { return vals_; }
  uint32_t nvals() override { return vals_.ncols; }
  void vals(uint32_t ord, uint64_t* v, uint8_t* nulls) override;
  bool passes(uint32_t ord, const Filters& fs) override;

  const Footer& stats() override { return stats_; }
  DocEntry doc(uint32_t ord) override { return docs_[ord]; }
  bool find(std::string_view term, TermPostings& out, bool postings) override;
  // Hands each term's postings over: the index is spent afterwards.
  bool next_term(std::string& term, TermPostings& out) override;

 private:
  void add_doc(uint64_t tid, uint32_t len, const uint64_t* vals, const uint8_t* nulls);
  void add_posting(const MemTerms::Key& k, uint32_t tf);

  std::vector<DocEntry> docs_;
  Vals vals_;
  MemTerms terms_;
  Footer stats_;
  size_t doc_bytes_ = 0;
  size_t budget_ = 0;
  std::string scratch_;
  std::vector<MemTerms::Key> toks_;  // a row's tokens, in its text
  std::vector<const MemTerms::Slot*> sorted_;
  size_t next_ = 0;
};

// A pending entry: u8 version, 6-byte TID key, (version 2) u8 count of
// filter values and per value u8 1 for NULL, else 0 and its u64 key; u32
// length (kLenNull for NULL), varint term count, then per term in
// ascending order u8 length, bytes, varint tf.
std::string entry_encode(const Tokenizer& tok, uint64_t tid, const char* text, size_t len,
                         bool is_null, uint32_t nvals = 0, const uint64_t* vals = nullptr,
                         const uint8_t* nulls = nullptr);
uint64_t entry_tid(std::string_view entry);

}  // namespace scipis::am
