#include "block_format.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block_error.h"
#include "crc32c.h"
#include "util/fileio.h"

namespace scipis::block {

namespace {

void put(std::string &b, const void *p, size_t n) { b.append((const char *)p, n); }
void put_u8(std::string &b, uint8_t v) { put(b, &v, 1); }
void put_u32(std::string &b, uint32_t v)
{
	unsigned char x[4];
	for (int i = 0; i < 4; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	put(b, x, 4);
}
void put_u64(std::string &b, uint64_t v)
{
	unsigned char x[8];
	for (int i = 0; i < 8; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	put(b, x, 8);
}
void put_f64(std::string &b, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	put_u64(b, v);
}
void put_str(std::string &b, const std::string &s)
{
	put_u32(b, (uint32_t)s.size());
	b += s;
}

uint32_t get_u32(const unsigned char *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}
uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}
double get_f64(const unsigned char *p)
{
	uint64_t v = get_u64(p);
	double d;
	memcpy(&d, &v, 8);
	return d;
}

// Bounds-checked reading of the header; running off its end means damage.
class Reader {
public:
	Reader(const std::string &file, const unsigned char *p, size_t n) : file_(file), p_(p), n_(n) {}
	const unsigned char *take(size_t k)
	{
		if (k > n_ - i_)
			damaged("header is truncated");
		const unsigned char *r = p_ + i_;
		i_ += k;
		return r;
	}
	uint8_t u8() { return *take(1); }
	uint32_t u32() { return get_u32(take(4)); }
	uint64_t u64() { return get_u64(take(8)); }
	double f64() { return get_f64(take(8)); }
	std::string str()
	{
		uint32_t k = u32();
		const unsigned char *s = take(k);
		return std::string((const char *)s, k);
	}
	bool done() const { return i_ == n_; }
	[[noreturn]] void damaged(const char *what)
	{
		fail(SCIPIS_E_CORRUPT, "block index file \"%s\" is damaged: %s", file_.c_str(), what);
	}

private:
	const std::string &file_;
	const unsigned char *p_;
	size_t n_, i_ = 0;
};

std::string chunk_bytes(const std::vector<Record> &r, size_t from, size_t to)
{
	std::string b;
	b.reserve((to - from) * kRecordBytes);
	for (size_t i = from; i < to; i++) {
		put_f64(b, r[i].min);
		put_f64(b, r[i].max);
		put_u32(b, r[i].nans);
		put_u32(b, 0);
	}
	return b;
}

uint32_t chunk_crc(uint32_t var, uint64_t chunk, const void *data, size_t n)
{
	std::string seed;
	put_u32(seed, var);
	put_u64(seed, chunk);
	return crc32c_extend(crc32c(seed.data(), seed.size()), data, n);
}

void write_all(int fd, const std::string &b, const std::string &path)
{
	size_t off = 0;
	while (off < b.size()) {
		ssize_t w = write(fd, b.data() + off, b.size() - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			fail(SCIPIS_E_IO, "could not write \"%s\": %s", path.c_str(), strerror(errno));
		}
		off += (size_t)w;
	}
}

struct Fd {
	int fd = -1;
	~Fd()
	{
		if (fd >= 0)
			close(fd);
	}
};

}  // namespace

uint64_t write_index(const std::string &path, const IndexData &ix)
{
	const Layout &l = ix.layout;
	std::string h;
	h.append(kMagic, 8);
	put_u32(h, kFormatVersion);
	put_u32(h, 0);	// header length, patched below
	put_u32(h, (uint32_t)ix.vars.size());
	put_u32(h, (uint32_t)l.ndims);
	for (int d = 0; d < l.ndims; d++)
		put_u64(h, (uint64_t)l.shape[d]);
	for (int d = 0; d < l.ndims; d++)
		put_u64(h, (uint64_t)l.block_shape[d]);
	put_u64(h, (uint64_t)l.partition_elems);
	put_u64(h, (uint64_t)ix.partition_bytes);
	put_u32(h, kRecordsPerChunk);
	put_f64(h, ix.build_seconds);
	put_u64(h, (uint64_t)ix.built_unix_ns);
	for (const VarInfo &v : ix.vars) {
		put_str(h, v.name);
		put_str(h, v.path);
		put_u8(h, (uint8_t)v.dtype);
		put_u64(h, (uint64_t)v.header_bytes);
		put_u64(h, (uint64_t)v.file_size);
		put_u64(h, (uint64_t)v.mtime_ns);
	}
	uint32_t hlen = (uint32_t)(h.size() - 16);
	for (int i = 0; i < 4; i++)
		h[12 + i] = (char)(hlen >> (8 * i));
	put_u32(h, crc32c(h.data(), h.size()));

	size_t slash = path.rfind('/');
	if (slash == std::string::npos || slash == 0)
		fail(SCIPIS_E_INVALID, "block index path \"%s\" must be absolute, below a directory",
			 path.c_str());
	const std::string dir(path, 0, slash);
	if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
		fail(SCIPIS_E_IO, "could not create directory \"%s\": %s", dir.c_str(), strerror(errno));
	std::string tmp = path + ".tmp";
	uint64_t total = 0;
	{
		Fd f;
		f.fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (f.fd < 0)
			fail(SCIPIS_E_IO, "could not create \"%s\": %s", tmp.c_str(), strerror(errno));
		try {
			write_all(f.fd, h, tmp);
			total += h.size();
			int64_t np = l.partitions();
			for (size_t v = 0; v < ix.vars.size(); v++) {
				for (uint64_t c = 0; (int64_t)(c * kRecordsPerChunk) < np; c++) {
					size_t from = c * kRecordsPerChunk;
					size_t to = std::min<size_t>(from + kRecordsPerChunk, (size_t)np);
					std::string b = chunk_bytes(ix.parts[v], from, to);
					put_u32(b, chunk_crc((uint32_t)v, c, b.data(), b.size()));
					write_all(f.fd, b, tmp);
					total += b.size();
				}
			}
			std::string t(kTrailerMagic, 8);
			put_u64(t, total + 16);
			write_all(f.fd, t, tmp);
			total += t.size();
			if (scipis::sync_fd(f.fd) != 0)
				fail(SCIPIS_E_IO, "could not fsync \"%s\": %s", tmp.c_str(), strerror(errno));
		} catch (...) {
			unlink(tmp.c_str());
			throw;
		}
	}
	if (rename(tmp.c_str(), path.c_str()) != 0) {
		int e = errno;
		unlink(tmp.c_str());
		fail(SCIPIS_E_IO, "could not rename \"%s\": %s", tmp.c_str(), strerror(e));
	}
	Fd d;
	d.fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0 || scipis::sync_fd(d.fd) != 0)
		fail(SCIPIS_E_IO, "could not fsync directory \"%s\": %s", dir.c_str(), strerror(errno));
	return total;
}

IndexData read_index(const std::string &path)
{
	Fd f;
	f.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (f.fd < 0) {
		if (errno == ENOENT)
			fail(SCIPIS_E_NOT_INDEXED,
				 "block index file \"%s\" is missing; rebuild the index", path.c_str());
		fail(SCIPIS_E_IO, "could not open block index file \"%s\": %s", path.c_str(),
			 strerror(errno));
	}
	struct stat st;
	if (fstat(f.fd, &st) != 0)
		fail(SCIPIS_E_IO, "could not stat \"%s\": %s", path.c_str(), strerror(errno));
	uint64_t size = (uint64_t)st.st_size;
	std::string buf;
	buf.resize(size);
	size_t off = 0;
	while (off < size) {
		ssize_t r = pread(f.fd, buf.data() + off, size - off, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail(SCIPIS_E_IO, "could not read \"%s\": %s", path.c_str(), strerror(errno));
		if (r == 0)
			break;
		off += (size_t)r;
	}
	const unsigned char *p = (const unsigned char *)buf.data();
	Reader whole(path, p, off);
	if (off < 16 || memcmp(p, kMagic, 8) != 0)
		whole.damaged("not a scipis block index file (bad magic number)");
	uint32_t version = get_u32(p + 8);
	if (version != kFormatVersion)
		fail(SCIPIS_E_CORRUPT, "block index file \"%s\" has format version %u; this scipis reads version %u",
			 path.c_str(), version, kFormatVersion);
	uint64_t hlen = get_u32(p + 12);
	if (hlen > off || 16 + hlen + 4 > off)
		whole.damaged("header is truncated");
	if (get_u32(p + 16 + hlen) != crc32c(p, 16 + hlen))
		whole.damaged("header checksum mismatch");

	IndexData ix;
	Reader r(path, p + 16, hlen);
	uint32_t nvars = r.u32();
	uint32_t ndims = r.u32();
	if (nvars == 0 || nvars > 4096 || ndims == 0 || ndims > SCIPIS_BLOCK_MAX_DIMS)
		r.damaged("bad variable or dimension count");
	std::vector<int64_t> shape(ndims), bshape(ndims);
	for (auto &s : shape)
		s = (int64_t)r.u64();
	for (auto &s : bshape)
		s = (int64_t)r.u64();
	int64_t pelems = (int64_t)r.u64();
	ix.partition_bytes = (int64_t)r.u64();
	uint32_t per_chunk = r.u32();
	ix.build_seconds = r.f64();
	ix.built_unix_ns = (int64_t)r.u64();
	if (per_chunk == 0 || per_chunk > (1u << 20))
		r.damaged("bad chunk size");
	try {
		ix.layout.init(shape, bshape, pelems);
	} catch (const Error &e) {
		fail(SCIPIS_E_CORRUPT, "block index file \"%s\" is damaged: %s", path.c_str(), e.what());
	}
	for (uint32_t v = 0; v < nvars; v++) {
		VarInfo vi;
		vi.name = r.str();
		vi.path = r.str();
		uint8_t dt = r.u8();
		if (!dtype_valid(dt))
			r.damaged("unknown element type");
		vi.dtype = (DType)dt;
		vi.header_bytes = (int64_t)r.u64();
		vi.file_size = (int64_t)r.u64();
		vi.mtime_ns = (int64_t)r.u64();
		ix.vars.push_back(std::move(vi));
	}
	if (!r.done())
		r.damaged("header has trailing bytes");

	uint64_t np = (uint64_t)ix.layout.partitions();
	uint64_t nchunks = (np + per_chunk - 1) / per_chunk;
	uint64_t expect = 16 + hlen + 4 + nvars * (np * kRecordBytes + nchunks * 4) + 16;
	if (off != expect)
		whole.damaged(off < expect ? "file is truncated" : "file has trailing bytes");
	const unsigned char *t = p + off - 16;
	if (memcmp(t, kTrailerMagic, 8) != 0 || get_u64(t + 8) != expect)
		whole.damaged("bad trailer");

	const unsigned char *q = p + 16 + hlen + 4;
	ix.parts.resize(nvars);
	for (uint32_t v = 0; v < nvars; v++) {
		std::vector<Record> &recs = ix.parts[v];
		recs.resize(np);
		for (uint64_t c = 0; c < nchunks; c++) {
			uint64_t from = c * per_chunk, to = std::min<uint64_t>(from + per_chunk, np);
			size_t bytes = (to - from) * kRecordBytes;
			if (get_u32(q + bytes) != chunk_crc(v, c, q, bytes))
				fail(SCIPIS_E_CORRUPT,
					 "block index file \"%s\" is damaged: checksum mismatch in records of variable \"%s\", partitions %llu..%llu",
					 path.c_str(), ix.vars[v].name.c_str(), (unsigned long long)from,
					 (unsigned long long)to - 1);
			for (uint64_t i = from; i < to; i++, q += kRecordBytes) {
				recs[i].min = get_f64(q);
				recs[i].max = get_f64(q + 8);
				recs[i].nans = get_u32(q + 16);
			}
			q += 4;
		}
	}
	ix.file_bytes = off;
	return ix;
}

}  // namespace scipis::block

namespace scipis::block {

void fill_info(const IndexData &ix, scipis_block_info *info)
{
	const Layout &l = ix.layout;
	memset(info, 0, sizeof *info);
	info->n_vars = (int)ix.vars.size();
	info->ndims = l.ndims;
	for (int d = 0; d < l.ndims; d++) {
		info->shape[d] = l.shape[d];
		info->block_shape[d] = l.block_shape[d];
	}
	info->elements = (uint64_t)l.elements;
	info->blocks = (uint64_t)l.n_blocks;
	info->partitions = (uint64_t)l.partitions();
	info->partition_elements = (uint64_t)l.partition_elems;
	for (const VarInfo &v : ix.vars)
		info->bytes_indexed += (uint64_t)l.elements * dtype_size(v.dtype);
	info->index_bytes = ix.file_bytes;
	info->build_seconds = ix.build_seconds;
}

}  // namespace scipis::block
