// One indexer's in-memory file-path index: the finished documents of the
// current segment with their paths, sizes, times and lengths.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "index/file_block_stats.h"
#include "index/segment_format.h"
#include "util/mem_account.h"

namespace scipis {

// What fstat said of a file when it was opened, as the catalog keeps it.
struct FileAttrs {
  int64_t mtime_ns = 0, ctime_ns = 0;  // since the Unix epoch
  uint64_t ino = 0;
  uint32_t uid = 0, gid = 0, mode = 0;  // mode: st_mode, type bits included
  // crc32c of the file's last min(size, kTailWindow) bytes, plus one; 0
  // when not known (the file was not read to its end). A refresh checks it
  // before reading only what was appended (pipeline/append.h).
  uint64_t tail = 0;
  // Not stored: read so soon after its last change that a change after
  // the read could keep every attribute (pipeline/racy.h); a refresh lists
  // the document as racy, to be read again by the next one.
  bool racy = false;
};

struct DocInfo {
  uint64_t seq;
  uint64_t size;
  int64_t mtime_ns;
  uint64_t tokens;
  int64_t ctime_ns;
  uint64_t ino;
  uint32_t uid, gid, mode;
  uint64_t tail;  // FileAttrs::tail
  static DocInfo of(uint64_t seq, uint64_t size, const FileAttrs& a) {
    return DocInfo{seq, size, a.mtime_ns, 0, a.ctime_ns, a.ino, a.uid, a.gid, a.mode, a.tail};
  }
};

class PathIndex {
 public:
  explicit PathIndex(uint64_t budget) : budget_(budget) {}
  void add(const DocInfo& d, std::string_view path);
  // Full at 90% of the budget, or well before its data file's blocks
  // could pass the 4 GiB their offsets address (huge budgets only).
  bool full() const {
    return memory() * 10 >= budget_ * 9 || encoded_bound() + kEncodedMargin >= kMaxFileBlocksBytes;
  }
  bool empty() const { return docs_.empty(); }
  size_t memory() const {
    return docs_.size() * (sizeof(DocInfo) + sizeof(uint32_t)) + paths_.size();
  }
  size_t count() const { return docs_.size(); }
  // The length of document seq, if it is here (finished), else 0.
  uint64_t tokens_of(uint64_t seq) const {
    if (docs_.empty() || seq < docs_[0].seq || seq - docs_[0].seq >= docs_.size()) return 0;
    return docs_[seq - docs_[0].seq].tokens;
  }
  // The data file, the meta files (one a split) and the paths' trigram
  // index (index/path_trigrams.h).
  void serialise(int split_factor, std::string& data, std::vector<std::string>& metas,
                 std::string* trigrams = nullptr) const;
  void clear();

  // Upper bounds, from the options alone, of what an index holds and of
  // what one flush's buffers take (vectors and strings grow to at most
  // twice their size).
  static size_t held_bound(uint64_t budget) { return 2 * content_bound(budget); }
  static size_t flush_bound(uint64_t budget, int split_factor) {
    // Records (at most kMaxFileRecord bytes and the path's suffix per
    // document, its length (4 bytes), and an offset, a crc and the
    // statistics per block of kFileBlock: under kMaxFileRecord + 7 bytes
    // and the path, against DocInfo's and the length's in memory), the
    // meta entries (12 bytes each) and their sorting vectors (16), each
    // twice over, and four headers per file (room for the headers, the
    // two section crcs and a last, partial block's overhead).
    static_assert(8 + kBlockStatBytes <= 3 * kFileBlock);
    constexpr size_t in_memory = sizeof(DocInfo) + sizeof(uint32_t);
    constexpr size_t per_doc = kMaxFileRecord + 7 + 12 + 16;
    static_assert(per_doc >= in_memory, "paths' bytes are bounded by the records'");
    // The trigram file: at most a table entry, a crc and a varint (25
    // bytes) per path byte; its builder about 100 bytes per distinct
    // trigram (index/path_trigrams.h), at most one per path byte.
    return 2 * (content_bound(budget) * per_doc / in_memory) + 125 * content_bound(budget) +
           static_cast<size_t>(split_factor + 1) * 4 * kHeaderBytes;
  }

 private:
  // What memory() can reach: 90% of the budget, then one more file with
  // a path of at most 4096 bytes.
  static size_t content_bound(uint64_t budget) { return budget + 4096 + 64; }
  static constexpr size_t kHeaderBytes = 32 + 8 + 8 + kBlockStatBytes;
  // The most the blocks of the data file take for what is here now, and
  // what one more document (with a path under 1 MiB) adds to it.
  size_t encoded_bound() const {
    return docs_.size() * (kMaxFileRecord + 1) + paths_.size() + 8;
  }
  static constexpr size_t kEncodedMargin = size_t{1} << 20;
  uint64_t budget_;
  std::vector<DocInfo, mem::Accounted<DocInfo>> docs_;
  std::vector<uint32_t, mem::Accounted<uint32_t>> lens_;
  std::basic_string<char, std::char_traits<char>, mem::Accounted<char>> paths_;
};

}  // namespace scipis
