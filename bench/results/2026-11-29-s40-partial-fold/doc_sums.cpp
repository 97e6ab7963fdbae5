// Every document's postings summed over all terms against its record's
// length: a posting counted twice shows as a sum above the length.
#include <cstdio>
#include <map>
#include <string>
#include <vector>
#include "index/segment_format.h"
#include "index/tfidf_index.h"
#include "query/collection.h"
#include "util/error.h"
using namespace scipis;
int main(int argc, char** argv) {
  Collection c(argv[1]);
  const uint32_t sf = c.manifest().split_factor;
  int bad = 0;
  std::vector<std::vector<uint64_t>> lens(c.manifest().indexers);
  for (uint32_t i = 0; i < c.manifest().indexers; i++) {
    IndexerState& ix = c.indexer(i);
    std::vector<uint64_t> sum(ix.docs(), 0), len(ix.docs(), 0);
    std::vector<std::string> path(ix.docs());
    for (size_t j = 0; j < ix.segs.size(); j++) {
      SegmentState& s = *ix.segs[j];
      std::string data;
      c.read_tf_data(s, data);
      std::vector<Posting> ps;
      for (uint32_t sp = 0; sp < sf; sp++)
        for (auto& [term, ref] : c.tf_meta(s, sp).all()) {
          ps.clear();
          if (ref.len == 0) ps.push_back({ref.seq, ref.tf});
          else {
            const uint64_t at = ref.read_offset(), n = ref.read_len();
            decode_postings("x", region_in("x", std::string_view(data).substr(at, n), ref), ref, ix.docs(), ps);
          }
          for (const Posting& p : ps) sum[p.seq] += p.tf;
        }
      const FileBlocks& fb = c.files(s);
      DocInfo recs[kFileBlock];
      size_t ends[kFileBlock];
      std::string rp;
      for (size_t b = 0; b < fb.blocks(); b++) {
        rp.clear();
        fb.decode(b, recs, rp, ends);
        for (size_t r = 0, at = 0; r < fb.records_in(b); at = ends[r++]) {
          const uint64_t q = ix.first[j] + b * kFileBlock + r;
          len[q] = recs[r].tokens;
          path[q] = rp.substr(at, ends[r] - at);
        }
      }
    }
    lens[i] = len;
    for (uint64_t q = 0; q < ix.docs(); q++)
      if (sum[q] != len[q]) {
        bad++;
        std::printf("indexer %u seq %llu %s: postings %llu record %llu chain %lld dead %d\n", i,
                    (unsigned long long)q, path[q].c_str(), (unsigned long long)sum[q], (unsigned long long)len[q],
                    (long long)c.chain_of(i, q), (int)ix.is_dead(q));
      }
  }
  for (size_t ch = 0; ch < c.chains().size(); ch++) {
    const Chain& k = c.chains()[ch];
    uint64_t t = 0;
    for (const DocId& d : k.members) t += lens[d.indexer][d.seq];
    t -= k.retract.size();
    if (t != k.tokens) {
      bad++;
      std::printf("chain %zu: members' lengths %llu, chain's %llu:", ch, (unsigned long long)t, (unsigned long long)k.tokens);
      for (const DocId& d : k.members) std::printf(" %u/%llu(%llu)", d.indexer, (unsigned long long)d.seq, (unsigned long long)lens[d.indexer][d.seq]);
      std::printf("\n");
    }
  }
  std::printf("%d documents differ\n", bad);
  return bad ? 1 : 0;
}
