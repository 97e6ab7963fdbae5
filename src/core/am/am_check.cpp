// scipis_index_check's engine half: every entry's terms folded into an
// order-free fingerprint, read back from the postings (inverted) or from a
// value (forward), so the C side can compare rows with entries by TID.
#include <algorithm>
#include <cstdlib>
#include <functional>

#include "am/am_query.h"
#include "util/door.h"
#include "util/error.h"

namespace scipis::am {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t term_print(std::string_view term, uint32_t tf) {
  return mix(std::hash<std::string_view>{}(term) ^ mix(tf));
}

// A row's filter values, folded in with their columns.
uint64_t vals_print(uint32_t n, const uint64_t* v, const uint8_t* nulls) {
  uint64_t p = 0;
  for (uint32_t c = 0; c < n; c++) p += mix(mix(0x5ca1ab1e00000000ull | c) ^ (nulls[c] ? ~0ull : mix(v[c])));
  return p;
}

}  // namespace
}  // namespace scipis::am

using namespace scipis;
using namespace scipis::am;

extern "C" int scipis_am_check_entries(const scipis_am_view* view, const scipis_am_reader* rd,
                                       scipis_am_check_entry** entries, size_t* n,
                                       scipis_error* err) {
  *entries = nullptr;
  *n = 0;
  return guarded(err, [&] {
    std::vector<scipis_am_check_entry> out;
    auto sources = open_view(*view, *rd);
    for (size_t s = 0; s < sources.size(); s++) {
      Source& src = *sources[s];
      const Footer f = src.stats();
      const std::string what = s < static_cast<size_t>(view->nsegs)
                                   ? "segment " + std::to_string(view->segs[s].id)
                                   : std::string("pending list");
      std::vector<uint64_t> print(f.ndocs, 0), sum(f.ndocs, 0);
      std::string term;
      TermPostings p;
      uint64_t terms = 0;
      while (src.next_term(term, p)) {
        terms++;
        if (p.ords.size() != p.df) fail_corrupt(what, "term \"" + term + "\": df disagrees with its postings");
        for (size_t i = 0; i < p.ords.size(); i++) {
          if (p.ords[i] >= f.ndocs || (i > 0 && p.ords[i] <= p.ords[i - 1]))
            fail_corrupt(what, "term \"" + term + "\": postings out of order");
          print[p.ords[i]] += term_print(term, p.tfs[i]);
          sum[p.ords[i]] += p.tfs[i];
        }
      }
      if (terms != f.nterms) fail_corrupt(what, "term count disagrees with the dictionary");
      uint64_t counted = 0, tokens = 0;
      for (uint64_t o = 0; o < f.ndocs; o++) {
        const DocEntry d = src.doc(static_cast<uint32_t>(o));
        const uint64_t len = d.len == kLenNull ? 0 : d.len;
        if (sum[o] != len)
          fail_corrupt(what, "row " + std::to_string(o) + ": length disagrees with its postings");
        if (len > 0) counted++;
        tokens += len;
        if (const uint32_t nv = src.nvals()) {
          uint64_t v[kMaxVals];
          uint8_t nulls[kMaxVals];
          src.vals(static_cast<uint32_t>(o), v, nulls);
          print[o] += vals_print(nv, v, nulls);
        }
        out.push_back({d.tid, print[o], d.len});
      }
      if (counted != f.counted || tokens != f.tokens)
        fail_corrupt(what, "statistics disagree with the rows");
    }
    std::sort(out.begin(), out.end(),
              [](const scipis_am_check_entry& a, const scipis_am_check_entry& b) { return a.tid < b.tid; });
    auto* mem = static_cast<scipis_am_check_entry*>(
        std::malloc(sizeof(scipis_am_check_entry) * (out.empty() ? 1 : out.size())));
    if (!mem) throw std::bad_alloc();
    std::copy(out.begin(), out.end(), mem);
    *entries = mem;
    *n = out.size();
  });
}

extern "C" int scipis_am_value_fingerprint(const char* text, size_t len, int is_null,
                                           const scipis_am_vals* vals, const unsigned char delimiter[256],
                                           scipis_am_check_entry* out, scipis_error* err) {
  return guarded(err, [&] {
    MemIndex one;
    Tokenizer tok(delimiter);
    one.add_text(tok, 0, text, len, is_null != 0);
    uint64_t print = 0;
    std::string term;
    TermPostings p;
    while (one.next_term(term, p)) print += term_print(term, p.tfs[0]);
    if (vals && vals->n) {
      if (vals->n > kMaxVals) fail(SCIPIS_E_INVALID, "too many filter columns");
      print += vals_print(vals->n, vals->keys, vals->nulls);
    }
    out->tid = 0;
    out->fingerprint = print;
    out->len = one.doc(0).len;
  });
}
