// What flows between the pipeline's threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "index/manifest.h"
#include "index/out_buffer.h"
#include "pipeline/append.h"
#include "pipeline/file_pack.h"
#include "util/mem_account.h"

namespace scipis {

// Reader -> indexer. A file arrives as Begin, its blocks in order, then End,
// never interleaved with another file's messages on the same indexer; or,
// when small, whole in a Files message with other small files.
struct ReadMsg {
  enum Kind { kBegin, kBlock, kEnd, kFiles };
  Kind kind = kBegin;
  int node = 0;  // the plan's node of the reader that sent it
  unsigned char* buffer = nullptr;  // kBlock, kFiles: pool buffer to give back
  unsigned char* data = nullptr;
  size_t len = 0;
  std::string path;      // kBegin
  FileAttrs attrs;       // kBegin
  std::unique_ptr<AppendRead> append;  // kBegin: only what the file appended
  uint64_t size = 0;     // kEnd: the file's bytes as far as read
  uint64_t tail = 0;     // kEnd: FileAttrs::tail
  std::unique_ptr<FilePack> pack;  // kFiles
};

// Indexer -> writer: one serialised partial index flush.
// The output buffers of a flush, handed back by the writer for reuse.
struct FlushBuffers {
  OutBuffer tf_data;
  std::vector<OutBuffer> tf_meta;
};

struct FlushJob {
  SegmentRef ref;
  // For a resumable build's mark (pipeline/resume.h), written after the segment.
  bool partial = false;
  uint64_t next_seq = 0, files = 0, bytes = 0, tokens = 0, docs_with_tokens = 0;
  std::vector<uint8_t> sketch;
  OutBuffer tf_data;
  std::vector<OutBuffer> tf_meta;
  std::string file_data;
  std::vector<std::string> file_meta;
  std::string path_trigrams;
  mem::Charge file_bytes;  // of file_data, file_meta and path_trigrams
  // The segment's documents as the indexer added them (a small refresh's
  // only segment of the indexer: pipeline/kept_docs.h), or null.
  std::shared_ptr<AbsorbDocs> kept;
};

}  // namespace scipis
