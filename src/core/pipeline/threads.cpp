#include <pthread.h>
#include <signal.h>

#include "pipeline/pipeline.h"

namespace scipis {

void block_all_signals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

}  // namespace scipis
