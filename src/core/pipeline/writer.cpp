// A writer's work on the indexers' flushes (Pipeline::WriterRun): on its own
// thread, fed by the writers' queue, or on the thread of a small refresh
// that runs every stage itself (Pipeline::run_here).
#include "index/segment_format.h"
#include "index/segment_pack.h"
#include "pipeline/stages.h"
#include "util/fileio.h"

namespace scipis {

void Pipeline::WriterRun::put(const std::string& path, std::string_view data) {
  if (cfg_.opts.direct_writes && data.size() >= kDirectWriteMin)
    write_file_direct(path, data, bounce_);
  else
    write_file_durable(path, data, false);
  written_.push_back(path);
  if (cfg_.marks) unsynced_.push_back(path);
}

void Pipeline::WriterRun::write_marks() {
  for (const auto& path : unsynced_) fsync_file(path);
  unsynced_.clear();
  for (const auto& [path, mark] : pending_) {
    write_file_durable(path, mark.encode(), false);
    written_.push_back(path);
    if (cfg_.stop_after_marks && ++p_.marks_written_ >= cfg_.stop_after_marks) p_.stop();
  }
  pending_.clear();
  last_marks_ = std::chrono::steady_clock::now();
}

void Pipeline::WriterRun::take(FlushJob& job) {
  const std::string fdir = cfg_.gen_dir + "/" + file_dir(job.ref.indexer) + "/";
  SegmentParts parts{job.tf_data.view(), {}, job.file_data, {}, job.path_trigrams};
  for (const auto& m : job.tf_meta) parts.tf_meta.push_back(m.view());
  for (const auto& m : job.file_meta) parts.file_meta.push_back(m);
  put_segment(cfg_.gen_dir, parts, cfg_.pack_segments, &job.ref,
              [&](const std::string& path, std::string_view data) {
                if (!cfg_.defer_packs || !job.ref.packed) return put(path, data);
                std::lock_guard<std::mutex> lk(p_.mu_);
                p_.deferred_.push_back({job.ref.indexer, job.ref.seg, path, std::string(data)});
              });
  if (cfg_.marks) {
    SegmentMark mark;
    mark.ref = job.ref;
    mark.partial = job.partial;
    mark.next_seq = job.next_seq;
    mark.files = job.files;
    mark.bytes = job.bytes;
    mark.tokens = job.tokens;
    mark.docs_with_tokens = job.docs_with_tokens;
    mark.sketch = std::move(job.sketch);
    pending_.emplace_back(fdir + seg_mark(job.ref.seg), std::move(mark));
    if (cfg_.stop_after_marks ||
        std::chrono::steady_clock::now() - last_marks_ >= std::chrono::seconds(1))
      write_marks();
  }
  {
    std::lock_guard<std::mutex> lk(p_.mu_);
    p_.segments_.push_back(job.ref);
    if (job.kept) p_.kept_docs_.push_back(std::move(job.kept));
  }
  // Back to the flushing indexer's node, whose memory they are.
  const int node = p_.plan_.indexer_node[job.ref.indexer];
  std::lock_guard<std::mutex> lk(p_.spare_mu_);
  auto& spares = p_.spare_buffers_[static_cast<size_t>(node)];
  if (spares.size() < p_.plan_.on_node(NumaRole::kIndexer, node).size())
    spares.push_back(FlushBuffers{std::move(job.tf_data), std::move(job.tf_meta)});
}

void Pipeline::WriterRun::finish() {
  if ((p_.stop_.load() || p_.paused_.load()) && !pending_.empty() && !cfg_.stop_after_marks)
    write_marks();
  for (const auto& path : written_) {
    if (p_.stop_.load(std::memory_order_relaxed)) return;
    fsync_file(path);
  }
}

void Pipeline::writer_loop(int id) {
  place(NumaRole::kWriter, id, plan_.writer_node[static_cast<size_t>(id)]);
  WriterRun run(*this);
  while (auto job = to_writer_.pop()) run.take(*job);
  run.finish();
}

}  // namespace scipis
