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
    last_.assign(buf_[at_].first);
    at_++;
    fill();
    // Groups are checked one by one; their order, here.
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

TfMergeStats merge_tf(const std::vector<TfMergeInput>& in, size_t splits, uint64_t seq_limit,
                      const PathIndex* docs, OutBuffer& data, std::vector<OutBuffer>& metas,
                      TfMetaWriter& meta) {
  for (const TfMergeInput& i : in)
    if (i.splits.size() != splits) fail(SCIPIS_E_INTERNAL, "TF merge input of %zu splits, not %zu", i.splits.size(), splits);
  // First every split's terms, term bytes and dfs: a split's hot df and
  // every buffer's size are needed before its first region.
  TfMergeStats st;
  std::vector<size_t> count(splits, 0), bytes(splits, 0);
  std::vector<std::vector<uint64_t>> dfs(splits);
  std::vector<uint64_t> seqs;
  std::vector<uint32_t> tfs;
  uint64_t base_seq = UINT64_MAX;
  for (size_t s = 0; s < splits; s++) {
    SplitMerge sm(in, s);
    while (sm.next()) {
      sm.postings(seq_limit, seqs, tfs);
      dfs[s].push_back(seqs.size());
      bytes[s] += sm.term().size();
      st.postings += seqs.size();
      base_seq = std::min(base_seq, seqs.front());
    }
    count[s] = dfs[s].size();
    st.terms += count[s];
  }
  if (st.terms == 0) base_seq = 0;
  size_t all_bytes = 0;
  for (size_t b : bytes) all_bytes += b;
  data.reset(data_reserve(st.terms, st.postings));
  char* const base = data.data();
  char* out = base + kHeaderSize;
  uint64_t blocks = 0;
  meta.reset(st.terms, all_bytes);
  auto len_of = [docs](uint64_t seq) { return docs ? docs->tokens_of(seq) : 0; };
  // Two groups' terms, one being written while the last one's last term
  // stays where the dictionary's notes read it from.
  std::array<std::array<Pending, kTermGroup>, 2> group;
  size_t parity = 0;
  for (size_t s = 0; s < splits; s++) {
    meta.begin_split();
    const std::vector<uint64_t>& df = dfs[s];
    const uint64_t hot_from = hot_df([&df](size_t i) { return df[i]; }, df.size());
    SplitMerge sm(in, s);
    size_t i = 0;
    bool more = sm.next();
    while (more) {
      std::array<Pending, kTermGroup>& g = group[parity];
      parity ^= 1;
      size_t n = 0;
      for (; n < kTermGroup && more; n++, i++) {
        g[n].term.assign(sm.term());
        sm.postings(seq_limit, g[n].seqs, g[n].tfs);
        if (i >= df.size() || g[n].seqs.size() != df[i])
          fail(SCIPIS_E_INTERNAL, "TF merge read a split twice differently");
        more = sm.next();
      }
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
          if (d >= hot_from && d <= UINT32_MAX && static_cast<size_t>(out - start) <= UINT32_MAX)
            meta.add_hot(p.term, static_cast<uint64_t>(start - base), static_cast<uint32_t>(out - start),
                         static_cast<uint32_t>(d));
        }
      }
      for (size_t j = 0; j < n; j++) meta.add_entry(g[j].term, j == 0, code[j], x[j]);
    }
    if (i != df.size()) fail(SCIPIS_E_INTERNAL, "TF merge read a split twice differently");
  }
  meta.finish(splits, count.data(), bytes.data(), base_seq, metas);
  seal_tf_data(data, static_cast<size_t>(out - base), blocks);
  return st;
}

}  // namespace scipis
