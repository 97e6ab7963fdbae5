// A recycled pool of aligned read buffers (aligned for O_DIRECT). Each
// buffer keeps kCarryRoom bytes in front of its read area for the partial
// token carried over from the previous block.
#pragma once

#include <atomic>
#include <cstddef>
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
  size_t bytes_;
  std::vector<unsigned char*> all_;
  BoundedQueue<unsigned char*> free_;
};

}  // namespace scipis
