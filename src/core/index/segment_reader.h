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
#include "index/term_dict.h"

namespace scipis {

// Where a term's postings are: a region of the data file (len > 0), or,
// for a term of one document, that posting itself (len 0: seq, tf). A
// small region is checked by its group span's crc, read with it.
struct TermRef {
  uint64_t offset;
  uint64_t len;
  uint64_t df;
  uint64_t seq;
  uint32_t tf;
  uint64_t base;         // the region's seqs are stored from it
  uint64_t span_offset;  // small region: its group's small regions and crc
  uint64_t span_len;     // 0: a large region, checked by its own crcs
  // The bytes to read for the region: its span, or itself.
  uint64_t read_offset() const { return span_len ? span_offset : offset; }
  uint64_t read_len() const { return span_len ? span_len : len; }
};

// Given the bytes read_offset()/read_len() name, checks a span's crc and
// returns the region within them.
std::string_view region_in(const std::string& path, std::string_view read, const TermRef& r);

// One split of a TF metadata file: a sorted term dictionary, found by a
// binary search over its groups' first terms and a scan of one group.
class TfMeta {
 public:
  TfMeta(std::string path, std::string bytes);
  std::optional<TermRef> find(std::string_view term) const;
  size_t size() const { return count_; }
  // Every term, in dictionary order, with its reference.
  std::vector<std::pair<std::string, TermRef>> all() const;

 private:
  struct Group {
    uint64_t key;      // in the keys
    uint64_t entries;  // its coded entries, from entries_
    uint64_t data;     // its first region in the data file
    uint32_t small;    // bytes of its small regions
  };
  std::string_view key(size_t g) const;
  // Decodes group g and calls f(term, ref) for each entry until f returns
  // true.
  template <typename F>
  void scan(size_t g, F&& f) const;
  std::string path_;
  std::string bytes_;
  size_t count_ = 0;
  uint64_t base_ = 0;
  std::vector<Group> groups_;
  // Each group key's first 8 bytes, big-endian: the binary search reads
  // this array and a key itself only on a tie.
  std::vector<uint64_t> key_words_;
  DictDecoder codes_;
  size_t keys_ = 0, entries_ = 0;  // where keys and groups start in bytes_
  size_t keys_len_ = 0, table_len_ = 0;
};

struct Posting {
  uint64_t seq;
  uint32_t tf;
};

// Decodes a term's posting region (from region_in) onto out.
void decode_postings(const std::string& path, std::string_view region, const TermRef& r,
                     uint64_t seq_limit, std::vector<Posting>& out);

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
