// An indexer's work on what the readers send (Pipeline::IndexerRun): on its
// own thread, fed by its queue, or on the thread of a small refresh that
// runs every stage itself (Pipeline::run_here).
#include <algorithm>

#include "pipeline/compact.h"
#include "pipeline/stages.h"
#include "util/error.h"

namespace scipis {

namespace {
// Table bytes per byte a refresh on one thread reads: room for a new term
// every few bytes; a table that fills flushes, as any does.
constexpr uint64_t kHereTableFactor = 32;
constexpr uint64_t kHereTableMin = 64u << 10;
}  // namespace

uint64_t Pipeline::IndexerRun::first_budget(const Pipeline& p, int id) {
  const auto& o = p.cfg_.opts;
  uint64_t budget = p.cfg_.tfidf_start ? std::min<uint64_t>(p.cfg_.tfidf_start, o.tfidf_index_size)
                                       : o.tfidf_index_size;
  // A refresh on one thread knows what it reads (an append's KiB): a table
  // for that, not one of half a MiB whose 7,511 slots (240 KB) each append
  // cleared.
  if (p.here_writer_)
    budget = std::min(budget, std::max(kHereTableMin, kHereTableFactor * p.found_.to_read.load()));
  const auto& resume = p.cfg_.resume;
  // Room for a segment taken in as a merge makes it: else its documents
  // alone filled a refresh's small table, and the two segments written
  // were merged after every refresh.
  if (resume && static_cast<size_t>(id) < resume->indexers.size()) {
    const auto& r = resume->indexers[static_cast<size_t>(id)];
    uint64_t taken = 0;
    for (const SegmentRef& s : r.absorb) taken += segment_bytes(s);
    // Kept documents say what they need (far less than their bytes
    // suggest: each small segment carries its code tables), else a merge's
    // rule; twice that, for the table's load limit and the budget's share.
    const uint64_t need = r.absorb_table ? 2 * r.absorb_table : kMergeTableFactor * taken;
    if (taken) budget = std::min<uint64_t>(o.tfidf_index_size, std::max(budget, need));
  }
  return budget;
}

Pipeline::IndexerRun::IndexerRun(Pipeline& p, int id)
    : p_(p),
      id_(id),
      node_(p.plan_.indexer_node[static_cast<size_t>(id)]),
      o_(p.cfg_.opts),
      budget_(first_budget(p, id)),
      tf_(budget_, o_.index_depth, p.sketches_[static_cast<size_t>(id)].get()),
      paths_(o_.path_index_size),
      keep_(p.here_writer_ != nullptr && p.cfg_.rules.known != nullptr) {
  const auto& resume = p.cfg_.resume;
  if (resume && static_cast<size_t>(id) < resume->indexers.size()) {
    const auto& r = resume->indexers[static_cast<size_t>(id)];
    absorb_ = !r.absorb.empty();
    seg_no_ = r.segs;
    next_seq_ = first_seq_ = r.next_seq;
    my_files_ = r.files;
    my_bytes_ = r.bytes;
    my_tokens_ = r.tokens;
    my_with_tokens_ = r.docs_with_tokens;
  }
}

void Pipeline::IndexerRun::flush(bool last) {
  FlushJob job;
  job.ref.indexer = static_cast<uint32_t>(id_);
  job.ref.seg = seg_no_++;
  job.ref.first_seq = first_seq_;
  job.ref.docs = paths_.count();
  if (p_.cfg_.marks) {
    job.partial = in_doc_;
    job.next_seq = next_seq_;
    job.files = my_files_;
    job.bytes = my_bytes_;
    job.tokens = my_tokens_;
    job.docs_with_tokens = my_with_tokens_;
    job.sketch = p_.sketches_[static_cast<size_t>(id_)]->registers();
  }
  {
    std::lock_guard<std::mutex> lk(p_.spare_mu_);
    auto& spares = p_.spare_buffers_[static_cast<size_t>(node_)];
    if (!spares.empty()) {
      job.tf_data = std::move(spares.back().tf_data);
      job.tf_meta = std::move(spares.back().tf_meta);
      spares.pop_back();
    }
  }
  if (last && kept_ && kept_->count() == job.ref.docs) {
    kept_->ref = job.ref;
    job.kept = std::move(kept_);
  }
  // A segment before the last: what the next holds is no longer all kept.
  keep_ = keep_ && last;
  kept_.reset();
  tf_.serialise(o_.split_factor, job.tf_data, job.tf_meta, &paths_);
  paths_.serialise(o_.split_factor, job.file_data, job.file_meta, &job.path_trigrams);
  size_t file_bytes = job.file_data.capacity() + job.path_trigrams.capacity();
  for (const auto& m : job.file_meta) file_bytes += m.capacity();
  job.file_bytes.set(file_bytes);
  if (!last) {
    budget_ = std::min<uint64_t>(4 * budget_, o_.tfidf_index_size);
    tf_.clear(budget_);
    paths_.clear();
    first_seq_ = next_seq_;
  }
  if (!p_.send_flush(std::move(job))) fail(SCIPIS_E_CANCELED, "indexing was cancelled");
}

// Before the first new document: the small last segments' documents,
// under their own numbers, as a merge would add them.
void Pipeline::IndexerRun::take_in() {
  const std::vector<std::shared_ptr<const AbsorbDocs>> taken =
      p_.cfg_.resume->indexers[static_cast<size_t>(id_)].absorb_docs();
  uint64_t count = 0;
  for (const auto& docs : taken) count += docs->count();
  if (taken.empty() || taken.front()->ref.first_seq + count != next_seq_ || first_seq_ != next_seq_)
    fail(SCIPIS_E_INTERNAL, "a refresh lost count of the documents it takes in");
  next_seq_ = first_seq_ = taken.front()->ref.first_seq;
  for (const auto& docs : taken)
    docs->each([&](const std::vector<std::string>& names, const AbsorbDocs::Doc& d) {
      if (d.info.seq != next_seq_)
        fail(SCIPIS_E_INTERNAL, "a refresh lost count of the documents it takes in");
      next_seq_++;  // as a new document's begins: a flush inside it is continued
      for (const auto& [term, n] : d.terms) {
        tf_.add(TermKey::of(names[term]), d.info.seq, n);
        if (++since_check_ % TfIdfIndex::kAddsPerFullCheck == 0 && tf_.full()) flush();
      }
      paths_.add(d.info, d.path);
      if (paths_.full() || tf_.full()) flush();
    });
  // The new segment's documents begin with these, kept, not copied.
  if (keep_) {
    kept_ = std::make_shared<AbsorbDocs>();
    kept_->before = taken;
  }
  {
    std::lock_guard<std::mutex> lk(p_.mu_);
    for (const auto& docs : taken) p_.absorbed_.push_back(docs->ref);
  }
  absorb_ = false;
}

// The block counter's distinct terms reach the index in batches whose
// lookups are worked ahead (TfIdfIndex::add_batch), so that their misses
// overlap.
void Pipeline::IndexerRun::add_counted(const char* base) {
  size_t batched = 0;
  auto add_batch = [&] {
    tf_.add_batch(batch_, counts_, batched, cur_.seq, [&] {
      if (++since_check_ % TfIdfIndex::kAddsPerFullCheck == 0 && tf_.full()) flush();
    });
    batched = 0;
  };
  counter_->drain(base, [&](const char* s, size_t n, uint64_t pre, uint64_t tail, uint64_t hash,
                            uint32_t count) {
    if (kept_) {  // (a flush in add_batch may give it up)
      auto [it, added] = kept_ids_.try_emplace(std::string(s, n), static_cast<uint32_t>(kept_->names.size()));
      if (added) kept_->names.push_back(it->first);
      kept_->docs.back().terms.emplace_back(it->second, count);
    }
    batch_[batched] = TermKey{s, n, pre, hash, nullptr, 0, tail};
    counts_[batched++] = count;
    if (batched == kBatch) add_batch();
  });
  add_batch();
}

// Tokens are counted in the block counter first. readable: the bytes from
// data on that may be read (the rest of the pool buffer).
void Pipeline::IndexerRun::index_bytes(unsigned char* data, size_t len, size_t readable) {
  if (!scratch_) {
    // A refresh on one thread reads a few KiB: a counter for that many
    // tokens, not one of 256 KiB cleared for them.
    int bits = 14;
    if (p_.here_writer_)
      while (bits > 8 && (uint64_t{1} << (bits + 1)) > p_.found_.to_read.load()) bits--;
    counter_ = std::make_unique<BlockCounter>(bits);
    // Written before it is read: no 330 KiB zeroed per indexer and refresh.
    scratch_ = std::make_unique_for_overwrite<ScanScratch>();
  }
  BlockCounter& counter = *counter_;
  const char* base = reinterpret_cast<const char*>(data);
  uint64_t tokens = 0;
  p_.tokenizer_.tokenize_block(data, len, readable, *scratch_, [&](BlockToken* t, size_t nt) {
    counter.add_tokens(base, t, nt, [&] { add_counted(base); });
    tokens += nt;
  });
  add_counted(base);
  cur_.tokens += tokens;
}

void Pipeline::IndexerRun::begin_kept(std::string_view path) {
  if (!keep_) return;
  if (!kept_) kept_ = std::make_shared<AbsorbDocs>();
  kept_->docs.push_back({DocInfo{}, std::string(path), {}});
}

// A reader that sees a stop leaves the file it reads unfinished: its
// number and postings are taken, its record never comes. A flush of what
// a stopped reader still sends would be marked whole, and a resume that
// kept it had a gap in its document numbers: an index read as damaged.
void Pipeline::IndexerRun::check_last_ended() {
  if (!in_doc_) return;
  if (p_.stopped()) fail(SCIPIS_E_CANCELED, "indexing was cancelled");
  fail(SCIPIS_E_INTERNAL, "indexer %d was given a file inside another", id_);
}

// A whole file's record is in: counted, and a flush when the tables are full.
void Pipeline::IndexerRun::done_file() {
  my_files_++;
  my_bytes_ += cur_.size;
  my_tokens_ += cur_.tokens;
  my_with_tokens_ += cur_.tokens != 0;
  if (paths_.full() || tf_.full() || (p_.cfg_.marks && tf_.nearly_full(kResumableFill))) flush();
}

void Pipeline::IndexerRun::take(ReadMsg& m) {
  if (m.node != node_) p_.cross_node_++;
  BufferPool& pool = *p_.pools_[static_cast<size_t>(m.node)];
  auto& totals = p_.totals_;
  switch (m.kind) {
    case ReadMsg::kBegin:
      check_last_ended();
      if (absorb_) take_in();
      cur_ = DocInfo::of(next_seq_++, 0, m.attrs);
      cur_racy_ = m.attrs.racy;
      cur_path_ = std::move(m.path);
      begin_kept(cur_path_);
      cur_append_ = std::move(m.append);
      in_doc_ = true;
      break;
    case ReadMsg::kBlock:
      index_bytes(m.data, m.len, static_cast<size_t>(m.buffer + pool.buffer_bytes() - m.data));
      pool.release(m.buffer);
      break;
    case ReadMsg::kEnd:
      cur_.size = m.size;
      cur_.tail = m.tail;
      if (kept_) kept_->docs.back().info = cur_;
      paths_.add(cur_, cur_path_);
      in_doc_ = false;
      if (cur_racy_) p_.note_racy(DocId{static_cast<uint32_t>(id_), cur_.seq});
      if (cur_append_) {
        // A link: the file is counted already; its length grows by the
        // link's tokens less the piece it counts again.
        const AppendRead& a = *cur_append_;
        const uint64_t again = std::min<uint64_t>(a.plan.retract.empty() ? 0 : 1, cur_.tokens);
        const uint64_t chain = a.chain_tokens + cur_.tokens - again;
        totals.tokens += cur_.tokens - again;
        if (a.chain_tokens == 0 && chain > 0) totals.docs_with_tokens++;
        {
          std::lock_guard<std::mutex> lk(p_.mu_);
          p_.links_.push_back(ChainLink{DocId{static_cast<uint32_t>(id_), cur_.seq}, a.root, chain,
                                        again ? a.plan.retract : std::string()});
        }
        cur_append_.reset();
        if (paths_.full() || tf_.full()) flush();
        break;
      }
      totals.files++;
      totals.tokens += cur_.tokens;
      if (cur_.tokens) totals.docs_with_tokens++;
      done_file();
      break;
    case ReadMsg::kFiles: {
      check_last_ended();
      // Each packed file is a document, as if it had come as Begin, one
      // block, End; the shared totals are added to once per pack.
      const FilePack& pack = *m.pack;
      unsigned char* area = pool.read_area(m.buffer);
      const unsigned char* end = m.buffer + pool.buffer_bytes();
      uint64_t tokens = 0, with_tokens = 0;
      if (absorb_) take_in();
      for (const PackedFile& f : pack.files) {
        cur_ = DocInfo::of(next_seq_++, f.len, f.attrs);
        in_doc_ = true;
        begin_kept(std::string_view(pack.paths).substr(f.path_off, f.path_len));
        if (f.len) index_bytes(area + f.off, f.len, static_cast<size_t>(end - (area + f.off)));
        if (kept_) kept_->docs.back().info = cur_;
        paths_.add(cur_, std::string_view(pack.paths).substr(f.path_off, f.path_len));
        in_doc_ = false;
        if (f.attrs.racy) p_.note_racy(DocId{static_cast<uint32_t>(id_), cur_.seq});
        tokens += cur_.tokens;
        with_tokens += cur_.tokens != 0;
        done_file();
      }
      totals.files += pack.files.size();
      totals.tokens += tokens;
      totals.docs_with_tokens += with_tokens;
      pool.release(m.buffer);
      break;
    }
  }
}

void Pipeline::indexer_loop(int id) {
  // Before the term table and arena are mapped: they come from this node.
  place(NumaRole::kIndexer, id, plan_.indexer_node[static_cast<size_t>(id)]);
  auto run = std::make_unique<IndexerRun>(*this, id);
  auto& q = *to_indexer_[static_cast<size_t>(id)];
  IndexerPicker& picker = *pickers_[static_cast<size_t>(plan_.indexer_node[static_cast<size_t>(id)])];
  while (auto m = q.pop()) {
    picker.room_made();
    run->take(*m);
  }
  if (stop_.load()) return;
  run->finish();
}

}  // namespace scipis
