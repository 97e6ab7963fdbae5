// A collection's manifest: the one file naming its live segments. It is
// replaced atomically, so a crash leaves the previous index whole.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scipis {

struct SegmentRef {
  uint32_t indexer = 0;
  uint32_t seg = 0;
  uint64_t first_seq = 0;
  uint64_t docs = 0;          // file records in this segment
  uint64_t tf_data_bytes = 0;
  uint64_t file_data_bytes = 0;
};

struct Manifest {
  uint64_t generation = 0;
  uint32_t split_factor = 1;
  uint32_t indexers = 0;
  unsigned char delimiter[256] = {};
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t docs_with_tokens = 0;
  uint64_t total_tokens = 0;
  uint64_t terms = 0;
  uint64_t skipped = 0;
  uint64_t index_bytes = 0;
  std::vector<SegmentRef> segments;

  std::string encode() const;
  // Throws a corruption error naming path when the bytes are damaged.
  static Manifest decode(const std::string& path, const std::string& bytes);
  std::string gen_dir(const std::string& dir) const {
    return dir + "/g" + std::to_string(generation);
  }
};

inline std::string manifest_path(const std::string& dir) { return dir + "/MANIFEST"; }

}  // namespace scipis
