#include "block_builder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <pthread.h>

namespace scipis::block {

double now_seconds()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
		.count();
}

void prepare_index(const scipis_block_spec *spec, IndexData *ix,
				   std::vector<std::unique_ptr<DataFile>> *files)
{
	if (spec->n_vars <= 0 || !spec->vars)
		fail(SCIPIS_E_INVALID, "a block index needs at least one variable");
	if (spec->n_vars > 1024)
		fail(SCIPIS_E_INVALID, "a block index holds at most 1024 variables");
	for (int i = 0; i < spec->n_vars; i++) {
		const scipis_block_var &sv = spec->vars[i];
		VarInfo v;
		v.name = sv.name ? sv.name : "";
		if (v.name.empty() || v.name.size() > 255)
			fail(SCIPIS_E_INVALID, "variable names must have 1 to 255 bytes");
		v.path = sv.path ? sv.path : "";
		if (!sv.dtype || !dtype_parse(sv.dtype, &v.dtype))
			fail(SCIPIS_E_INVALID,
				 "variable \"%s\": unknown dtype \"%s\" (expected int32, int64, float32 or float64)",
				 v.name.c_str(), sv.dtype ? sv.dtype : "");
		if (sv.header_bytes < 0)
			fail(SCIPIS_E_INVALID, "variable \"%s\": header_bytes must not be negative",
				 v.name.c_str());
		v.header_bytes = sv.header_bytes;
		ix->vars.push_back(std::move(v));
	}
	std::sort(ix->vars.begin(), ix->vars.end(),
			  [](const VarInfo &a, const VarInfo &b) { return a.name < b.name; });
	for (size_t i = 1; i < ix->vars.size(); i++)
		if (ix->vars[i].name == ix->vars[i - 1].name)
			fail(SCIPIS_E_INVALID, "variable \"%s\" is given twice", ix->vars[i].name.c_str());

	int widest = 0;
	files->clear();
	for (VarInfo &v : ix->vars) {
		files->push_back(std::make_unique<DataFile>());
		files->back()->open(v.name, v.path);
		v.file_size = files->back()->size;
		v.mtime_ns = files->back()->mtime_ns;
		widest = std::max(widest, dtype_size(v.dtype));
	}

	std::vector<int64_t> shape(spec->shape, spec->shape + std::max(spec->n_shape, 0));
	if (spec->shape && spec->n_shape == 0)
		fail(SCIPIS_E_INVALID, "shape must have at least one dimension");
	if (shape.empty()) {
		// 1-D over the files' length: every variable must hold the same count.
		int64_t n = -1;
		for (const VarInfo &v : ix->vars) {
			int64_t data = v.file_size - v.header_bytes;
			int es = dtype_size(v.dtype);
			if (data <= 0)
				fail(SCIPIS_E_INVALID, "variable \"%s\": file \"%s\" holds no data after its %lld header bytes",
					 v.name.c_str(), v.path.c_str(), (long long)v.header_bytes);
			if (data % es != 0)
				fail(SCIPIS_E_INVALID,
					 "variable \"%s\": file \"%s\" holds %lld bytes after its header, not a whole number of %s elements; give a shape",
					 v.name.c_str(), v.path.c_str(), (long long)data, dtype_name(v.dtype));
			if (n >= 0 && data / es != n)
				fail(SCIPIS_E_INVALID,
					 "variables hold different numbers of elements (%lld and %lld); give a shape",
					 (long long)n, (long long)(data / es));
			n = data / es;
		}
		shape.push_back(n);
	}
	std::vector<int64_t> bshape;
	if (spec->block_shape) {
		if (spec->n_block_shape <= 0)
			fail(SCIPIS_E_INVALID, "block_shape must have at least one dimension");
		bshape.assign(spec->block_shape, spec->block_shape + spec->n_block_shape);
	}
	int64_t pbytes = spec->partition_bytes ? spec->partition_bytes : kDefaultPartitionBytes;
	if (pbytes < 0 || pbytes > kMaxPartitionBytes)
		fail(SCIPIS_E_INVALID, "partition_bytes must be between %d and %lld, not %lld", widest,
			 (long long)kMaxPartitionBytes, (long long)pbytes);
	if (pbytes < widest)
		fail(SCIPIS_E_INVALID,
			 "partition_bytes = %lld is smaller than one element (%d bytes)",
			 (long long)pbytes, widest);
	ix->partition_bytes = pbytes;
	ix->layout.init(shape, bshape, pbytes / widest);
	if (ix->layout.partitions() * (int64_t)ix->vars.size() > 2 * kMaxPartitions)
		fail(SCIPIS_E_INVALID,
			 "the index would hold %lld partition records; use a larger partition_bytes",
			 (long long)(ix->layout.partitions() * (int64_t)ix->vars.size()));

	for (const VarInfo &v : ix->vars) {
		int64_t need;
		if (__builtin_mul_overflow(ix->layout.elements, (int64_t)dtype_size(v.dtype), &need) ||
			__builtin_add_overflow(need, v.header_bytes, &need))
			fail(SCIPIS_E_INVALID, "variable \"%s\": shape is too large", v.name.c_str());
		if (v.file_size < need)
			fail(SCIPIS_E_INVALID,
				 "variable \"%s\": file \"%s\" has %lld bytes but its header and shape need %lld",
				 v.name.c_str(), v.path.c_str(), (long long)v.file_size, (long long)need);
	}
}

Builder::Builder(std::string path, const scipis_block_spec *spec) : path_(std::move(path))
{
	if (path_.empty() || path_[0] != '/')
		fail(SCIPIS_E_INVALID, "block index path must be absolute");
	if (spec->threads < 0 || spec->threads > 256)
		fail(SCIPIS_E_INVALID, "threads must be between 1 and 256, not %d", spec->threads);
	t0_ = now_seconds();
	prepare_index(spec, &ix_, &files_);
	const Layout &l = ix_.layout;
	int widest = 1;
	for (const VarInfo &v : ix_.vars)
		widest = std::max(widest, dtype_size(v.dtype));
	// Tasks of about 4 MiB: enough to keep reads large, small enough to balance.
	int64_t per_task = std::max<int64_t>(1, (4 << 20) / (l.partition_elems * widest));
	for (size_t v = 0; v < ix_.vars.size(); v++)
		for (int64_t b = 0; b < l.n_blocks; b++)
			for (int64_t p = 0; p < l.block_parts(b); p += per_task)
				tasks_.push_back(Task{(int)v, b, p, std::min(per_task, l.block_parts(b) - p)});
	ix_.parts.assign(ix_.vars.size(), std::vector<Record>((size_t)l.partitions()));
	int hw = (int)std::max(1u, std::thread::hardware_concurrency());
	nthreads_ = spec->threads > 0 ? spec->threads : std::min(hw, 8);
	nthreads_ = (int)std::max<size_t>(1, std::min<size_t>(nthreads_, tasks_.size()));
}

Builder::~Builder()
{
	cancel_ = true;
	join();
}

void Builder::start()
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	running_ = nthreads_;
	try {
		for (int i = 0; i < nthreads_; i++)
			threads_.emplace_back([this] { run(); });
	} catch (...) {
		{
			std::lock_guard<std::mutex> g(mu_);
			running_ -= nthreads_ - (int)threads_.size();
		}
		pthread_sigmask(SIG_SETMASK, &old, nullptr);
		cancel_ = true;
		join();
		throw;
	}
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void Builder::run()
{
	std::vector<unsigned char> buf;
	std::vector<double> vals;
	try {
		for (;;) {
			if (cancel_)
				break;
			size_t i = next_.fetch_add(1);
			if (i >= tasks_.size())
				break;
			do_task(tasks_[i], buf, vals);
		}
	} catch (const Error &e) {
		std::lock_guard<std::mutex> g(mu_);
		if (!failed_) {
			failed_ = true;
			error_ = e;
		}
		cancel_ = true;
	} catch (const std::bad_alloc &) {
		std::lock_guard<std::mutex> g(mu_);
		if (!failed_) {
			failed_ = true;
			error_ = Error(SCIPIS_E_NOMEM, "out of memory building the block index");
		}
		cancel_ = true;
	} catch (const std::exception &e) {
		std::lock_guard<std::mutex> g(mu_);
		if (!failed_) {
			failed_ = true;
			error_ = Error(SCIPIS_E_INTERNAL, std::string("block index build: ") + e.what());
		}
		cancel_ = true;
	}
	std::lock_guard<std::mutex> g(mu_);
	running_--;
	cv_.notify_all();
}

void Builder::do_task(const Task &t, std::vector<unsigned char> &buf, std::vector<double> &vals)
{
	const Layout &l = ix_.layout;
	const VarInfo &v = ix_.vars[t.var];
	int es = dtype_size(v.dtype);
	int64_t e0 = t.first_part * l.partition_elems;
	int64_t e1 = std::min(l.block_elems(t.block), (t.first_part + t.n_parts) * l.partition_elems);
	size_t n = (size_t)(e1 - e0);
	buf.resize(n * es);
	vals.resize(n);
	files_[t.var]->read(buf.data(), n * es, v.header_bytes + (l.block_first_elem[t.block] + e0) * es);
	to_double(v.dtype, buf.data(), n, vals.data());
	Record *out = &ix_.parts[t.var][l.block_first_part[t.block] + t.first_part];
	for (int64_t p = 0; p < t.n_parts; p++) {
		size_t a = (size_t)(p * l.partition_elems);
		size_t b = std::min(n, a + (size_t)l.partition_elems);
		double mn = INFINITY, mx = -INFINITY;
		uint32_t nans = 0;
		for (size_t i = a; i < b; i++) {
			double x = vals[i];
			nans += x != x;
			mn = x < mn ? x : mn;	// NaN never wins a comparison
			mx = x > mx ? x : mx;
		}
		out[p] = Record{mn, mx, nans};
	}
}

bool Builder::wait(int timeout_ms)
{
	std::unique_lock<std::mutex> g(mu_);
	return cv_.wait_for(g, std::chrono::milliseconds(std::max(timeout_ms, 0)),
						[this] { return running_ == 0; });
}

void Builder::join()
{
	for (std::thread &t : threads_)
		if (t.joinable())
			t.join();
	threads_.clear();
}

void Builder::finish(scipis_block_info *info)
{
	join();
	if (failed_)
		throw error_;
	if (cancel_ || next_.load() < tasks_.size())
		fail(SCIPIS_E_CANCELED, "block index build canceled");
	for (size_t v = 0; v < ix_.vars.size(); v++) {
		DataFile again;
		again.open(ix_.vars[v].name, ix_.vars[v].path);
		if (again.size != ix_.vars[v].file_size || again.mtime_ns != ix_.vars[v].mtime_ns)
			fail(SCIPIS_E_IO, "variable \"%s\": file \"%s\" changed while it was being indexed",
				 ix_.vars[v].name.c_str(), ix_.vars[v].path.c_str());
	}
	ix_.built_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
							std::chrono::system_clock::now().time_since_epoch())
							.count();
	ix_.build_seconds = now_seconds() - t0_;
	ix_.file_bytes = write_index(path_, ix_);
	if (info)
		fill_info(ix_, info);
}

}  // namespace scipis::block
