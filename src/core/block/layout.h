// Geometry of an indexed array: the global shape, the grid of storage blocks
// written one after another (row-major over the grid, each block row-major
// inside, edge blocks clipped), and the fixed partitions inside each block.
#pragma once

#include <cstdint>
#include <vector>

namespace scipis::block {

constexpr int64_t kMaxBlocks = int64_t(1) << 24;
constexpr int64_t kMaxPartitions = int64_t(1) << 24;	// per variable: 384 MiB of records

struct Layout {
	int ndims = 0;
	std::vector<int64_t> shape, block_shape, grid;
	int64_t elements = 0;
	int64_t n_blocks = 0;
	int64_t partition_elems = 0;
	std::vector<int64_t> block_first_elem;	// file order, n_blocks + 1 entries
	std::vector<int64_t> block_first_part;	// n_blocks + 1 entries

	// Validates and derives everything; block_shape empty means one block.
	void init(const std::vector<int64_t> &shape, const std::vector<int64_t> &block_shape,
			  int64_t partition_elems);

	int64_t block_elems(int64_t b) const { return block_first_elem[b + 1] - block_first_elem[b]; }
	int64_t block_parts(int64_t b) const { return block_first_part[b + 1] - block_first_part[b]; }
	int64_t partitions() const { return block_first_part[n_blocks]; }
	void block_geometry(int64_t b, int64_t *origin, int64_t *extent) const;
	void coords(int64_t element, int64_t *out) const;
};

// Maps positions inside one block to global element indexes.
class BlockMapper {
public:
	BlockMapper(const Layout &l, int64_t block);
	int64_t global(int64_t local) const
	{
		if (contiguous_)
			return base_ + local;
		return slow(local);
	}

private:
	int64_t slow(int64_t local) const;
	const Layout &l_;
	bool contiguous_;
	int64_t base_;
	int64_t origin_[16], extent_[16];
};

}  // namespace scipis::block
