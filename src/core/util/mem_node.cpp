#include "util/mem_node.h"

namespace scipis {

namespace {
thread_local int memory_node = -1;
thread_local MemoryBinder* memory_binder = nullptr;
}  // namespace

void set_thread_memory_node(int node, MemoryBinder* binder) {
  memory_node = binder ? node : -1;
  memory_binder = binder;
}

void bind_to_thread_node(void* p, size_t bytes) {
  if (memory_node >= 0 && p && bytes) memory_binder->bind(p, bytes, memory_node);
}

}  // namespace scipis
