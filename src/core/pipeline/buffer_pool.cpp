#include "pipeline/buffer_pool.h"

#include <cstdlib>
#include <new>

namespace scipis {

BufferPool::BufferPool(size_t count, size_t block_size, const std::atomic<bool>* stop)
    : bytes_((kCarryRoom + block_size + 4095) & ~size_t{4095}), free_(count, stop) {
  const size_t bytes = bytes_;
  for (size_t i = 0; i < count; i++) {
    void* p = std::aligned_alloc(4096, bytes);
    if (!p) {
      for (auto* b : all_) std::free(b);
      throw std::bad_alloc();
    }
    all_.push_back(static_cast<unsigned char*>(p));
    free_.push(static_cast<unsigned char*>(p));
  }
}

BufferPool::~BufferPool() {
  for (auto* b : all_) std::free(b);
}

}  // namespace scipis
