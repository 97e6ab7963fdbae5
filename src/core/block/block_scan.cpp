#include "block_scan.h"

#include <algorithm>

namespace scipis::block {

Scan::Scan(OpenIndex &ix, Predicate p, const scipis_block_read_opts &o)
	: ix_(ix), p_(std::move(p)), o_(o)
{
	reads_ = plan_reads(ix_, p_, o_, &info.candidate_partitions);
	cols_.resize(ix_.d.vars.size());
	for (size_t v = 0; v < ix_.d.vars.size(); v++)
		if (!o_.count_only || p_.uses[v])
			read_vars_.push_back((int)v);
}

bool Scan::next(scipis_block_hits *out)
{
	*out = scipis_block_hits{nullptr, nullptr, 0};
	if (i_ >= reads_.size())
		return false;
	const Read &r = reads_[i_++];
	const Layout &l = ix_.d.layout;
	size_t n = (size_t)(r.elem_end - r.elem_begin);
	std::vector<const double *> ptrs(ix_.d.vars.size(), nullptr);
	for (int v : read_vars_) {
		const VarInfo &vi = ix_.d.vars[v];
		int es = dtype_size(vi.dtype);
		int64_t off = vi.header_bytes + (l.block_first_elem[r.block] + r.elem_begin) * es;
		cols_[v].resize(n);
		if (vi.dtype == DType::Float64) {
			ix_.files[v]->read(cols_[v].data(), n * 8, off);
		} else {
			raw_.resize(n * es);
			ix_.files[v]->read(raw_.data(), n * es, off);
			to_double(vi.dtype, raw_.data(), n, cols_[v].data());
		}
		ptrs[v] = cols_[v].data();
		info.bytes_read += n * es;
		info.read_requests++;
	}
	info.elements_checked += n;
	mask_.resize(n);
	evaluate(p_, ptrs.data(), n, mask_.data());
	size_t hits = 0;
	for (size_t i = 0; i < n; i++)
		hits += mask_[i];
	info.hits += hits;
	out->n = hits;
	if (o_.count_only || hits == 0)
		return true;
	size_t nv = ix_.d.vars.size();
	elements_.resize(hits);
	values_.resize(hits * nv);
	BlockMapper map(l, r.block);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!mask_[i])
			continue;
		elements_[k] = map.global(r.elem_begin + (int64_t)i);
		for (size_t v = 0; v < nv; v++)
			values_[k * nv + v] = cols_[v][i];
		k++;
	}
	out->elements = elements_.data();
	out->values = values_.data();
	return true;
}

}  // namespace scipis::block
