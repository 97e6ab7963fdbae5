#include "layout.h"

#include <algorithm>

#include "block_error.h"
#include "scipis_engine.h"

namespace scipis::block {

static int64_t mul_checked(int64_t a, int64_t b, const char *what)
{
	int64_t r;
	if (__builtin_mul_overflow(a, b, &r) || r > (int64_t(1) << 60))
		fail(SCIPIS_E_INVALID, "%s is too large", what);
	return r;
}

void Layout::init(const std::vector<int64_t> &shp, const std::vector<int64_t> &bshp,
				  int64_t pelems)
{
	if (shp.empty())
		fail(SCIPIS_E_INVALID, "shape must have at least one dimension");
	if ((int)shp.size() > SCIPIS_BLOCK_MAX_DIMS)
		fail(SCIPIS_E_INVALID, "shape has %zu dimensions; at most %d are supported",
			 shp.size(), SCIPIS_BLOCK_MAX_DIMS);
	if (!bshp.empty() && bshp.size() != shp.size())
		fail(SCIPIS_E_INVALID, "block_shape has %zu dimensions but shape has %zu",
			 bshp.size(), shp.size());
	ndims = (int)shp.size();
	shape = shp;
	block_shape = bshp.empty() ? shp : bshp;
	grid.assign(ndims, 0);
	elements = 1;
	n_blocks = 1;
	for (int d = 0; d < ndims; d++) {
		if (shape[d] <= 0)
			fail(SCIPIS_E_INVALID, "shape[%d] must be positive, not %lld", d,
				 (long long)shape[d]);
		if (block_shape[d] <= 0)
			fail(SCIPIS_E_INVALID, "block_shape[%d] must be positive, not %lld", d,
				 (long long)block_shape[d]);
		if (block_shape[d] > shape[d])
			fail(SCIPIS_E_INVALID, "block_shape[%d] = %lld is larger than shape[%d] = %lld",
				 d, (long long)block_shape[d], d, (long long)shape[d]);
		elements = mul_checked(elements, shape[d], "the array (product of shape)");
		grid[d] = (shape[d] + block_shape[d] - 1) / block_shape[d];
		n_blocks = mul_checked(n_blocks, grid[d], "the number of storage blocks");
	}
	if (n_blocks > kMaxBlocks)
		fail(SCIPIS_E_INVALID, "block_shape gives %lld storage blocks; at most %lld are supported",
			 (long long)n_blocks, (long long)kMaxBlocks);
	if (pelems <= 0)
		fail(SCIPIS_E_INVALID, "partition size must be positive");
	partition_elems = pelems;
	block_first_elem.assign(n_blocks + 1, 0);
	block_first_part.assign(n_blocks + 1, 0);
	std::vector<int64_t> origin(ndims), extent(ndims);
	for (int64_t b = 0; b < n_blocks; b++) {
		block_geometry(b, origin.data(), extent.data());
		int64_t n = 1;
		for (int d = 0; d < ndims; d++)
			n *= extent[d];
		block_first_elem[b + 1] = block_first_elem[b] + n;
		block_first_part[b + 1] = block_first_part[b] + (n + pelems - 1) / pelems;
		if (block_first_part[b + 1] > kMaxPartitions)
			fail(SCIPIS_E_INVALID,
				 "the partitions are too small for this array: more than %lld partitions",
				 (long long)kMaxPartitions);
	}
}

void Layout::block_geometry(int64_t b, int64_t *origin, int64_t *extent) const
{
	for (int d = ndims - 1; d >= 0; d--) {
		int64_t c = b % grid[d];
		b /= grid[d];
		origin[d] = c * block_shape[d];
		extent[d] = std::min(block_shape[d], shape[d] - origin[d]);
	}
}

void Layout::coords(int64_t element, int64_t *out) const
{
	for (int d = ndims - 1; d >= 0; d--) {
		out[d] = element % shape[d];
		element /= shape[d];
	}
}

BlockMapper::BlockMapper(const Layout &l, int64_t block) : l_(l)
{
	l.block_geometry(block, origin_, extent_);
	contiguous_ = true;
	for (int d = 1; d < l.ndims; d++)
		if (extent_[d] != l.shape[d])
			contiguous_ = false;
	base_ = 0;
	for (int d = 0; d < l.ndims; d++)
		base_ = base_ * l.shape[d] + origin_[d];
}

int64_t BlockMapper::slow(int64_t local) const
{
	int64_t c[16];
	for (int d = l_.ndims - 1; d >= 0; d--) {
		c[d] = local % extent_[d];
		local /= extent_[d];
	}
	int64_t g = 0;
	for (int d = 0; d < l_.ndims; d++)
		g = g * l_.shape[d] + origin_[d] + c[d];
	return g;
}

}  // namespace scipis::block
