// Reads segment files back, verifying every checksum and bound before a
// byte is trusted; damage is an error naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "index/file_block_stats.h"
#include "index/path_index.h"
#include "index/segment_format.h"
#include "index/term_dict.h"
#include "util/mapped_file.h"
#include "util/verified_bytes.h"

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
// verified, when given, remembers spans checked (and is asked first).
std::string_view region_in(const std::string& path, std::string_view read, const TermRef& r,
                           VerifiedBytes* verified = nullptr);

// One split of a TF metadata file: a sorted term dictionary, found by a
// binary search over its groups' first terms and a scan of one group.
class TfMeta {
 public:
  // like, when given, is another split's dictionary of the same flush:
  // its decoding tables are shared when the codes are the same.
  TfMeta(std::string path, std::string bytes, const TfMeta* like = nullptr);
  // The same, read in place from a mapped file.
  TfMeta(std::string path, std::shared_ptr<const MappedFile> file, const TfMeta* like = nullptr);
  std::optional<TermRef> find(std::string_view term) const;
  size_t size() const { return count_; }
  // Every term, in dictionary order, with its reference.
  std::vector<std::pair<std::string, TermRef>> all() const;
  // The same a group at a time: group g's terms appended to out.
  size_t groups() const { return groups_; }
  void group_entries(size_t g, std::vector<std::pair<std::string, TermRef>>& out) const;
  // The seq its postings are stored from.
  uint64_t base() const { return base_; }
  // What this holds on the heap (the file's bytes are mapped or owned
  // apart), the decoding tables counted when not shared with like.
  size_t heap_bytes(const TfMeta* like) const;
  size_t mapped_bytes() const { return file_ ? file_->bytes().size() : 0; }

 private:
  // Group g's index entry, its chunk checked: where its coded entries lie
  // in bytes_ and their crc, its regions in the data file.
  struct Group {
    uint64_t key;
    size_t begin, end;
    uint32_t crc;
    uint64_t data;
    uint32_t small;
  };
  Group group(size_t g) const;
  uint64_t key_of(size_t g) const {
    check_chunk(g / kIndexChunk);
    return get_u64(reinterpret_cast<const unsigned char*>(bytes_.data()) + index_ + g * kTermGroupEntry);
  }
  // Inline: a lookup's binary search checks a chunk at every step.
  void check_chunk(size_t c) const {
    if (!(chunk_ok_[c / 64] >> (c % 64) & 1)) verify_chunk(c);
  }
  void verify_chunk(size_t c) const;
  std::string first_term(size_t g) const;
  // The hot terms (segment_format.h): term, if it is one.
  std::optional<TermRef> find_hot(std::string_view term) const;
  void check_hot_chunk(size_t c) const {
    if (!(hot_ok_[c / 64] >> (c % 64) & 1)) verify_hot_chunk(c);
  }
  void verify_hot_chunk(size_t c) const;
  uint32_t hot_hash(size_t i) const {
    check_hot_chunk(i / kIndexChunk);
    return get_u32(reinterpret_cast<const unsigned char*>(bytes_.data()) + hot_ + i * kHotEntry);
  }
  size_t hot_term_at(size_t i) const;
  // Decodes group g (its crc checked) and calls f(term, ref, shared) for
  // each entry (shared: the bytes it shares with the entry before it)
  // until f returns true.
  template <typename F>
  void scan(size_t g, F&& f) const;
  void open(const TfMeta* like);
  std::string path_;
  std::string owned_;
  std::shared_ptr<const MappedFile> file_;
  std::string_view bytes_;  // owned_'s or file_'s
  size_t count_ = 0, groups_ = 0;
  uint64_t base_ = 0;
  size_t index_ = 0, entries_ = 0, entries_end_ = 0;  // in bytes_
  mutable std::vector<uint64_t> chunk_ok_;  // a bit per index chunk
  size_t hot_n_ = 0, hot_ = 0, hot_crcs_ = 0, hot_terms_ = 0, hot_bytes_ = 0;  // in bytes_
  mutable std::vector<uint64_t> hot_ok_;  // a bit per chunk of hot terms
  size_t hot_dir_ = 0;  // in bytes_
  unsigned hot_bits_ = 0;
  mutable bool hot_dir_ok_ = false;
  // A bit per group whose crc matched, from the first lookup on (a bit per
  // 16 terms; 256 groups direct-mapped were checked again on most
  // lookups of a large split).
  mutable std::vector<uint64_t> group_ok_;
  std::shared_ptr<const DictDecoder> codes_;
};

struct Posting {
  uint64_t seq;
  uint32_t tf;
};

// Decodes a term's posting region (from region_in) onto out.
void decode_postings(const std::string& path, std::string_view region, const TermRef& r,
                     uint64_t seq_limit, std::vector<Posting>& out);

// The blocks of a file-index data file (segment_format.h), read in
// place: a header and an offset table checked once, the lengths and the
// block statistics each checked on first use, then any block on its own.
class FileBlocks {
 public:
  // file: the whole file, header included; it must outlive this.
  FileBlocks(std::string path, std::string_view file);
  uint64_t records() const { return count_; }
  size_t blocks() const { return blocks_; }
  size_t records_in(size_t b) const {
    return b + 1 < blocks_ ? kFileBlock : static_cast<size_t>(count_ - (blocks_ - 1) * kFileBlock);
  }
  // Restarts after block b's first record (its table's entries).
  size_t restarts_in(size_t b) const { return (records_in(b) - 1) / kRestart; }
  // Block b's bytes, its crc included.
  std::string_view block(size_t b) const;
  // Decodes block b after checking its crc: records_in(b) records into
  // docs, their paths appended to paths, ends[i] the end of record i's
  // path there (it starts where the previous one ends, the first where
  // paths ended on entry). Each record's length must be the one the
  // length array holds. With upto, only the first upto records.
  void decode(size_t b, DocInfo* docs, std::string& paths, size_t* ends,
              size_t upto = kFileBlock) const;
  // The same from record from (a restart: a multiple of kRestart) on:
  // docs[0] and ends[0] are record from's.
  void decode_from(size_t b, size_t from, DocInfo* docs, std::string& paths, size_t* ends,
                   size_t upto = kFileBlock) const;
  // Record i of block b's path alone (its other fields read past, not
  // decoded), into out: a ranking's ties compare paths of documents whose
  // records are never returned.
  void path_of(size_t b, size_t i, std::string& out) const;
  // Chunk c of the length array (kLenChunk u32 little-endian, one per
  // record from record c * kLenChunk; kLenInRecord: in the record),
  // checked when first read.
  const unsigned char* len_chunk(size_t c) const {
    if (!(c / 64 < len_ok_.size() && (len_ok_[c / 64] >> (c % 64) & 1))) check_len_chunk(c);
    return reinterpret_cast<const unsigned char*>(file_.data()) + lens_at_ + 4 * kLenChunk * c;
  }
  uint32_t len(size_t rec) const {
    return get_u32(len_chunk(rec / kLenChunk) + 4 * (rec % kLenChunk));
  }
  // Block b's statistics, checked on first use; their path fences hold
  // the bytes after common_prefix().
  FileBlockStats stats(size_t b) const;
  // The prefix every path of the file shares (read with the statistics).
  std::string_view common_prefix() const {
    if (!stats_ok_) check_stats();
    return lcp_;
  }
  const std::string& path() const { return path_; }
  size_t heap_bytes() const {
    return sizeof(*this) + path_.capacity() + (len_ok_.capacity() + block_ok_.capacity()) * sizeof(uint64_t);
  }

 private:
  uint32_t offset(size_t b) const {
    return get_u32(reinterpret_cast<const unsigned char*>(file_.data()) + kHeaderSize + 4 * b);
  }
  void check_len_chunk(size_t c) const;
  // Block b's bytes, its crc checked on first use; len: without the crc.
  std::string_view checked_block(size_t b, size_t& len) const;
  // Where record r of block b (a restart) starts in it.
  size_t restart_at(size_t b, std::string_view blk, size_t len, size_t r) const;
  void check_stats() const;
  std::string path_;
  std::string_view file_;
  uint64_t count_ = 0;
  size_t blocks_ = 0;
  size_t lens_at_ = 0, stats_at_ = 0;
  std::string_view lcp_;
  size_t first_ = 0;  // where the first block starts in file_
  mutable std::vector<uint64_t> len_ok_;  // a bit per chunk; empty: the crcs unchecked
  mutable std::vector<uint64_t> block_ok_;  // a bit per block whose crc matched
  mutable bool stats_ok_ = false;
};

// A file-index data file: the segment's documents.
struct FileData {
  std::vector<DocInfo> docs;
  std::vector<std::string_view> paths;  // into arena
  std::string arena;                    // the paths, back to back
  std::string bytes;  // the file as read; load() decodes it, then frees it
  static void load(const std::string& path, FileData& out);
};

// One split of a file-index metadata file: path hash -> record number,
// searched in place in the mapped file.
class FileMeta {
 public:
  // file must outlive this.
  FileMeta(std::string path, std::string_view file, uint64_t records);
  // Record numbers whose path hash equals hash.
  std::vector<uint32_t> find(uint64_t hash) const;
  size_t heap_bytes() const { return sizeof(*this) + path_.capacity(); }

 private:
  uint64_t hash_at(size_t i) const { return get_u64(entries_ + 12 * i); }
  std::string path_;
  const unsigned char* entries_ = nullptr;
  size_t count_ = 0;
};

}  // namespace scipis
