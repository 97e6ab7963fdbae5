#include "data_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block_error.h"
#include "util/time_ns.h"

namespace scipis::block {

DataFile::~DataFile()
{
	if (fd_ >= 0)
		close(fd_);
}

void DataFile::open(const std::string &var, const std::string &path)
{
	var_ = var;
	path_ = path;
	if (path.empty() || path[0] != '/')
		fail(SCIPIS_E_INVALID, "variable \"%s\": path \"%s\" must be absolute", var.c_str(),
			 path.c_str());
	fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd_ < 0)
		fail(SCIPIS_E_IO, "variable \"%s\": could not open \"%s\": %s", var.c_str(), path.c_str(),
			 strerror(errno));
	struct stat st;
	if (fstat(fd_, &st) != 0)
		fail(SCIPIS_E_IO, "variable \"%s\": could not stat \"%s\": %s", var.c_str(), path.c_str(),
			 strerror(errno));
	if (!S_ISREG(st.st_mode))
		fail(SCIPIS_E_INVALID, "variable \"%s\": \"%s\" is not a regular file", var.c_str(),
			 path.c_str());
	size = (int64_t)st.st_size;
	mtime_ns = timespec_ns(st.st_mtim);
}

void DataFile::read(void *buf, size_t n, int64_t off) const
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(fd_, (char *)buf + done, n - done, (off_t)(off + (int64_t)done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fail(SCIPIS_E_IO, "variable \"%s\": could not read \"%s\": %s", var_.c_str(),
				 path_.c_str(), strerror(errno));
		}
		if (r == 0)
			fail(SCIPIS_E_IO, "variable \"%s\": \"%s\" ended early (did it shrink?)", var_.c_str(),
				 path_.c_str());
		done += (size_t)r;
	}
}

void check_unchanged(const VarInfo &v, const DataFile &f)
{
	if (f.size != v.file_size || f.mtime_ns != v.mtime_ns)
		fail(SCIPIS_E_NOT_INDEXED,
			 "variable \"%s\": file \"%s\" changed after the block index was built; rebuild the index",
			 v.name.c_str(), v.path.c_str());
}

}  // namespace scipis::block
