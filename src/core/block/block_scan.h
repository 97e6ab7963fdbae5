// Reads the planned ranges one at a time and checks every element exactly.
#pragma once

#include <vector>

#include "range_planner.h"

namespace scipis::block {

class Scan {
public:
	Scan(OpenIndex &ix, Predicate p, const scipis_block_read_opts &o);
	// One read per call; false at the end.
	bool next(scipis_block_hits *out);
	scipis_block_scan_info info{};

private:
	OpenIndex &ix_;
	Predicate p_;
	scipis_block_read_opts o_;
	std::vector<Read> reads_;
	size_t i_ = 0;
	std::vector<int> read_vars_;
	std::vector<std::vector<double>> cols_;
	std::vector<unsigned char> raw_;
	std::vector<uint8_t> mask_;
	std::vector<int64_t> elements_;
	std::vector<double> values_;
};

}  // namespace scipis::block
