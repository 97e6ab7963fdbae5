// Merging sources into one segment: rows concatenated in source order
// minus the dead ones, each term's postings renumbered and joined.
#include <algorithm>
#include <queue>

#include "am/am_merge.h"
#include "am/seg_writer.h"
#include "util/error.h"

namespace scipis::am {

std::string merge_sources(std::vector<std::unique_ptr<Source>>& sources,
                          const uint64_t* dead, size_t ndead, Footer* stats) {
  std::vector<DocEntry> docs;
  std::vector<std::vector<uint32_t>> remap(sources.size());
  constexpr uint32_t kGone = UINT32_MAX;
  for (size_t s = 0; s < sources.size(); s++) {
    const uint64_t n = sources[s]->stats().ndocs;
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
    }
  }
  if (docs.empty()) {
    if (stats) *stats = Footer{};
    return {};
  }
  SegmentWriter w(std::move(docs));
  // The next term of each source, smallest first.
  std::vector<std::string> term(sources.size());
  std::vector<TermPostings> post(sources.size());
  using Next = std::pair<std::string_view, size_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> next;
  for (size_t s = 0; s < sources.size(); s++)
    if (sources[s]->next_term(term[s], post[s])) next.push({term[s], s});
  std::vector<uint32_t> ords, tfs;
  std::string cur;
  while (!next.empty()) {
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
      for (size_t i = 0; i < p.ords.size(); i++) {
        if (p.ords[i] >= remap[s].size()) fail_corrupt("index", "posting past the last row");
        const uint32_t o = remap[s][p.ords[i]];
        if (o == kGone) continue;
        ords.push_back(o);
        tfs.push_back(p.tfs[i]);
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

}  // namespace scipis::am
