// An opened collection index as a query sees it: the manifest, and the
// segments' metadata and document tables read on first use and kept.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "index/manifest.h"
#include "index/segment_reader.h"
#include "index/tokenizer.h"
#include "util/fileio.h"

namespace scipis {

struct SegmentState {
  SegmentRef ref;
  std::string tf_dir, file_dir;
  Fd tf_fd;  // kept open while the collection holds few enough
  std::vector<std::unique_ptr<TfMeta>> tf_meta;  // by split, lazily
  std::unique_ptr<FileData> files;
  std::vector<std::unique_ptr<FileMeta>> file_meta;
};

struct IndexerState {
  std::vector<SegmentState*> segs;  // in flush order
  bool loaded = false;
  std::vector<const DocInfo*> docs;  // by seq
  std::vector<std::string_view> paths;
  // Each document's token count as the formulas take it, by seq: scoring
  // reads one dense array, not a record per posting.
  std::vector<double> lens;
};

class Collection {
 public:
  explicit Collection(std::string dir);
  const Manifest& manifest() const { return m_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  bool is_current() const;

  const TfMeta& tf_meta(SegmentState& s, uint32_t split);
  const FileData& files(SegmentState& s);
  const FileMeta& file_meta(SegmentState& s, uint32_t split);
  // Reads one posting block of a segment's TF data.
  void read_block(SegmentState& s, const TermRef& r, std::string& out);
  // The documents of one indexer, by seq, loaded on first use.
  IndexerState& indexer(uint32_t i);
  std::vector<SegmentState>& segments() { return segs_; }
  size_t indexer_count() const { return ix_.size(); }

 private:
  std::string dir_, gen_dir_;
  Manifest m_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ino_t ino_ = 0;
  struct timespec mtime_ {};
  std::vector<SegmentState> segs_;
  std::vector<IndexerState> ix_;
  size_t open_fds_ = 0;
};

// Data files kept open per collection; past this, a read opens and closes.
constexpr size_t kMaxOpenDataFiles = 64;

}  // namespace scipis
