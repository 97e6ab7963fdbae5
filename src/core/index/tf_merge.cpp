#include "index/tf_merge.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "index/postings_codec.h"
#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {

namespace {

// One input's split, read a group at a time.
class SplitCursor {
 public:
  SplitCursor(const TfMeta* m, const std::string* path) : m_(m), path_(path) { fill(); }
  bool done() const { return at_ == buf_.size(); }
  const std::string& term() const { return buf_[at_].first; }
  const TermRef& ref() const { return buf_[at_].second; }
  void next() {
    if (++at_ < buf_.size()) return;  // a group's order is checked as it is decoded
    // Across groups, here.
    last_.swap(buf_.back().first);
    fill();
    if (!done() && !(last_ < term())) fail_corrupt(*path_ + " (dictionary)", "terms out of order");
  }

 private:
  void fill() {
    while (at_ == buf_.size() && g_ < m_->groups()) {
      buf_.clear();
      at_ = 0;
      m_->group_entries(g_++, buf_);
    }
  }
  const TfMeta* m_;
  const std::string* path_;
  size_t g_ = 0, at_ = 0;
  std::vector<std::pair<std::string, TermRef>> buf_;
  std::string last_;
};

// One split of every input in step: each next() the least term left and
// the inputs holding it, in input order.
class SplitMerge {
 public:
  SplitMerge(const std::vector<TfMergeInput>& in, size_t split) : in_(in) {
    for (const TfMergeInput& i : in) cursors_.emplace_back(i.splits[split], &i.data_path);
  }
  bool next() {
    for (size_t j : held_) cursors_[j].next();
    held_.clear();
    const std::string* least = nullptr;
    for (size_t j = 0; j < cursors_.size(); j++) {
      if (cursors_[j].done()) continue;
      const std::string& t = cursors_[j].term();
      if (!least || t < *least) {
        least = &t;
        held_.clear();
      }
      if (t == *least) held_.push_back(j);
    }
    if (!least) return false;
    term_.assign(*least);
    return true;
  }
  const std::string& term() const { return term_; }
  // The term's postings over every input holding it, seqs ascending (a
  // seq in two inputs, the document a flush cut, summed once).
  void postings(uint64_t seq_limit, std::vector<uint64_t>& seqs, std::vector<uint32_t>& tfs) {
    seqs.clear();
    tfs.clear();
    for (size_t j : held_) {
      const TermRef& r = cursors_[j].ref();
      const size_t from = seqs.size();
      if (r.len == 0) {
        if (r.seq >= seq_limit) fail_corrupt(in_[j].data_path, "posting names an unknown document");
        put(j, from, r.seq, r.tf, seqs, tfs);
        continue;
      }
      decoded_.clear();
      decode_postings(in_[j].data_path, in_[j].region(r), r, seq_limit, decoded_);
      for (const Posting& p : decoded_) put(j, from, p.seq, p.tf, seqs, tfs);
    }
  }

 private:
  void put(size_t j, size_t from, uint64_t seq, uint32_t tf, std::vector<uint64_t>& seqs,
           std::vector<uint32_t>& tfs) {
    if (!seqs.empty() && seq <= seqs.back()) {
      // Only an input's first posting may repeat the one before (a cut
      // document); anything else is out of order.
      if (seq != seqs.back() || seqs.size() != from)
        fail_corrupt(in_[j].data_path, "postings out of order across segments");
      tfs.back() += tf;
      return;
    }
    seqs.push_back(seq);
    tfs.push_back(tf);
  }
  const std::vector<TfMergeInput>& in_;
  std::vector<SplitCursor> cursors_;
  std::vector<size_t> held_;
  std::string term_;
  std::vector<Posting> decoded_;
};

// A term of the group being written.
struct Pending {
  std::string term;
  std::vector<uint64_t> seqs;
  std::vector<uint32_t> tfs;
};

}  // namespace

void merge_tf(const std::vector<TfMergeInput>& in, size_t splits, uint64_t seq_limit, const PathIndex* docs,
              OutBuffer& data, std::vector<OutBuffer>& metas, TfMetaWriter& meta) {
  // Postings are stored from the first seq any input holds (each input's
  // from its own first).
  uint64_t base_seq = UINT64_MAX, in_terms = 0, in_bytes = 0;
  for (const TfMergeInput& i : in) {
    if (i.splits.size() != splits)
      fail(SCIPIS_E_INTERNAL, "TF merge input of %zu splits, not %zu", i.splits.size(), splits);
    in_bytes += i.data_bytes;
    for (const TfMeta* m : i.splits)
      if (m->size()) {
        base_seq = std::min(base_seq, m->base());
        in_terms += m->size();
      }
  }
  if (base_seq == UINT64_MAX) base_seq = 0;
  std::vector<size_t> count(splits, 0), bytes(splits, 0);
  // The data grows as needed (the regions are about as large as the
  // inputs'), a group's room made before it is written.
  data.reset(kHeaderSize + in_bytes + in_bytes / 4 + 4096);
  size_t used = kHeaderSize;
  auto room = [&](size_t need) {
    if (used + need <= data.size()) return;
    OutBuffer bigger(std::max(2 * data.size(), used + need));
    std::memcpy(bigger.data(), data.data(), used);
    data = std::move(bigger);
  };
  uint64_t blocks = 0;
  meta.reset(static_cast<size_t>(in_terms), static_cast<size_t>(8 * in_terms));
  auto len_of = [docs](uint64_t seq) { return docs ? docs->tokens_of(seq) : 0; };
  // Two groups' terms, one being written while the last one's last term
  // stays where the dictionary's notes read it from.
  std::array<std::array<Pending, kTermGroup>, 2> group;
  size_t parity = 0;
  // A split's dfs, and its terms that may be hot (a region of 32-bit df
  // and length): which are is known once every df is.
  std::vector<uint64_t> dfs;
  struct Candidate {
    uint64_t offset;
    uint32_t len, df, group;
    size_t term_at, term_len;
  };
  std::vector<Candidate> candidates;
  std::string candidate_bytes;
  for (size_t s = 0; s < splits; s++) {
    meta.begin_split();
    dfs.clear();
    candidates.clear();
    candidate_bytes.clear();
    SplitMerge sm(in, s);
    bool more = sm.next();
    for (uint32_t gi = 0; more; gi++) {
      std::array<Pending, kTermGroup>& g = group[parity];
      parity ^= 1;
      size_t n = 0, need = 4;
      for (; n < kTermGroup && more; n++) {
        g[n].term.assign(sm.term());
        sm.postings(seq_limit, g[n].seqs, g[n].tfs);
        const size_t d = g[n].seqs.size();
        dfs.push_back(d);
        bytes[s] += g[n].term.size();
        need += 63 + 12 * d + d / kBlockPostings * 49;  // data_reserve's share of a term
        more = sm.next();
      }
      room(need);
      char* const base = data.data();
      char* out = base + used;
      // Small regions, their crc, then large ones.
      meta.add_group(static_cast<uint64_t>(out - base));
      char* const span = out;
      uint64_t code[kTermGroup], x[kTermGroup];
      for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
          meta.set_small_bytes(static_cast<uint64_t>(out - span));
          if (out != span) out = write_u32(out, crc32c(span, static_cast<size_t>(out - span)));
        }
        for (size_t j = 0; j < n; j++) {
          const Pending& p = g[j];
          const size_t d = p.seqs.size();
          if (d == 1) {
            // A term of one document: its posting sits in the entry.
            if (pass == 0) {
              code[j] = uint64_t{p.tfs[0]} << 1 | 1;
              x[j] = p.seqs[0] - base_seq;
            }
            continue;
          }
          if ((d <= kSmallRegion) != (pass == 0)) continue;
          char* const start = out;
          out = pass == 0 ? write_small_region(out, p.seqs.data(), p.tfs.data(), d, base_seq)
                          : write_region(out, p.seqs.data(), p.tfs.data(), d, base_seq, len_of);
          code[j] = uint64_t{d} << 1;
          x[j] = static_cast<uint64_t>(out - start);
          blocks++;
          // (A hot entry holds a 32-bit df and length.)
          if (d <= UINT32_MAX && static_cast<size_t>(out - start) <= UINT32_MAX) {
            candidates.push_back(Candidate{static_cast<uint64_t>(start - base), static_cast<uint32_t>(out - start),
                                           static_cast<uint32_t>(d), gi, candidate_bytes.size(), p.term.size()});
            candidate_bytes.append(p.term);
          }
        }
      }
      used = static_cast<size_t>(out - base);
      for (size_t j = 0; j < n; j++) meta.add_entry(g[j].term, j == 0, code[j], x[j]);
    }
    const uint64_t hot_from = hot_df([&](size_t i) { return dfs[i]; }, dfs.size());
    for (const Candidate& c : candidates)
      if (c.df >= hot_from)
        meta.add_hot(std::string_view(candidate_bytes).substr(c.term_at, c.term_len), c.offset, c.len, c.df,
                     c.group);
    count[s] = dfs.size();
  }
  meta.finish(splits, count.data(), bytes.data(), base_seq, metas);
  seal_tf_data(data, used, blocks);
}

}  // namespace scipis
