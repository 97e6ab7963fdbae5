#include "pipeline/buffer_pool.h"

#include <cstdlib>
#include <new>

#include "util/mem_account.h"

namespace scipis {

BufferPool::BufferPool(size_t count, size_t block_size, const std::atomic<bool>* stop,
                       MemoryBinder* binder, int node)
    : bytes_(buffer_bytes_for(block_size)), count_(count), binder_(binder), node_(node), free_(count, stop) {
  all_.reserve(count);
}

unsigned char* BufferPool::grow() {
  std::lock_guard<std::mutex> lk(mu_);
  if (all_.size() >= count_) return nullptr;
  void* p = std::aligned_alloc(4096, bytes_);
  if (!p) throw std::bad_alloc();
  if (binder_) binder_->bind(p, bytes_, node_);  // before the first touch
  all_.push_back(static_cast<unsigned char*>(p));
  mem::charge(bytes_);
  return static_cast<unsigned char*>(p);
}

BufferPool::~BufferPool() {
  for (auto* b : all_) std::free(b);
  mem::release(all_.size() * bytes_);
}

}  // namespace scipis
