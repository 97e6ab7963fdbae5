// CRC-32C (Castagnoli), the checksum of every section of a block index file.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scipis::block {

uint32_t crc32c_extend(uint32_t crc, const void *data, size_t n);
inline uint32_t crc32c(const void *data, size_t n) { return crc32c_extend(0, data, n); }

}  // namespace scipis::block
