// A segment read through the C side's page callback, page by page as a
// query needs it; the pages it holds stay pinned in the backend's cache
// (or its own) until it lets them go.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "am/am_source.h"
#include "am/page_cache.h"
#include "scipis_engine.h"

namespace scipis::am {

class PagedSegment : public Source {
 public:
  static constexpr size_t kLocalPages = 128;
  PagedSegment(const scipis_am_reader& rd, const scipis_am_segment& seg);
  ~PagedSegment() override;
  PagedSegment(const PagedSegment&) = delete;
  PagedSegment& operator=(const PagedSegment&) = delete;
  const Footer& stats() override { return f_; }
  DocEntry doc(uint32_t ord) override;
  uint64_t tid(uint32_t ord) override;
  uint32_t len(uint32_t ord) override;
  void lens(const uint32_t* ords, size_t n, uint32_t* out) override;
  bool find(std::string_view term, TermPostings& out, bool postings) override;
  bool next_term(std::string& term, TermPostings& out) override;
  bool find_blocks(std::string_view term, TermBlocks& out) override;
  bool tids_ascend() const override { return (f_.flags & kSegFlagTidsAscend) != 0; }
  void rebind(const scipis_am_reader& rd) override { rd_ = rd; }
  uint32_t nvals() override { return f_.nvals(); }
  void vals(uint32_t ord, uint64_t* v, uint8_t* nulls) override;
  bool passes(uint32_t ord, const Filters& fs) override;
  bool may_pass(uint32_t lo, uint32_t hi, const Filters& fs) override;
  void filter(const uint32_t* ords, size_t n, const Filters& fs, char* keep) override;

 private:
  // f(i, byte) for the length byte of each row ords[i] (one byte a row),
  // a page at a time.
  template <typename F>
  void each_len_byte(const uint32_t* ords, size_t n, F&& f);
  // Column c's group g's directory entry (checked), the last one kept.
  const ValGroup& val_group(uint32_t c, uint64_t g);
  // Column c's run s of kValSuper groups, summarised on first use.
  const ValSum& val_sum(uint32_t c, uint64_t s);
  ValSum summarise(uint32_t c, uint64_t s);
  // Whether run s's rows all fail fs, all pass, or must each be checked.
  enum RunVerdict { kNone, kAll, kEach };
  RunVerdict run_verdict(uint64_t s, const Filters& fs);
  // Row ord's key in column c (not NULL), its group vg.
  uint64_t val_key(uint32_t c, const ValGroup& vg, uint32_t ord);
  struct DictTerm {
    std::string term;
    uint64_t df;
    uint32_t ord, tf;         // df = 1
    uint64_t region_off;      // df > 1: from the stream's start
    uint64_t region_bytes;
  };
  struct IndexEntry {
    uint64_t key, off;
    uint32_t dict_bytes, bytes;
  };
  bool lookup(std::string_view term, DictTerm& out);
  void read(uint64_t off, size_t n, char* dst);
  // The n bytes at off in place when one page holds them, else nullptr.
  const unsigned char* span(uint64_t off, size_t n);
  void load(uint32_t page);  // makes page the one at last_
  struct Held {
    const unsigned char* bytes;
    uint32_t slot;  // pinned in the cache, or PageCache::kNoSlot: own has it
    std::unique_ptr<unsigned char[]> own;
  };
  void release_pages();
  IndexEntry index_entry(uint64_t g);
  void load_group(uint64_t g, std::vector<DictTerm>& out);
  // f(term, entry) for the terms of group g in order while it returns true;
  // term is valid during the call.
  template <typename F>
  void each_in_group(uint64_t g, F&& f);
  void fill(const DictTerm& t, TermPostings& out);

  scipis_am_reader rd_;
  scipis_am_segment seg_;
  std::string what_;
  Footer f_;
  std::shared_ptr<const SegMeta> meta_;  // the backend's, when it caches
  uint64_t docs_end_ = 0;  // where the rows' sections end
  uint64_t tid_bits_ = 0;  // bytes of the tid groups' bits (version 3)
  // Per filter column: where its directory starts, its bits' bytes, and
  // the group its last value came from.
  std::vector<uint64_t> val_at_, val_bits_;
  struct ValCache {
    uint64_t g = UINT64_MAX;
    ValGroup vg{};
    uint64_t s = UINT64_MAX;  // the run of the last val_sum()
    const ValSum* vs = nullptr;
    // The group's keys, unpacked whole by vals() (a merge reads them all).
    uint64_t dg = UINT64_MAX;
    uint64_t keys[kValGroup];
  };
  std::vector<ValCache> val_cache_;
  std::shared_ptr<ValSums> sums_;  // the meta's, or this reader's own
  std::string val_buf_;
  absl::flat_hash_map<uint32_t, Held> pages_;
  uint32_t last_page_ = UINT32_MAX;  // the page of the last read, at last_
  const unsigned char* last_ = nullptr;
  // The tid group of the last tid() (checked): the rows a query scores
  // cluster, and a group's entry is on another page than its bits.
  uint64_t tid_group_ = UINT64_MAX;
  TidGroup tg_{};
  std::vector<DictTerm> group_;  // next_term's current group
  std::string region_;           // fill's, when pages split a region
  std::string group_bytes_;
  uint64_t next_group_ = 0;
  size_t next_in_group_ = 0;
};

}  // namespace scipis::am
