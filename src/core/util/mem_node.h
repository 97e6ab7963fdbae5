// The NUMA node a thread's large regions should come from. The pipeline
// sets it on its pinned threads; huge_alloc binds every region it maps
// fresh there, so an indexer's term table, arena and flush buffers live
// on the indexer's node however they grow.
#pragma once

#include <cstddef>

namespace scipis {

class MemoryBinder {
 public:
  virtual ~MemoryBinder() = default;
  // Asks for a region's pages to come from a topology node.
  virtual void bind(void* p, size_t bytes, int node) = 0;
};

// node < 0: no preference (the default).
void set_thread_memory_node(int node, MemoryBinder* binder);
void bind_to_thread_node(void* p, size_t bytes);

}  // namespace scipis
