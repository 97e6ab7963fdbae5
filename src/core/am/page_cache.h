// The backend's cache of segment pages already read and checked: a page
// of a live segment never changes (segments are immutable; a freed page
// comes back under a new segment id), so a query can take it from here
// instead of the buffer manager, without copying it or verifying its
// checksum again. Bounded by scipis.index_cache_size; evicted by CLOCK, a
// page read once going before pages every query reads (footers, the
// dictionary index). Only a backend's main thread reads segments (its
// indexer threads only write them), so the cache takes no lock, and a
// page a scan holds is pinned by a plain count rather than shared: an
// atomic count in another cache line than the bytes cost more than the
// lookup (every page a query touches is one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "am/am_format.h"
#include "scipis_engine.h"

namespace scipis::am {

struct PageKey {
  uint32_t rel[3];  // the index's tablespace, database, file
  uint32_t seg_id, seg_start, seg_npages;
  uint64_t seg_bytes;
  uint32_t page;
  bool operator==(const PageKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const PageKey& k) {
    return H::combine(std::move(h), k.rel[0], k.rel[1], k.rel[2], k.seg_id, k.seg_start, k.seg_npages,
                      k.seg_bytes, k.page);
  }
};

// A segment of a relation, as the cache names it.
struct SegKey {
  uint32_t rel[3];
  uint32_t seg_id, seg_start, seg_npages;
  uint64_t seg_bytes;
  bool operator==(const SegKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const SegKey& k) {
    return H::combine(std::move(h), k.rel[0], k.rel[1], k.rel[2], k.seg_id, k.seg_start, k.seg_npages,
                      k.seg_bytes);
  }
};

// What opening a segment reads and works out (its footer, where its rows
// end, every kIndexChunk-th key of its dictionary index), kept so that a
// query opens it without reading a page.
constexpr uint64_t kIndexChunk = 64;
// A filter column's rows in runs of kValSuper value groups: their smallest
// and largest keys, made from the groups' entries when first needed (BRIN's
// ranges, for log tables whose timestamps follow the rows).
struct ValSum {
  uint64_t min = 0, max = 0;
  bool known = false, some = false, nulls = false;  // some: a row not NULL
};
using ValSums = std::vector<std::vector<ValSum>>;  // per column, per run

struct SegMeta {
  Footer f;
  uint64_t docs_end = 0, tid_bits = 0;
  std::vector<uint64_t> val_at, val_bits;  // per filter column (version 4)
  std::vector<uint64_t> chunk_keys;
  // Filled in by the segment's readers as queries need them (shared: the
  // meta is, but a run's summary never changes once made).
  std::shared_ptr<ValSums> val_sums;
};

class PageCache {
 public:
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static PageCache& instance();
  // Drops every page when the bound shrinks (once no page is pinned).
  void configure(size_t bytes);
  // The page's bytes pinned in *slot (unpin it when done), or nullptr.
  const unsigned char* get(const PageKey& k, uint32_t* slot);
  // Takes the page and pins it, returning its slot; kNoSlot (the page is
  // given back in `page`) when it is not kept: no room, or a bound of 0.
  uint32_t put(const PageKey& k, std::unique_ptr<unsigned char[]>& page, size_t page_bytes);
  void unpin(uint32_t slot);
  size_t pages() const;
  std::shared_ptr<const SegMeta> meta(const SegKey& k) const;
  void put_meta(const SegKey& k, std::shared_ptr<const SegMeta> m);

 private:
  struct Slot {
    PageKey key;
    std::unique_ptr<unsigned char[]> page;
    uint32_t pins;
    bool ref;
  };
  void clear();
  size_t bytes_ = 0, slot_bytes_ = 0;
  uint64_t pinned_ = 0;   // pins over every slot
  bool clear_pending_ = false;  // a shrink waits for the last unpin
  absl::flat_hash_map<PageKey, size_t> where_;
  absl::flat_hash_map<SegKey, std::shared_ptr<const SegMeta>> metas_;
  std::vector<Slot> slots_;
  size_t hand_ = 0;
};

// Whether the reader's pages may be cached (its relation is named).
inline bool cacheable(const scipis_am_reader& rd) {
  return rd.cache_rel[0] != 0 || rd.cache_rel[1] != 0 || rd.cache_rel[2] != 0;
}

}  // namespace scipis::am
