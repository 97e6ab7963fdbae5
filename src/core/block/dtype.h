// Element types of indexed arrays: every value is compared as a double.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace scipis::block {

enum class DType : uint8_t { Int32 = 1, Int64 = 2, Float32 = 3, Float64 = 4 };

inline bool dtype_parse(std::string_view s, DType *out)
{
	if (s == "int32") *out = DType::Int32;
	else if (s == "int64") *out = DType::Int64;
	else if (s == "float32") *out = DType::Float32;
	else if (s == "float64") *out = DType::Float64;
	else return false;
	return true;
}

inline bool dtype_valid(uint8_t v) { return v >= 1 && v <= 4; }

inline const char *dtype_name(DType t)
{
	switch (t) {
	case DType::Int32: return "int32";
	case DType::Int64: return "int64";
	case DType::Float32: return "float32";
	case DType::Float64: return "float64";
	}
	return "?";
}

inline int dtype_size(DType t)
{
	return (t == DType::Int32 || t == DType::Float32) ? 4 : 8;
}

static_assert(std::endian::native == std::endian::little,
			  "block files are little-endian; add byte swapping for this host");

// Converts n little-endian elements at src to doubles.
inline void to_double(DType t, const unsigned char *src, size_t n, double *dst)
{
	switch (t) {
	case DType::Int32:
		for (size_t i = 0; i < n; i++) {
			int32_t v;
			memcpy(&v, src + 4 * i, 4);
			dst[i] = (double)v;
		}
		break;
	case DType::Int64:
		for (size_t i = 0; i < n; i++) {
			int64_t v;
			memcpy(&v, src + 8 * i, 8);
			dst[i] = (double)v;
		}
		break;
	case DType::Float32:
		for (size_t i = 0; i < n; i++) {
			float v;
			memcpy(&v, src + 4 * i, 4);
			dst[i] = (double)v;
		}
		break;
	case DType::Float64:
		memcpy(dst, src, 8 * n);
		break;
	}
}

}  // namespace scipis::block
