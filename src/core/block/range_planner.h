// Chooses the partitions that can hold hits and coalesces them into reads:
// neighbours within max_gap bytes merge, no read grows past max_read.
#pragma once

#include <memory>
#include <vector>

#include "block_format.h"
#include "data_file.h"
#include "predicate.h"
#include "scipis_engine.h"

namespace scipis::block {

constexpr int64_t kDefaultMaxGap = 64 << 10;	// one default partition
constexpr int64_t kDefaultMaxRead = 8 << 20;

// An opened index: records verified, data files open and unchanged.
struct OpenIndex {
	IndexData d;
	std::vector<std::string> names;
	std::vector<std::unique_ptr<DataFile>> files;
	std::vector<std::vector<Summary>> block_summary;	// [var][block]
	int widest = 1;
};

std::unique_ptr<OpenIndex> open_index(const std::string &path);

// One read: elements [elem_begin, elem_end) of a storage block (block-local),
// covering partitions [first_part, first_part + span) of which cand are candidates.
struct Read {
	int64_t block;
	int64_t first_part, span, cand;
	int64_t elem_begin, elem_end;
};

std::vector<Read> plan_reads(const OpenIndex &ix, const Predicate &p,
							 const scipis_block_read_opts &o, uint64_t *candidates);

// Min and max over the candidate partitions of a read (NaN when none holds a number).
void read_minmax(const OpenIndex &ix, const Predicate &p, const scipis_block_read_opts &o,
				 const Read &r, int var, double *mn, double *mx);

}  // namespace scipis::block
