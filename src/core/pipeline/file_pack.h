// Small files travel from a reader to an indexer packed together: their
// bytes back to back in one pool buffer, their paths in one string, one
// queue message for all of them. A file of a few KiB sent as its own
// Begin/Block/End messages with a 1 MiB buffer cost more in hand-offs,
// wake-ups and allocations than in indexing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "index/path_index.h"

namespace scipis {

struct PackedFile {
  uint32_t off;  // of its bytes in the buffer's read area
  uint32_t len;  // bytes read (the whole file as it was when opened)
  uint32_t path_off, path_len;
  FileAttrs attrs;
};

struct FilePack {
  std::vector<PackedFile> files;
  std::string paths;
};

}  // namespace scipis
