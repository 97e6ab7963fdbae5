// Reads segment files back, verifying every checksum and bound before a
// byte is trusted; damage is an error naming the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "index/path_index.h"
#include "index/segment_format.h"

namespace scipis {

// Where a term's postings are: a block of the data file (len > 0), or,
// for a term of one document, that posting itself (len 0: seq, tf).
struct TermRef {
  uint64_t offset;
  uint64_t len;
  uint64_t df;
  uint64_t seq;
  uint32_t tf;
};

// One split of a TF metadata file: a sorted term dictionary, found by a
// binary search over its groups' first terms and a scan of one group.
class TfMeta {
 public:
  TfMeta(std::string path, std::string bytes);
  std::optional<TermRef> find(std::string_view term) const;
  size_t size() const { return count_; }
  std::string term_at(size_t i) const;

 private:
  struct Entry {
    StoredTerm term;
    TermRef ref;
    size_t next;  // where the following entry starts in bytes_
  };
  // Decodes the entry at `at`; block_offset is that of its block, if any,
  // and moves past it.
  Entry entry(size_t at, uint64_t& block_offset) const;
  std::string group_first(size_t g) const;
  std::string path_;
  std::string bytes_;
  size_t count_ = 0;
  std::vector<uint32_t> entry_offsets_;  // by group, from entries_
  std::vector<uint64_t> block_offsets_;  // by group
  size_t entries_ = 0;                   // where the entries start in bytes_
};

struct Posting {
  uint64_t seq;
  uint32_t tf;
};

// Decodes one posting block of a TF data file; block holds its crc.
void decode_postings(const std::string& path, std::string_view block,
                     uint64_t expect_df, uint64_t seq_limit,
                     std::vector<Posting>& out);

// The blocks of a file-index data file (segment_format.h), each checked
// as it is decoded: a header and an offset table read and checked once,
// then any block on its own.
class FileBlocks {
 public:
  // file: the whole file, header included; it must outlive this.
  FileBlocks(std::string path, std::string_view file);
  uint64_t records() const { return count_; }
  size_t blocks() const { return blocks_; }
  size_t records_in(size_t b) const {
    return b + 1 < blocks_ ? kFileBlock : static_cast<size_t>(count_ - (blocks_ - 1) * kFileBlock);
  }
  // Block b's bytes, its crc included.
  std::string_view block(size_t b) const;
  // Decodes block b after checking its crc: records_in(b) records into
  // docs, their paths appended to paths, ends[i] the end of record i's
  // path there (it starts where the previous one ends, the first where
  // paths ended on entry).
  void decode(size_t b, DocInfo* docs, std::string& paths, size_t* ends) const;

 private:
  uint32_t offset(size_t b) const {
    return get_u32(reinterpret_cast<const unsigned char*>(file_.data()) + kHeaderSize + 4 * b);
  }
  std::string path_;
  std::string_view file_;
  uint64_t count_ = 0;
  size_t blocks_ = 0;
  size_t first_ = 0;  // where the first block starts in file_
};

// A file-index data file: the segment's documents.
struct FileData {
  std::vector<DocInfo> docs;
  std::vector<std::string_view> paths;  // into arena
  std::string arena;                    // the paths, back to back
  std::string bytes;  // the file as read; load() decodes it, then frees it
  static void load(const std::string& path, FileData& out);
};

// One split of a file-index metadata file: path hash -> record number.
class FileMeta {
 public:
  FileMeta(std::string path, const std::string& bytes, uint64_t records);
  // Record numbers whose path hash equals hash.
  std::vector<uint32_t> find(uint64_t hash) const;

 private:
  std::vector<std::pair<uint64_t, uint32_t>> entries_;
};

}  // namespace scipis
