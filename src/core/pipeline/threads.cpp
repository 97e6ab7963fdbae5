#include <numa.h>
#include <pthread.h>
#include <signal.h>

#include "pipeline/pipeline.h"

namespace scipis {

void block_all_signals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

void place_on_numa_node(int index) {
  static const int nodes = numa_available() < 0 ? 1 : numa_num_configured_nodes();
  if (nodes > 1) numa_run_on_node(index % nodes);
}

}  // namespace scipis
