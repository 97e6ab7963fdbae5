// The state an indexer and a writer keep while they work (indexer.cpp,
// writer.cpp): on threads of their own fed by queues, or all on the thread
// of a small refresh (Pipeline::run_here).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/block_counter.h"
#include "index/path_index.h"
#include "index/tfidf_index.h"
#include "pipeline/pipeline.h"
#include "util/fileio.h"

namespace scipis {

// pread from the page cache alone (indexer_reads.cpp): -1 with EAGAIN
// where it would wait for the device.
ssize_t read_cached(int fd, unsigned char* buf, size_t n, off_t off);
void count_read_later();
// A large file's block for an indexer that reads: from the page cache
// when it is there; else the device is started on the file's next bytes
// (up to limit), then the block is read, waiting.
ssize_t read_large(int fd, unsigned char* buf, size_t n, off_t off, uint64_t limit);
// Whether a large file's first page is in the page cache; if not, its
// reading is started.
bool starts_cached(int fd, uint64_t size);

class Pipeline::IndexerRun {
 public:
  IndexerRun(Pipeline& p, int id);
  void take(ReadMsg& m);
  // What is indexed and not yet flushed goes to the writers.
  void finish() {
    if (!tf_.empty() || !paths_.empty()) flush(true);
  }

 private:
  static uint64_t first_budget(const Pipeline& p, int id);
  // last: nothing follows, so the tables are not cleared (nor grown) for more.
  void flush(bool last = false);
  void take_in();
  void index_bytes(unsigned char* data, size_t len, size_t readable);
  void add_counted(const char* base);
  void done_file();
  // Before a document begins: the one before it ended.
  void check_last_ended();
  // A document begins (kept: its record and terms follow).
  void begin_kept(std::string_view path);


  Pipeline& p_;
  const int id_;
  const int node_;
  const scipis_options& o_;
  uint64_t budget_;
  bool absorb_ = false;  // segments to take in before the first new document
  TfIdfIndex tf_;
  PathIndex paths_;
  uint64_t next_seq_ = 0, first_seq_ = 0;
  uint32_t seg_no_ = 0;
  // This indexer's complete files so far, for the marks; in_doc: a file's
  // tokens are being added and its record is not yet.
  uint64_t my_files_ = 0, my_bytes_ = 0, my_tokens_ = 0, my_with_tokens_ = 0;
  bool in_doc_ = false;
  std::string cur_path_;
  DocInfo cur_{};
  bool cur_racy_ = false;  // FileAttrs::racy of the file being added
  std::unique_ptr<AppendRead> cur_append_;
  uint32_t since_check_ = 0;
  static constexpr size_t kBatch = 512;
  TermKey batch_[kBatch];
  uint32_t counts_[kBatch];
  // Made at the first file: an indexer a small refresh gives nothing
  // clears neither.
  std::unique_ptr<BlockCounter> counter_;
  std::unique_ptr<ScanScratch> scratch_;
  // A small refresh on one thread keeps the documents of its segment as
  // it adds them, for the next refresh to take in without decoding it;
  // given up at any flush but the last.
  bool keep_;
  std::shared_ptr<AbsorbDocs> kept_;
  absl::flat_hash_map<std::string, uint32_t> kept_ids_;
};

class Pipeline::WriterRun {
 public:
  explicit WriterRun(Pipeline& p) : p_(p), cfg_(p.cfg_) {}
  void take(FlushJob& job);
  // Stopped or paused: what is written is kept for a resume. Else every
  // file written is synced.
  void finish();

 private:
  void put(const std::string& path, std::string_view data);
  void write_marks();
  // Files this large go out with O_DIRECT (option direct_writes): smaller
  // ones (a refresh's packs) are not worth a wait on the device.
  static constexpr size_t kDirectWriteMin = size_t{256} << 10;

  Pipeline& p_;
  const PipelineConfig& cfg_;
  // fsyncs wait for the end of the build: after the first one has committed
  // the file system journal holding every new inode, the rest are cheap.
  std::vector<std::string> written_;
  // A resumable build's marks go out in groups, at most one a second, each
  // after the files of its segments are durable: a stop loses at most the
  // last second's segments, and fsyncs stay few. The first segment's goes
  // out at once: a build stopped in its first second keeps it too.
  std::vector<std::string> unsynced_;
  std::vector<std::pair<std::string, SegmentMark>> pending_;
  DirectBounce bounce_;
  std::chrono::steady_clock::time_point last_marks_ =
      std::chrono::steady_clock::now() - std::chrono::seconds(1);
};

}  // namespace scipis
