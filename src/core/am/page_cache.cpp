#include "am/page_cache.h"

#include "util/error.h"

namespace scipis::am {

PageCache& PageCache::instance() {
  static PageCache* c = new PageCache();  // never destroyed: used until exit
  return *c;
}

void PageCache::clear() {
  metas_.clear();
  where_.clear();
  slots_.clear();
  hand_ = 0;
  clear_pending_ = false;
}

void PageCache::configure(size_t bytes) {
  if (bytes < bytes_) {
    // Pinned pages are in a scan's hands: they go when it lets them go.
    if (pinned_ == 0)
      clear();
    else
      clear_pending_ = true;
  }
  bytes_ = bytes;
}

const unsigned char* PageCache::get(const PageKey& k, uint32_t* slot) {
  auto it = where_.find(k);
  if (it == where_.end()) return nullptr;
  Slot& s = slots_[it->second];
  s.ref = true;
  s.pins++;
  pinned_++;
  *slot = static_cast<uint32_t>(it->second);
  return s.page.get();
}

void PageCache::unpin(uint32_t slot) {
  if (slot >= slots_.size() || slots_[slot].pins == 0) fail(SCIPIS_E_INTERNAL, "page cache unpinned twice");
  slots_[slot].pins--;
  if (--pinned_ == 0 && clear_pending_) clear();
}

uint32_t PageCache::put(const PageKey& k, std::unique_ptr<unsigned char[]>& page, size_t page_bytes) {
  if (page_bytes == 0 || bytes_ < page_bytes || clear_pending_ || where_.contains(k)) return kNoSlot;
  if (slot_bytes_ != page_bytes) {
    if (pinned_ > 0) return kNoSlot;
    clear();
    slot_bytes_ = page_bytes;
  }
  size_t at;
  if (slots_.size() < bytes_ / page_bytes) {
    at = slots_.size();
    slots_.push_back({k, nullptr, 0, false});
  } else {
    // CLOCK: a page used since the hand last passed gets another round; a
    // pinned page is passed by (after two rounds with nothing to take, the
    // page is not kept).
    size_t seen = 0;
    while (slots_[hand_].ref || slots_[hand_].pins > 0) {
      if (++seen > 2 * slots_.size()) return kNoSlot;
      slots_[hand_].ref = false;
      hand_ = (hand_ + 1) % slots_.size();
    }
    at = hand_;
    where_.erase(slots_[at].key);
    slots_[at].key = k;
    hand_ = (hand_ + 1) % slots_.size();
  }
  Slot& s = slots_[at];
  s.page = std::move(page);
  s.pins = 1;
  s.ref = false;
  pinned_++;
  where_.emplace(k, at);
  return static_cast<uint32_t>(at);
}

std::shared_ptr<const SegMeta> PageCache::meta(const SegKey& k) const {
  auto it = metas_.find(k);
  return it == metas_.end() ? nullptr : it->second;
}

void PageCache::put_meta(const SegKey& k, std::shared_ptr<const SegMeta> m) {
  if (bytes_ == 0) return;
  // A few hundred bytes each, and 24 bytes per 4096 rows per filter column
  // once its runs are summarised (0.4% of the values' own bytes); past
  // this many segments, start over.
  if (metas_.size() >= 4096) metas_.clear();
  metas_[k] = std::move(m);
}

size_t PageCache::pages() const {
  return slots_.size();
}

}  // namespace scipis::am
