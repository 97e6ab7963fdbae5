#include "pipeline/buffer_pool.h"

#include <cstdlib>
#include <new>

#include "util/mem_account.h"

namespace scipis {

BufferPool::BufferPool(size_t count, size_t block_size, const std::atomic<bool>* stop,
                       MemoryBinder* binder, int node)
    : bytes_(buffer_bytes_for(block_size)), free_(count, stop) {
  const size_t bytes = bytes_;
  for (size_t i = 0; i < count; i++) {
    void* p = std::aligned_alloc(4096, bytes);
    if (!p) {
      for (auto* b : all_) std::free(b);
      mem::release(all_.size() * bytes);
      throw std::bad_alloc();
    }
    if (binder) binder->bind(p, bytes, node);  // before the first touch
    all_.push_back(static_cast<unsigned char*>(p));
    mem::charge(bytes);
    free_.push(static_cast<unsigned char*>(p));
  }
}

BufferPool::~BufferPool() {
  for (auto* b : all_) std::free(b);
  mem::release(all_.size() * bytes_);
}

}  // namespace scipis
