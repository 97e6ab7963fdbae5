// CRC-32C of block index files: the engine's one implementation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/crc32c.h"

namespace scipis::block {

inline uint32_t crc32c_extend(uint32_t crc, const void *data, size_t n) {
  return scipis::crc32c(data, n, crc);
}
inline uint32_t crc32c(const void *data, size_t n) { return scipis::crc32c(data, n); }

}  // namespace scipis::block
