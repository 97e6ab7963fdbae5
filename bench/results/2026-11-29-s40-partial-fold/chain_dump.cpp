// A path's documents (chain members or not): where each lies, its length,
// its postings' sum; the chain's links with their retractions.
#include <cstdio>
#include <string>
#include <vector>
#include "index/segment_format.h"
#include "index/tfidf_index.h"
#include "query/collection.h"
using namespace scipis;
int main(int argc, char** argv) {
  Collection c(argv[1]);
  const std::string want = argv[2];
  const uint32_t sf = c.manifest().split_factor;
  for (uint32_t i = 0; i < c.manifest().indexers; i++) {
    IndexerState& ix = c.indexer(i);
    std::printf("indexer %u: docs %llu segments:", i, (unsigned long long)ix.docs());
    for (size_t j = 0; j < ix.segs.size(); j++)
      std::printf(" [%zu seg %u first %llu docs %llu run %lld]", j, ix.segs[j]->ref.seg,
                  (unsigned long long)ix.first[j], (unsigned long long)ix.segs[j]->ref.docs,
                  (long long)ix.segs[j]->ref.run_started_ns);
    std::printf("\n");
    std::vector<uint64_t> sum(ix.docs(), 0);
    std::vector<std::vector<size_t>> in(ix.docs());
    for (size_t j = 0; j < ix.segs.size(); j++) {
      SegmentState& s = *ix.segs[j];
      std::string data;
      c.read_tf_data(s, data);
      std::vector<Posting> ps;
      for (uint32_t sp = 0; sp < sf; sp++)
        for (auto& [term, ref] : c.tf_meta(s, sp).all()) {
          ps.clear();
          if (ref.len == 0) ps.push_back({ref.seq, ref.tf});
          else decode_postings("x", region_in("x", std::string_view(data).substr(ref.read_offset(), ref.read_len()), ref), ref, ix.docs(), ps);
          for (const Posting& p : ps) {
            sum[p.seq] += p.tf;
            if (in[p.seq].empty() || in[p.seq].back() != j) in[p.seq].push_back(j);
          }
        }
      const FileBlocks& fb = c.files(s);
      DocInfo recs[kFileBlock];
      size_t ends[kFileBlock];
      std::string rp;
      for (size_t b = 0; b < fb.blocks(); b++) {
        rp.clear();
        fb.decode(b, recs, rp, ends);
        for (size_t r = 0, at = 0; r < fb.records_in(b); at = ends[r++]) {
          const std::string p = rp.substr(at, ends[r] - at);
          if (p.find(want) == std::string::npos) continue;
          const uint64_t q = ix.first[j] + b * kFileBlock + r;
          std::printf("  doc %u/%llu in seg#%zu: size %llu tokens %llu ctime %lld chain %lld dead %d\n", i,
                      (unsigned long long)q, j, (unsigned long long)recs[r].size,
                      (unsigned long long)recs[r].tokens, (long long)recs[r].ctime_ns,
                      (long long)c.chain_of(i, q), (int)ix.is_dead(q));
        }
      }
    }
    // The path's documents' postings sums, once every segment is read.
    for (size_t j = 0; j < ix.segs.size(); j++) {
      SegmentState& s = *ix.segs[j];
      const FileBlocks& fb = c.files(s);
      DocInfo recs[kFileBlock];
      size_t ends[kFileBlock];
      std::string rp;
      for (size_t b = 0; b < fb.blocks(); b++) {
        rp.clear();
        fb.decode(b, recs, rp, ends);
        for (size_t r = 0, at = 0; r < fb.records_in(b); at = ends[r++]) {
          const std::string p = rp.substr(at, ends[r] - at);
          if (p.find(want) == std::string::npos) continue;
          const uint64_t q = ix.first[j] + b * kFileBlock + r;
          std::printf("  sum %u/%llu = %llu (record %llu) postings in segs:", i, (unsigned long long)q,
                      (unsigned long long)sum[q], (unsigned long long)recs[r].tokens);
          for (size_t x : in[q]) std::printf(" %zu", x);
          std::printf("\n");
        }
      }
    }
  }
  for (size_t ch = 0; ch < c.chains().size(); ch++) {
    const Chain& k = c.chains()[ch];
    std::printf("chain %zu tokens %llu:", ch, (unsigned long long)k.tokens);
    for (const DocId& d : k.members) std::printf(" %u/%llu", d.indexer, (unsigned long long)d.seq);
    std::printf(" retract %zu\n", k.retract.size());
  }
}
