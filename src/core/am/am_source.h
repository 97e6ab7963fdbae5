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
};

// Rows indexed in memory: the pending entries of a view, or what one
// indexer thread holds during a build (terms and postings in MemTerms).
class MemIndex : public Source {
 public:
  // Tokenizes the value; kLenNull rows (is_null) hold no terms.
  void add_text(const Tokenizer& tok, uint64_t tid, const char* text, size_t len, bool is_null);
  // The same, tokenizing text in place (the caller's copy, spent).
  void add_own_text(const Tokenizer& tok, uint64_t tid, char* text, size_t len, bool is_null);
  // A pending entry's bytes (entry_encode); throws on damage.
  void add_entry(std::string_view entry);
  size_t bytes() const { return doc_bytes_ + terms_.bytes(); }
  // With a budget, the term table grows only while it stays within it
  // (0: no budget) and is crowded when it would have to grow past it.
  void set_budget(size_t bytes) { budget_ = bytes; }
  bool crowded() const { return terms_.crowded(); }
  bool empty() const { return docs_.empty(); }
  const std::vector<DocEntry>& docs() const { return docs_; }

  const Footer& stats() override { return stats_; }
  DocEntry doc(uint32_t ord) override { return docs_[ord]; }
  bool find(std::string_view term, TermPostings& out, bool postings) override;
  // Hands each term's postings over: the index is spent afterwards.
  bool next_term(std::string& term, TermPostings& out) override;

 private:
  void add_doc(uint64_t tid, uint32_t len);
  void add_posting(const MemTerms::Key& k, uint32_t tf);

  std::vector<DocEntry> docs_;
  MemTerms terms_;
  Footer stats_;
  size_t doc_bytes_ = 0;
  size_t budget_ = 0;
  std::string scratch_;
  std::vector<MemTerms::Key> toks_;  // a row's tokens, in its text
  std::vector<const MemTerms::Slot*> sorted_;
  size_t next_ = 0;
};

// A pending entry: u8 version, 6-byte TID key, u32 length (kLenNull for
// NULL), varint term count, then per term in ascending order u8 length,
// bytes, varint tf.
std::string entry_encode(const Tokenizer& tok, uint64_t tid, const char* text, size_t len,
                         bool is_null);
uint64_t entry_tid(std::string_view entry);

}  // namespace scipis::am
