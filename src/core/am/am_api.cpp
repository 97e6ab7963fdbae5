// The access method's door functions (scipis_engine.h).
#include <cstdlib>
#include <cstring>

#include "am/am_build.h"
#include "am/am_merge.h"
#include "am/am_query.h"
#include "am/page_cache.h"
#include "am/seg_reader.h"
#include "util/door.h"
#include "util/error.h"

using namespace scipis;
using namespace scipis::am;

struct scipis_am_blob {
  std::string bytes;
};
struct scipis_am_build {
  AmBuild b;
};
struct scipis_am_query {
  AmQuery q;
};

extern "C" {

scipis_am_blob* scipis_am_entry_encode(uint64_t tid, const char* text, size_t len, int is_null,
                                       const scipis_am_vals* vals, const unsigned char delimiter[256],
                                       scipis_error* err) {
  scipis_am_blob* out = nullptr;
  guarded(err, [&] {
    Tokenizer tok(delimiter);
    out = new scipis_am_blob{entry_encode(tok, tid, text, len, is_null != 0, vals ? vals->n : 0,
                                          vals ? vals->keys : nullptr, vals ? vals->nulls : nullptr)};
  });
  return out;
}

const unsigned char* scipis_am_blob_data(const scipis_am_blob* b, size_t* len) {
  *len = b->bytes.size();
  return reinterpret_cast<const unsigned char*>(b->bytes.data());
}

void scipis_am_blob_free(scipis_am_blob* b) { delete b; }

int scipis_am_entry_tid(const unsigned char* entry, size_t len, uint64_t* tid, scipis_error* err) {
  return guarded(err, [&] {
    const std::string_view e(reinterpret_cast<const char*>(entry), len);
    MemIndex check;  // the whole entry is checked, not just its head
    check.add_entry(e);
    *tid = entry_tid(e);
  });
}

int scipis_am_segment_tids(const scipis_am_reader* rd, const scipis_am_segment* seg,
                           uint64_t** tids, size_t* n, scipis_error* err) {
  *tids = nullptr;
  *n = 0;
  return guarded(err, [&] {
    PagedSegment s(*rd, *seg);
    const uint64_t count = s.stats().ndocs;
    uint64_t* out = static_cast<uint64_t*>(std::malloc(sizeof(uint64_t) * (count ? count : 1)));
    if (!out) throw std::bad_alloc();
    try {
      for (uint64_t i = 0; i < count; i++) out[i] = s.tid(static_cast<uint32_t>(i));
    } catch (...) {
      std::free(out);
      throw;
    }
    *tids = out;
    *n = count;
  });
}

int scipis_am_segment_stats(const scipis_am_reader* rd, const scipis_am_segment* seg,
                            scipis_am_stats* stats, scipis_error* err) {
  return guarded(err, [&] {
    PagedSegment s(*rd, *seg);
    const Footer& f = s.stats();
    *stats = scipis_am_stats{f.ndocs, f.counted, f.tokens, f.nterms};
  });
}

int scipis_am_merge(const scipis_am_view* view, const scipis_am_reader* rd, const uint64_t* dead,
                    size_t ndead, scipis_am_blob** out, scipis_am_stats* stats, scipis_error* err) {
  *out = nullptr;
  return guarded(err, [&] {
    auto sources = open_view(*view, *rd);
    Footer f;
    size_t expect = 0;
    for (int i = 0; i < view->nsegs; i++) expect += view->segs[i].bytes;
    for (uint64_t i = 0; i < view->npending; i++) expect += view->pending_len[i];
    std::string bytes = merge_sources(sources, dead, ndead, &f, nullptr, expect);
    *stats = scipis_am_stats{f.ndocs, f.counted, f.tokens, f.nterms};
    if (!bytes.empty()) *out = new scipis_am_blob{std::move(bytes)};
  });
}

scipis_am_build* scipis_am_build_start(const unsigned char delimiter[256], int threads,
                                       uint64_t memory_bytes, uint32_t nvals, scipis_error* err) {
  scipis_am_build* b = nullptr;
  guarded(err, [&] {
    if (nvals > kMaxVals) fail(SCIPIS_E_INVALID, "too many filter columns (at most %u)", kMaxVals);
    b = new scipis_am_build{AmBuild(delimiter, threads, memory_bytes, nvals)};
  });
  return b;
}

int scipis_am_build_add(scipis_am_build* b, uint64_t tid, const char* text, size_t len,
                        int is_null, const scipis_am_vals* vals, scipis_error* err) {
  int r = -1;
  if (guarded(err, [&] {
        if (tid > kMaxTid) fail(SCIPIS_E_INVALID, "row identifier out of range");
        r = b->b.add(tid, text, len, is_null != 0, vals ? vals->keys : nullptr,
                     vals ? vals->nulls : nullptr)
                ? 0
                : 1;
      }) != 0)
    return -1;
  return r;
}

int scipis_am_build_finish_input(scipis_am_build* b, scipis_error* err) {
  int r = -1;
  if (guarded(err, [&] { r = b->b.finish_input() ? 0 : 1; }) != 0) return -1;
  return r;
}

int scipis_am_build_take(scipis_am_build* b, int timeout_ms, scipis_am_blob** seg,
                         scipis_error* err) {
  *seg = nullptr;
  int r = -1;
  if (guarded(err, [&] {
        std::string s;
        r = b->b.take(timeout_ms, s);
        if (r == 1) *seg = new scipis_am_blob{std::move(s)};
      }) != 0)
    return -1;
  return r;
}

uint64_t scipis_am_build_flushes(const scipis_am_build* b) { return b->b.flushes(); }

void scipis_am_build_free(scipis_am_build* b) { delete b; }

scipis_am_query* scipis_am_query_new(const char* query, size_t len, const unsigned char delimiter[256],
                                     scipis_ranking ranking, scipis_match match, scipis_error* err) {
  scipis_am_query* q = nullptr;
  guarded(err, [&] {
    q = new scipis_am_query{AmQuery(delimiter, std::string_view(query, len), ranking, match)};
  });
  return q;
}

void scipis_am_query_free(scipis_am_query* q) { delete q; }

void scipis_am_cache_configure(size_t bytes) { scipis::am::PageCache::instance().configure(bytes); }

size_t scipis_am_cache_pages(void) { return scipis::am::PageCache::instance().pages(); }

int scipis_am_query_adopt(scipis_am_query* q, scipis_am_query* from, int take_opened,
                          scipis_error* err) {
  return guarded(err, [&] { q->q.adopt(from->q, take_opened != 0); });
}

double scipis_am_query_selectivity(const scipis_am_query* q) { return q->q.selectivity(); }

int scipis_am_query_prepare(scipis_am_query* q, const scipis_am_view* view, const scipis_am_reader* rd,
                            int for_scan, scipis_error* err) {
  return guarded(err, [&] { q->q.prepare(*view, *rd, for_scan != 0); });
}

int scipis_am_query_filter(scipis_am_query* q, const scipis_am_filter* f, scipis_error* err) {
  return guarded(err, [&] {
    if (f->col >= kMaxVals) fail(SCIPIS_E_INVALID, "filter column out of range");
    q->q.add_filter(Filter{f->col, f->lo, f->hi});
  });
}

int scipis_am_filter_tids(const scipis_am_view* view, const scipis_am_reader* rd,
                          const scipis_am_filter* filters, size_t nfilters, uint64_t** tids, size_t* n,
                          scipis_error* err) {
  *tids = nullptr;
  *n = 0;
  return guarded(err, [&] {
    Filters fs;
    for (size_t i = 0; i < nfilters; i++) fs.push_back(Filter{filters[i].col, filters[i].lo, filters[i].hi});
    std::vector<uint64_t> out = filtered_tids(*view, *rd, fs);
    auto* mem = static_cast<uint64_t*>(std::malloc(sizeof(uint64_t) * (out.empty() ? 1 : out.size())));
    if (!mem) throw std::bad_alloc();
    std::copy(out.begin(), out.end(), mem);
    *tids = mem;
    *n = out.size();
  });
}

int scipis_am_query_ranked(scipis_am_query* q, const scipis_am_view* view, const scipis_am_reader* rd,
                           uint64_t k, int has_after, double after_score, uint64_t after_tid,
                           const scipis_am_hit** hits, size_t* n, scipis_error* err) {
  *n = 0;
  return guarded(err, [&] {
    q->q.ranked(*view, *rd, k, has_after != 0, after_score, after_tid);
    *hits = q->q.hits.data();
    *n = q->q.hits.size();
  });
}

int scipis_am_query_rest(scipis_am_query* q, const scipis_am_view* view, const scipis_am_reader* rd,
                         uint64_t k, int has_after, int after_null, uint64_t after_tid,
                         const scipis_am_hit** hits, size_t* n, scipis_error* err) {
  *n = 0;
  return guarded(err, [&] {
    q->q.rest(*view, *rd, k, has_after != 0, after_null != 0, after_tid);
    *hits = q->q.hits.data();
    *n = q->q.hits.size();
  });
}

int scipis_am_query_matches(scipis_am_query* q, const scipis_am_view* view,
                            const scipis_am_reader* rd, const uint64_t** tids, size_t* n,
                            scipis_error* err) {
  *n = 0;
  return guarded(err, [&] {
    q->q.matches(*view, *rd);
    *tids = q->q.tids.data();
    *n = q->q.tids.size();
  });
}

int scipis_am_query_value(scipis_am_query* q, const char* text, size_t len, int* matches,
                          double* score, scipis_error* err) {
  return guarded(err, [&] {
    bool m;
    q->q.value(text, len, m, *score);
    *matches = m ? 1 : 0;
  });
}

}  // extern "C"
