#include "range_planner.h"

#include <algorithm>
#include <cmath>

#include "block_error.h"

namespace scipis::block {

std::unique_ptr<OpenIndex> open_index(const std::string &path)
{
	auto ix = std::make_unique<OpenIndex>();
	ix->d = read_index(path);
	const Layout &l = ix->d.layout;
	for (const VarInfo &v : ix->d.vars) {
		ix->names.push_back(v.name);
		ix->files.push_back(std::make_unique<DataFile>());
		ix->files.back()->open(v.name, v.path);
		check_unchanged(v, *ix->files.back());
		ix->widest = std::max(ix->widest, dtype_size(v.dtype));
	}
	ix->block_summary.resize(ix->d.vars.size());
	for (size_t v = 0; v < ix->d.vars.size(); v++) {
		auto &bs = ix->block_summary[v];
		bs.resize((size_t)l.n_blocks);
		for (int64_t b = 0; b < l.n_blocks; b++) {
			Summary s{INFINITY, -INFINITY, 0, (uint64_t)l.block_elems(b)};
			for (int64_t g = l.block_first_part[b]; g < l.block_first_part[b + 1]; g++) {
				const Record &r = ix->d.parts[v][g];
				s.min = std::min(s.min, r.min);
				s.max = std::max(s.max, r.max);
				s.nans += r.nans;
			}
			bs[b] = s;
		}
	}
	return ix;
}

namespace {

void partition_summaries(const OpenIndex &ix, int64_t b, int64_t q, std::vector<Summary> &s)
{
	const Layout &l = ix.d.layout;
	int64_t g = l.block_first_part[b] + q;
	uint64_t n = (uint64_t)std::min(l.partition_elems, l.block_elems(b) - q * l.partition_elems);
	for (size_t v = 0; v < s.size(); v++) {
		const Record &r = ix.d.parts[v][g];
		s[v] = Summary{r.min, r.max, r.nans, n};
	}
}

}  // namespace

std::vector<Read> plan_reads(const OpenIndex &ix, const Predicate &p,
							 const scipis_block_read_opts &o, uint64_t *candidates)
{
	const Layout &l = ix.d.layout;
	int64_t part_bytes = l.partition_elems * ix.widest;
	int64_t max_gap = o.max_gap < 0 ? kDefaultMaxGap : o.max_gap;
	int64_t max_read = o.max_read <= 0 ? kDefaultMaxRead : o.max_read;
	int64_t gap_parts = max_gap / part_bytes;
	int64_t read_parts = std::max<int64_t>(1, max_read / part_bytes);
	std::vector<Summary> s(ix.d.vars.size());
	std::vector<Read> out;
	uint64_t ncand = 0;
	for (int64_t b = 0; b < l.n_blocks; b++) {
		int64_t np = l.block_parts(b);
		bool whole = o.prune == SCIPIS_PRUNE_NONE;
		if (o.prune == SCIPIS_PRUNE_BLOCK) {
			for (size_t v = 0; v < s.size(); v++)
				s[v] = ix.block_summary[v][b];
			if (!may_match(p, s.data()))
				continue;
			whole = true;
		}
		Read cur{b, -1, 0, 0, 0, 0};
		auto emit = [&] {
			if (cur.first_part < 0)
				return;
			cur.elem_begin = cur.first_part * l.partition_elems;
			cur.elem_end = std::min(l.block_elems(b), (cur.first_part + cur.span) * l.partition_elems);
			out.push_back(cur);
			cur.first_part = -1;
		};
		for (int64_t q = 0; q < np; q++) {
			if (!whole) {
				partition_summaries(ix, b, q, s);
				if (!may_match(p, s.data()))
					continue;
			}
			ncand++;
			int64_t end = cur.first_part + cur.span;
			if (cur.first_part >= 0 && q - end <= gap_parts && q + 1 - cur.first_part <= read_parts) {
				cur.span = q + 1 - cur.first_part;
				cur.cand++;
			} else {
				emit();
				cur.first_part = q;
				cur.span = 1;
				cur.cand = 1;
			}
		}
		emit();
	}
	if (candidates)
		*candidates = ncand;
	return out;
}

void read_minmax(const OpenIndex &ix, const Predicate &p, const scipis_block_read_opts &o,
				 const Read &r, int var, double *mn, double *mx)
{
	std::vector<Summary> s(ix.d.vars.size());
	double lo = INFINITY, hi = -INFINITY;
	for (int64_t q = r.first_part; q < r.first_part + r.span; q++) {
		partition_summaries(ix, r.block, q, s);
		if (o.prune == SCIPIS_PRUNE_PARTITION && !may_match(p, s.data()))
			continue;
		lo = std::min(lo, s[var].min);
		hi = std::max(hi, s[var].max);
	}
	if (lo > hi)
		lo = hi = NAN;
	*mn = lo;
	*mx = hi;
}

}  // namespace scipis::block
