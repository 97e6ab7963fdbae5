#include "crc32c.h"

#include <array>

namespace scipis::block {

namespace {

constexpr std::array<uint32_t, 256> make_table()
{
	std::array<uint32_t, 256> t{};
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		t[i] = c;
	}
	return t;
}

constexpr auto kTable = make_table();

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = static_cast<const unsigned char *>(data);
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

}  // namespace scipis::block
