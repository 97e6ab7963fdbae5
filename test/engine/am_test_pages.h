// The access method's engine tests: segments as pages of Payload bytes read
// through the callback the C side provides, an index's view over them, and
// segments built through the pipeline.
#pragma once
#include <gtest/gtest.h>

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

// Segments built from n rows by `threads` indexers in `memory` bytes, rows
// holding nvals filter values: add(b, i, &err) adds row i (as
// scipis_am_build_add does, 1 asking for a segment to be taken first).
template <typename Add>
std::vector<std::string> build_segments(size_t n, int threads, uint64_t memory, uint32_t nvals, Add add,
                                        uint64_t* flushes = nullptr) {
  unsigned char delim[256];
  scipis_tokenizer_named("word", delim);
  scipis_error err;
  std::vector<std::string> segs;
  scipis_am_build* b = scipis_am_build_start(delim, threads, memory, nvals, &err);
  EXPECT_NE(b, nullptr) << err.message;
  if (!b) return segs;
  auto drain = [&](int timeout) {
    scipis_am_blob* blob;
    const int r = scipis_am_build_take(b, timeout, &blob, &err);
    EXPECT_GE(r, 0) << err.message;
    if (r == 1) segs.push_back(take_blob(blob));
    return r;
  };
  for (size_t i = 0; i < n; i++) {
    int rc;
    while ((rc = add(b, i, &err)) == 1) drain(5);
    EXPECT_EQ(rc, 0) << err.message;
  }
  int rc;
  while ((rc = scipis_am_build_finish_input(b, &err)) == 1) drain(5);
  EXPECT_EQ(rc, 0) << err.message;
  while (drain(50) != 2) {
  }
  if (flushes) *flushes = scipis_am_build_flushes(b);
  scipis_am_build_free(b);
  return segs;
}

}  // namespace scipis::test
