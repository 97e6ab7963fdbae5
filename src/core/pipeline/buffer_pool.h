// A recycled pool of aligned read buffers (aligned for O_DIRECT). Each
// buffer keeps kCarryRoom bytes in front of its read area for the partial
// token carried over from the previous block. Buffers are allocated when
// first needed, up to the pool's count: a refresh of a few named paths
// reads a few KiB, and mapping and unmapping a build's worth of buffers
// was a fifth of a refresh that found nothing to do.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include "pipeline/queue.h"
#include "util/mem_node.h"

namespace scipis {

constexpr size_t kCarryRoom = 4096;

class BufferPool {
 public:
  // With a binder, every buffer's pages are asked to come from node.
  BufferPool(size_t count, size_t block_size, const std::atomic<bool>* stop,
             MemoryBinder* binder = nullptr, int node = -1);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // nullptr when the build stopped while waiting.
  unsigned char* acquire() {
    if (auto b = free_.try_pop()) return *b;
    if (unsigned char* b = grow()) return b;
    auto b = free_.pop();
    return b ? *b : nullptr;
  }
  void release(unsigned char* b) { free_.push(b); }
  unsigned char* read_area(unsigned char* b) const { return b + kCarryRoom; }
  // Bytes of each buffer, from the start of its carry room.
  size_t buffer_bytes() const { return bytes_; }
  static size_t buffer_bytes_for(size_t block_size) {
    return (kCarryRoom + block_size + 4095) & ~size_t{4095};
  }

 private:
  // A new buffer, or nullptr when all count are out already.
  unsigned char* grow();

  size_t bytes_, count_;
  MemoryBinder* binder_;
  int node_;
  std::mutex mu_;  // guards all_
  std::vector<unsigned char*> all_;
  BoundedQueue<unsigned char*> free_;
};

}  // namespace scipis
