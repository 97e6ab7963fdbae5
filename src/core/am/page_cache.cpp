#include "am/page_cache.h"

namespace scipis::am {

PageCache& PageCache::instance() {
  static PageCache* c = new PageCache();  // never destroyed: used until exit
  return *c;
}

void PageCache::configure(size_t bytes) {
  if (bytes < bytes_) {
    metas_.clear();
    where_.clear();
    slots_.clear();
    hand_ = 0;
  }
  bytes_ = bytes;
}

PageBytes PageCache::get(const PageKey& k) {
  auto it = where_.find(k);
  if (it == where_.end()) return nullptr;
  Slot& s = slots_[it->second];
  s.ref = true;
  return s.page;
}

void PageCache::put(const PageKey& k, PageBytes page, size_t page_bytes) {
  if (page_bytes == 0 || bytes_ < page_bytes || where_.contains(k)) return;
  if (slot_bytes_ != page_bytes) {
    where_.clear();
    slots_.clear();
    hand_ = 0;
    slot_bytes_ = page_bytes;
  }
  if (slots_.size() < bytes_ / page_bytes) {
    where_.emplace(k, slots_.size());
    slots_.push_back({k, std::move(page), false});
    return;
  }
  // CLOCK: a page used since the hand last passed gets another round.
  while (slots_[hand_].ref) {
    slots_[hand_].ref = false;
    hand_ = (hand_ + 1) % slots_.size();
  }
  Slot& s = slots_[hand_];
  where_.erase(s.key);
  s = Slot{k, std::move(page), false};
  where_.emplace(k, hand_);
  hand_ = (hand_ + 1) % slots_.size();
}

std::shared_ptr<const SegMeta> PageCache::meta(const SegKey& k) const {
  auto it = metas_.find(k);
  return it == metas_.end() ? nullptr : it->second;
}

void PageCache::put_meta(const SegKey& k, std::shared_ptr<const SegMeta> m) {
  if (bytes_ == 0) return;
  // A few hundred bytes each; past this many segments, start over.
  if (metas_.size() >= 4096) metas_.clear();
  metas_[k] = std::move(m);
}

size_t PageCache::pages() const {
  return slots_.size();
}

}  // namespace scipis::am
