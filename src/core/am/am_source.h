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

#include "absl/container/flat_hash_map.h"
#include "am/am_format.h"
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
// indexer thread holds during a build. Term bytes live in an arena and a
// term's first posting in its table slot, so the many terms of one row
// (ids, hashes) cost no allocation of their own.
class MemIndex : public Source {
 public:
  // Tokenizes the value; kLenNull rows (is_null) hold no terms.
  void add_text(const Tokenizer& tok, uint64_t tid, const char* text, size_t len, bool is_null);
  // The same, tokenizing text in place (the caller's copy, spent).
  void add_own_text(const Tokenizer& tok, uint64_t tid, char* text, size_t len, bool is_null);
  // A pending entry's bytes (entry_encode); throws on damage.
  void add_entry(std::string_view entry);
  size_t bytes() const { return bytes_; }
  bool empty() const { return docs_.empty(); }
  const std::vector<DocEntry>& docs() const { return docs_; }

  const Footer& stats() override { return stats_; }
  DocEntry doc(uint32_t ord) override { return docs_[ord]; }
  bool find(std::string_view term, TermPostings& out, bool postings) override;
  // Hands each term's postings over: the index is spent afterwards.
  bool next_term(std::string& term, TermPostings& out) override;

 private:
  // A term's postings as varints (a build holds millions of them: a
  // segment's rows per byte of memory decide how many segments a query
  // visits): per posting before the last its tf and the gap to the next
  // row; the last one apart, as a row's tokens still count into it.
  struct Posts {
    uint32_t n = 0;
    uint32_t ord0 = 0;
    uint32_t last = 0, last_tf = 0;
    std::vector<unsigned char> enc;
  };
  void add_doc(uint64_t tid, uint32_t len);
  void add_posting(std::string_view term, uint32_t tf);
  std::string_view keep(std::string_view term);
  static void fill(const Posts& p, TermPostings& out);

  std::vector<DocEntry> docs_;
  absl::flat_hash_map<std::string_view, Posts> map_;
  std::vector<std::unique_ptr<char[]>> arena_;
  char* arena_at_ = nullptr;
  size_t arena_left_ = 0;
  Footer stats_;
  size_t bytes_ = 0;
  std::string scratch_;
  std::vector<std::string_view> toks_;  // a row's tokens, in its text
  std::vector<std::pair<const std::string_view, Posts>*> sorted_;
  size_t next_ = 0;
};

// A pending entry: u8 version, 6-byte TID key, u32 length (kLenNull for
// NULL), varint term count, then per term in ascending order u8 length,
// bytes, varint tf.
std::string entry_encode(const Tokenizer& tok, uint64_t tid, const char* text, size_t len,
                         bool is_null);
uint64_t entry_tid(std::string_view entry);

}  // namespace scipis::am
