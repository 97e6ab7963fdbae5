// One indexer's in-memory file-path index: the finished documents of the
// current segment with their paths, sizes, times and lengths.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scipis {

struct DocInfo {
  uint64_t seq;
  uint64_t size;
  int64_t mtime_ns;
  uint64_t tokens;
};

class PathIndex {
 public:
  explicit PathIndex(uint64_t budget) : budget_(budget) {}
  void add(const DocInfo& d, std::string_view path);
  bool full() const { return memory() * 10 >= budget_ * 9; }
  bool empty() const { return docs_.empty(); }
  size_t memory() const {
    return docs_.size() * (sizeof(DocInfo) + sizeof(uint32_t)) + paths_.size();
  }
  size_t count() const { return docs_.size(); }
  void serialise(int split_factor, std::string& data,
                 std::vector<std::string>& metas) const;
  void clear();

 private:
  uint64_t budget_;
  std::vector<DocInfo> docs_;
  std::vector<uint32_t> lens_;
  std::string paths_;
};

}  // namespace scipis
