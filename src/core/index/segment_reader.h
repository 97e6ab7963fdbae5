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

// A file-index data file: the segment's documents.
struct FileData {
  std::vector<DocInfo> docs;
  std::vector<std::string_view> paths;  // into bytes
  std::string bytes;
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
