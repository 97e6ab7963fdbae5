// The block index file: header (magic, format version, layout, variables,
// CRC-32C), then each variable's partition records in checksummed chunks,
// then a trailer. Little-endian throughout; replaced atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dtype.h"
#include "layout.h"
#include "scipis_engine.h"

namespace scipis::block {

constexpr char kMagic[8] = {'S', 'C', 'P', 'S', 'B', 'L', 'K', 'I'};
constexpr char kTrailerMagic[8] = {'S', 'C', 'P', 'S', 'B', 'E', 'N', 'D'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kRecordsPerChunk = 2048;
constexpr size_t kRecordBytes = 24;

struct VarInfo {
	std::string name, path;
	DType dtype;
	int64_t header_bytes = 0;
	int64_t file_size = 0;	 // at build time, to detect changed data
	int64_t mtime_ns = 0;
};

// One partition of one variable; min/max over its non-NaN values
// (+inf/-inf when it holds none).
struct Record {
	double min, max;
	uint32_t nans;
};

struct IndexData {
	Layout layout;
	int64_t partition_bytes = 0;   // as asked for
	std::vector<VarInfo> vars;	   // sorted by name
	std::vector<std::vector<Record>> parts;	  // [var][global partition]
	double build_seconds = 0;
	int64_t built_unix_ns = 0;
	uint64_t file_bytes = 0;	// size of the index file
};

// Writes path atomically (temporary file, fsync, rename, fsync directory);
// returns the file's size.
uint64_t write_index(const std::string &path, const IndexData &ix);

void fill_info(const IndexData &ix, scipis_block_info *info);

// Reads and verifies every checksum; a damaged file raises SCIPIS_E_CORRUPT
// naming it.
IndexData read_index(const std::string &path);

}  // namespace scipis::block
