// Reads segment files back, verifying every checksum and bound before a
// byte is trusted; damage is an error naming the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "index/path_index.h"

namespace scipis {

struct TermRef {
  uint64_t offset;
  uint64_t len;
  uint64_t df;
};

// One split of a TF metadata file: a sorted term dictionary.
class TfMeta {
 public:
  TfMeta(std::string path, std::string bytes);
  std::optional<TermRef> find(std::string_view term) const;
  size_t size() const { return offsets_.size(); }
  std::string_view term_at(size_t i) const;

 private:
  TermRef ref_at(size_t i) const;
  std::string path_;
  std::string bytes_;
  std::vector<uint32_t> offsets_;
  size_t entries_ = 0;  // where the entries start in bytes_
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
