// The SCIPIS indexing pipeline: crawler -> wave readers -> indexers ->
// writers, all on engine threads that block every signal.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "index/distinct_terms.h"
#include "index/manifest.h"
#include "index/tokenizer.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/crawler.h"
#include "pipeline/indexer_picker.h"
#include "pipeline/journal_commit.h"
#include "pipeline/messages.h"
#include "pipeline/numa_plan.h"
#include "pipeline/queue.h"
#include "pipeline/resume.h"
#include "scipis_engine.h"
#include "util/fileio.h"

namespace scipis {

// A resumable build flushes between files once its term table is this full.
constexpr double kResumableFill = 0.9;

struct PipelineConfig {
  std::string root;
  std::string gen_dir;  // where this build's segments go
  CrawlRules rules;
  scipis_options opts;  // thread counts resolved (no zeros)
  bool count_found_bytes = false;  // CrawlCounters::count_bytes
  // Resumable: every segment gets a mark once durable (pipeline/resume.h);
  // with resume, the kept segments of an interrupted build come first.
  bool marks = false;
  // Small segments are written as one pack file (index/segment_pack.h).
  bool pack_segments = false;
  // Packs are kept in memory (Pipeline::deferred_packs), not written: a
  // refresh then commits them into its generation's journal, or writes them.
  bool defer_packs = false;
  std::shared_ptr<const ResumeState> resume;
  uint32_t stop_after_marks = 0;  // tests: stop the build after this many marks
  // Set: each indexer's TF-IDF table starts this small and grows fourfold
  // at each flush up to opts.tfidf_index_size (a refresh: most read little).
  uint64_t tfidf_start = 0;
  // A build through the page cache (reader_threads 0, no direct_io): each
  // indexer reads the files it indexes, so that their bytes are still in
  // its core's cache when it tokenizes them and no message or wake-up
  // passes between threads per pack (bench/results/2026-12-01-s60).
  bool indexers_read = false;
  // A refresh of given paths: where the walk starts instead of the root.
  std::shared_ptr<const std::vector<DirWork>> starts;
};

struct PipelineTotals {
  // bytes: what the files indexed add to the collection's size (an
  // appended file: what it grew by); bytes_read: what was read of them.
  std::atomic<uint64_t> files{0}, bytes{0}, tokens{0}, docs_with_tokens{0},
      skipped{0}, bytes_read{0};
};

class Pipeline {
 public:
  explicit Pipeline(PipelineConfig cfg);
  ~Pipeline();
  // The most memory the engine's account (util/mem_account.h) can hold
  // for a build with these options (threads resolved), whatever the
  // collection's size.
  static size_t memory_bound(const scipis_options& o);
  // Runs every stage to completion (or until stop); throws the first
  // fatal error of any thread. on_caller: after walk_first() said it fits,
  // on the same thread.
  void run(bool on_caller = false);
  // Before run(), on a thread that is not the pipeline's own (no NUMA
  // placement, no kept huge pages): walks a few named files (walk_here)
  // and says whether run() will then do the rest on the calling thread
  // too (what they need read is at most kHereBytes). False, nothing done,
  // when placement is planned or walk_here() does not hold.
  bool walk_first();
  bool may_walk_first() const { return !placer_ && walk_here(); }
  void stop() { stop_.store(true); }
  // Ends the build early but whole: the walk and the readers stop at file
  // boundaries, the indexers flush what they hold, the writers write and
  // mark it; run() then fails with "paused". For a resumable build that a
  // later one continues (a shutdown), so that nothing read is lost.
  void pause() {
    paused_.store(true);
    found_.paused.store(true);
  }
  bool stopped() const { return stop_.load(); }
  const std::atomic<bool>& stop_flag() const { return stop_; }
  const PipelineTotals& totals() const { return totals_; }
  const CrawlCounters& found() const { return found_; }
  // 1 once every file has been read and indexed (the last flushes remain).
  bool reading_done() const { return reading_done_.load(); }
  std::vector<SegmentRef> segments() const;
  // With defer_packs: each packed segment's file (its path under gen_dir
  // and bytes), by indexer and segment number.
  std::vector<DeferredPack>& deferred_packs() { return deferred_; }
  // The documents of segments their indexers kept (FlushJob::kept).
  const std::vector<std::shared_ptr<AbsorbDocs>>& kept_docs() const { return kept_docs_; }
  // The links of appended files indexed (pipeline/append.h).
  std::vector<ChainLink> links() const;
  // The documents read too soon after a change to be trusted
  // (pipeline/racy.h), and their noting by the indexers.
  std::vector<DocId> racy_docs() const;
  void note_racy(DocId d);
  // The segments indexers took in (ResumeState::Indexer::absorb): their
  // documents are in the new segments.
  std::vector<SegmentRef> absorbed() const;
  // Distinct terms over every indexer's input (a HyperLogLog estimate).
  uint64_t distinct_terms() const;
  // The same sketch's registers, merged over the indexers.
  std::vector<uint8_t> term_registers() const;
  // Whether any indexer's sketch moved from where it started.
  bool terms_moved() const;
  const NumaPlan& numa_plan() const { return plan_; }
  // Batches and blocks that crossed from one node's threads to another's:
  // none by design (tests check it).
  uint64_t cross_node_handoffs() const { return cross_node_.load(); }

 private:
  class IndexerRun;
  // A reader's pack of small files being filled (file_pack.h).
  struct OpenPack {
    unsigned char* buffer = nullptr;
    size_t used = 0;
    std::unique_ptr<FilePack> pack;
    int last_indexer = -1;  // the reader's last message went there
    // An indexer that reads for itself (PipelineConfig::indexers_read):
    // what it reads goes to own at once, never through a queue.
    IndexerRun* own = nullptr;
    // Files are read only from the page cache (RWF_NOWAIT); those not in
    // it are left here, their reading started, and read once more have
    // piled up (with their batches, kept until then).
    bool nowait = false;
    std::vector<std::pair<std::shared_ptr<OpenBatch>, const FileBatch::Entry*>> later;
    std::shared_ptr<OpenBatch> open;  // the batch an indexer that reads works through
  };
  // Pins the calling thread and its memory as the plan says.
  void place(NumaRole role, int index, int node);
  void reader_loop(int id);
  // The node's batches until the walk ends, read into p.
  void read_batches(int node, OpenPack& p);
  // An indexer that reads (indexer_reads.cpp): the node's batches, and
  // the files of other indexers' batches when it would wait.
  void reading_indexer_loop(int id);
  void indexer_reads(int node, OpenPack& p);
  void work_through(const std::shared_ptr<OpenBatch>& ob, OpenPack& p, int node);
  // The first n files left for later (all: SIZE_MAX).
  void read_later(OpenPack& p, int node, size_t n);
  void offer_rest(const std::shared_ptr<OpenBatch>& ob, int node);
  std::shared_ptr<OpenBatch> untaken_batch(int node);
  // Whether this run's indexers read their own files.
  bool indexers_read() const;
  void read_entry(const FileBatch& b, const FileBatch::Entry& e, OpenPack& p, int node);
  // False: p.nowait and the file's bytes are not all in the page cache
  // (nothing of it was packed).
  bool pack_file(int fd, uint64_t size, const FileAttrs& attrs, const FileBatch& b,
                 const FileBatch::Entry& e, OpenPack& p, int node);
  void send_pack(OpenPack& p, int node);
  // One of the node's free indexers with room in its queue
  // (indexer_picker.h), held until given back; empty when the build
  // stopped.
  std::optional<int> take_indexer(int node, OpenPack& p);
  void give_back(int node, const OpenPack& p, int indexer);
  // With append: from append->plan.start on, as a link of its chain.
  void read_file(Fd fd, const struct stat& st, const FileBatch& b, const FileBatch::Entry& e,
                 int indexer, int node, const OpenPack& p, std::unique_ptr<AppendRead> append = nullptr,
                 const std::string& window = std::string());
  // A file RefreshCatalog::needs_read found grown: its old end read back
  // and, when unchanged, only what follows read (true); false: read it whole.
  bool read_appended(Fd& fd, const struct stat& st, const FileBatch& b, const FileBatch::Entry& e,
                     OpenPack& p, int node);
  // An indexer's and a writer's state and work (indexer.cpp, writer.cpp).
  class WriterRun;
  void indexer_loop(int id);
  void writer_loop(int id);
  // Reader -> indexer and indexer -> writer: queued to their threads, or,
  // when this thread runs every stage (run_here) or is the indexer
  // (p.own), taken at once. False when the build stopped first.
  bool deliver(const OpenPack& p, int indexer, ReadMsg m);
  bool send_flush(FlushJob job);
  // A refresh of a few named files walks them on the calling thread; what
  // the walk handed out is then read, indexed and written there too when
  // it is this little (bytes to read): starting, feeding and joining the
  // stages' threads cost more than the work.
  bool walk_here() const;
  void walk(int node);
  bool fits_here() const;
  void run_here(int node);
  // The readers' buffers, of cfg_.opts.block_size, per node of the plan.
  void make_pools();
  // Throws what ended the run early, if anything did.
  void end_run();
  void record_error(std::exception_ptr e);

  PipelineConfig cfg_;
  Tokenizer tokenizer_;
  std::atomic<bool> stop_{false};
  PipelineTotals totals_;
  CrawlCounters found_;
  std::atomic<bool> reading_done_{false};
  bool walked_ = false;  // walk_first() walked
  std::atomic<bool> paused_{false};
  std::atomic<uint32_t> marks_written_{0};
  uint64_t pack_limit_;  // files of at most this many bytes are packed
  NumaPlan plan_;
  NumaPlacer* placer_ = nullptr;  // when the plan pins
  std::atomic<uint64_t> cross_node_{0};
  std::vector<SegmentRef> absorbed_;  // under mu_
  // Per node of the plan (one without NUMA): its crawler's batches, its
  // free indexers, its read buffers.
  std::vector<std::unique_ptr<BoundedQueue<FileBatch>>> files_;
  std::vector<std::unique_ptr<IndexerPicker>> pickers_;
  std::vector<std::unique_ptr<BufferPool>> pools_;
  // Batches indexers that read are working through (OpenBatch).
  std::mutex open_mu_;
  std::vector<std::shared_ptr<OpenBatch>> open_;
  std::atomic<int> popping_{0};
  std::atomic<int> reading_left_{0};  // indexers that read and have not finished reading
  std::vector<std::unique_ptr<BoundedQueue<ReadMsg>>> to_indexer_;
  BoundedQueue<FlushJob> to_writer_;
  std::vector<std::unique_ptr<DistinctTerms>> sketches_;  // one per indexer
  // Set while run_here runs the indexers and the writer on this thread.
  std::vector<std::unique_ptr<IndexerRun>> here_indexers_;
  std::unique_ptr<WriterRun> here_writer_;
  mutable std::mutex mu_;
  std::vector<SegmentRef> segments_;
  std::vector<DeferredPack> deferred_;  // under mu_ while writers run
  std::vector<ChainLink> links_;
  std::vector<DocId> racy_;
  std::vector<std::shared_ptr<AbsorbDocs>> kept_docs_;  // under mu_ while writers run
  std::exception_ptr error_;
  // Written flushes' buffers, per node, at most one set per indexer: the
  // memory of a flush is faulted in once and then serves the next ones.
  std::mutex spare_mu_;
  std::vector<std::vector<FlushBuffers>> spare_buffers_;
};

// Tests: indexers that read find no file in the page cache (1), or a file
// system that cannot tell (2); 0: as the kernel says.
void set_nowait_refusal_for_tests(int how);
// Small files indexers that read left for later, since the process began.
uint64_t files_read_later();

// Blocks every signal in the calling thread; engine threads run like this
// so that PostgreSQL's handlers only ever run on the backend's own thread.
void block_all_signals();

}  // namespace scipis
