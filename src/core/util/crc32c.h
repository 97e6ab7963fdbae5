// CRC-32C (Castagnoli) over every stored block; SSE4.2 when the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scipis {
uint32_t crc32c(const void* data, size_t len, uint32_t crc = 0);
}
