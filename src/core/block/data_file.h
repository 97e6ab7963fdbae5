// The raw array files an index reads: opened once, read with pread.
#pragma once

#include <cstdint>
#include <string>

#include "block_format.h"

namespace scipis::block {

class DataFile {
public:
	DataFile() = default;
	DataFile(const DataFile &) = delete;
	DataFile &operator=(const DataFile &) = delete;
	~DataFile();

	// Opens path (absolute, a regular file); fills size and mtime.
	void open(const std::string &var, const std::string &path);
	// Reads exactly n bytes at off or fails (a file that shrank is an error).
	void read(void *buf, size_t n, int64_t off) const;

	int64_t size = 0;
	int64_t mtime_ns = 0;

private:
	int fd_ = -1;
	std::string var_, path_;
};

// Fails with SCIPIS_E_NOT_INDEXED when a data file changed after the build.
void check_unchanged(const VarInfo &v, const DataFile &f);

}  // namespace scipis::block
