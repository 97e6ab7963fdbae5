// The access method's engine tests: segments as pages of Payload bytes read
// through the callback the C side provides, and an index's view over them.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "scipis_engine.h"

namespace scipis::test {

template <uint32_t Payload>
struct AmPages {
  std::vector<std::string> segs;
  int reads = 0;
  static int read(void* ctx, const scipis_am_segment* seg, uint32_t page, unsigned char* dst,
                  scipis_error* err) {
    auto* p = static_cast<AmPages*>(ctx);
    p->reads++;
    const std::string& s = p->segs.at(seg->id);
    if (page >= seg->npages) {
      err->code = SCIPIS_E_CORRUPT;
      snprintf(err->message, sizeof(err->message), "page out of range");
      return -1;
    }
    std::memset(dst, 0, Payload);
    const size_t off = static_cast<size_t>(page) * Payload;
    std::memcpy(dst, s.data() + off, std::min<size_t>(Payload, s.size() - off));
    return 0;
  }
  scipis_am_segment add(std::string bytes) {
    scipis_am_segment seg{static_cast<uint32_t>(segs.size()), 0,
                          static_cast<uint32_t>((bytes.size() + Payload - 1) / Payload), bytes.size()};
    segs.push_back(std::move(bytes));
    return seg;
  }
  uint32_t rel[3] = {0, 0, 0};  // the page cache's name for these pages; 0s: no caching
  scipis_am_reader reader() { return scipis_am_reader{this, Payload, &AmPages::read, {rel[0], rel[1], rel[2]}}; }
};

// Segments and pending entries, as a view.
template <uint32_t Payload>
struct AmIndex {
  AmPages<Payload> pages;
  std::vector<scipis_am_segment> segs;
  std::vector<std::string> pending;
  std::vector<const unsigned char*> pend_ptr;
  std::vector<uint32_t> pend_len;
  scipis_am_view view() {
    pend_ptr.clear();
    pend_len.clear();
    for (auto& p : pending) {
      pend_ptr.push_back(reinterpret_cast<const unsigned char*>(p.data()));
      pend_len.push_back(static_cast<uint32_t>(p.size()));
    }
    return scipis_am_view{segs.data(), static_cast<int>(segs.size()), pend_ptr.data(), pend_len.data(),
                          pending.size()};
  }
};

inline std::string take_blob(scipis_am_blob* b) {
  size_t n;
  const unsigned char* d = scipis_am_blob_data(b, &n);
  std::string s(reinterpret_cast<const char*>(d), n);
  scipis_am_blob_free(b);
  return s;
}

}  // namespace scipis::test
