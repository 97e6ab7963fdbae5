// Merging sources into one segment: rows concatenated in source order
// minus the dead ones, each term's postings renumbered and joined.
#include <algorithm>
#include <cstring>
#include <queue>

#include "am/am_merge.h"
#include "am/seg_reader.h"
#include "am/seg_writer.h"
#include "util/error.h"

namespace scipis::am {

std::string merge_sources(std::vector<std::unique_ptr<Source>>& sources,
                          const uint64_t* dead, size_t ndead, Footer* stats,
                          const std::atomic<bool>* stop, size_t expect_bytes) {
  std::vector<DocEntry> docs;
  Vals vals;
  vals.ncols = sources.empty() ? 0 : sources[0]->nvals();
  for (auto& src : sources)
    if (src->nvals() != vals.ncols) fail_corrupt("index", "segments disagree on the filter columns");
  uint64_t v[kMaxVals];
  uint8_t nulls[kMaxVals];
  std::vector<std::vector<uint32_t>> remap(sources.size());
  std::vector<uint32_t> first(sources.size());
  constexpr uint32_t kGone = UINT32_MAX;
  for (size_t s = 0; s < sources.size(); s++) {
    const uint64_t n = sources[s]->stats().ndocs;
    first[s] = static_cast<uint32_t>(docs.size());
    remap[s].resize(n);
    for (uint64_t o = 0; o < n; o++) {
      const DocEntry d = sources[s]->doc(static_cast<uint32_t>(o));
      if (std::binary_search(dead, dead + ndead, d.tid)) {
        remap[s][o] = kGone;
        continue;
      }
      if (docs.size() >= UINT32_MAX - 1) fail(SCIPIS_E_INTERNAL, "too many rows in one segment");
      remap[s][o] = static_cast<uint32_t>(docs.size());
      docs.push_back(d);
      if (vals.ncols) {
        sources[s]->vals(static_cast<uint32_t>(o), v, nulls);
        vals.add(v, nulls);
      }
    }
  }
  if (docs.empty()) {
    if (stats) *stats = Footer{};
    return {};
  }
  SegmentWriter w(std::move(docs), expect_bytes, &vals);
  std::vector<uint64_t>().swap(vals.v);
  std::vector<uint8_t>().swap(vals.nulls);
  // The next term of each source, smallest first.
  std::vector<std::string> term(sources.size());
  std::vector<TermPostings> post(sources.size());
  using Next = std::pair<std::string_view, size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next;
  for (size_t s = 0; s < sources.size(); s++)
    if (sources[s]->next_term(term[s], post[s])) next.push({term[s], s});
  std::vector<uint32_t> ords, tfs;
  std::string cur;
  uint32_t terms = 0;
  while (!next.empty()) {
    // A build's last merge takes seconds: a cancel must not wait for it.
    if (stop && (++terms & 255) == 0 && stop->load(std::memory_order_relaxed))
      fail(SCIPIS_E_CANCELED, "scipis index merge stopped");
    cur.assign(next.top().first);
    ords.clear();
    tfs.clear();
    // Sources in order, so renumbered ordinals stay ascending.
    std::vector<size_t> with;
    while (!next.empty() && next.top().first == cur) {
      with.push_back(next.top().second);
      next.pop();
    }
    std::sort(with.begin(), with.end());
    for (size_t s : with) {
      const TermPostings& p = post[s];
      const size_t n = p.ords.size();
      if (n > 0 && p.ords[n - 1] >= remap[s].size()) fail_corrupt("index", "posting past the last row");
      if (ndead == 0) {
        // Nothing dropped: a source's rows follow the ones before it (the
        // table of new ordinals, read at random, cost a cache miss each).
        const uint32_t base = first[s];
        const size_t at = ords.size();
        ords.resize(at + n);
        for (size_t i = 0; i < n; i++) ords[at + i] = p.ords[i] + base;
        tfs.insert(tfs.end(), p.tfs.begin(), p.tfs.end());
      } else {
        for (size_t i = 0; i < n; i++) {
          const uint32_t o = remap[s][p.ords[i]];
          if (o == kGone) continue;
          ords.push_back(o);
          tfs.push_back(p.tfs[i]);
        }
      }
      if (sources[s]->next_term(term[s], post[s])) {
        if (term[s] <= cur) fail_corrupt("index", "dictionary out of order");
        next.push({term[s], s});
      }
    }
    w.term(cur, ords.data(), tfs.data(), ords.size());
  }
  std::string out = w.finish();
  if (stats) *stats = w.stats();
  return out;
}

namespace {

// A segment's bytes in memory, read as pages of this size (nothing cached).
constexpr uint32_t kMemPage = 64 << 10;

int read_mem_page(void* ctx, const scipis_am_segment* seg, uint32_t page, unsigned char* dst,
                  scipis_error*) {
  const std::string& s = *static_cast<const std::string*>(ctx);
  const uint64_t at = static_cast<uint64_t>(page) * kMemPage;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(kMemPage, seg->bytes - at));
  std::memcpy(dst, s.data() + at, n);
  std::memset(dst + n, 0, kMemPage - n);
  return 0;
}

}  // namespace

std::string merge_segments(const std::vector<std::string>& segs, std::unique_ptr<MemIndex> tail,
                           const std::atomic<bool>* stop) {
  std::vector<scipis_am_reader> readers(segs.size());
  std::vector<std::unique_ptr<Source>> sources;
  for (size_t i = 0; i < segs.size(); i++) {
    readers[i] = scipis_am_reader{const_cast<std::string*>(&segs[i]), kMemPage, &read_mem_page, {0, 0, 0}};
    const scipis_am_segment seg{static_cast<uint32_t>(i + 1), 0,
                                static_cast<uint32_t>((segs[i].size() + kMemPage - 1) / kMemPage),
                                segs[i].size()};
    sources.push_back(std::make_unique<PagedSegment>(readers[i], seg));
  }
  // About what the segments take, and what the rows in memory will.
  size_t expect = tail ? tail->bytes() / 2 : 0;
  for (const std::string& s : segs) expect += s.size();
  if (tail) sources.push_back(std::move(tail));
  return merge_sources(sources, nullptr, 0, nullptr, stop, expect);
}

}  // namespace scipis::am
