// Builds a block index on engine threads: each thread takes a run of
// partitions of one variable's storage block, reads it and records the
// min, max and NaN count of every partition.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "block_error.h"
#include "block_format.h"
#include "data_file.h"
#include "scipis_engine.h"

namespace scipis::block {

constexpr int64_t kDefaultPartitionBytes = 64 * 1024;
constexpr int64_t kMaxPartitionBytes = int64_t(1) << 30;

// Checks the spec and the files; fills everything but the records.
void prepare_index(const scipis_block_spec *spec, IndexData *ix,
				   std::vector<std::unique_ptr<DataFile>> *files);

class Builder {
public:
	Builder(std::string path, const scipis_block_spec *spec);
	~Builder();
	void start();
	bool wait(int timeout_ms);
	void cancel() { cancel_ = true; }
	// Joins, writes the file when all went well, and reports.
	void finish(scipis_block_info *info);

private:
	struct Task {
		int var;
		int64_t block, first_part, n_parts;
	};
	void run();
	void do_task(const Task &t, std::vector<unsigned char> &buf, std::vector<double> &vals);
	void join();

	std::string path_;
	IndexData ix_;
	std::vector<std::unique_ptr<DataFile>> files_;
	std::vector<Task> tasks_;
	int nthreads_ = 1;
	std::vector<std::thread> threads_;
	std::atomic<size_t> next_{0};
	std::atomic<bool> cancel_{false};
	std::mutex mu_;
	std::condition_variable cv_;
	int running_ = 0;
	bool failed_ = false;
	Error error_{SCIPIS_OK, ""};
	double t0_ = 0;
};

double now_seconds();

}  // namespace scipis::block
