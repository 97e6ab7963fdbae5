// Memory stays within the configured index sizes plus buffers, whatever the
// collection's size: a build over a tree many times the index memory is
// run in a child process and its peak resident memory is bounded.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

namespace {

long rss_kb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// Peak resident growth (KiB) of a build over `files` MiB of mostly distinct
// tokens with 2 x (1 MiB + 1 MiB) of index memory, run in a child process;
// fills segments.
long build_growth(int files, long* segments) {
  std::string root = testutil::scratch_dir();
  for (int f = 0; f < files; f++) {
    std::string text;
    text.reserve(1 << 20);
    for (unsigned i = 0; text.size() < (1u << 20); i++)
      text += "id" + std::to_string((f * 2654435761u + i * 40503u) % 9000011u) + (i % 8 ? " " : "\n");
    testutil::write(root + "/f" + std::to_string(f) + ".log", text);
  }
  std::string dir = testutil::scratch_dir();
  int pipefd[2];
  if (pipe(pipefd) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    long before = rss_kb();
    scipis_options o;
    scipis_options_init(&o);
    o.indexer_threads = 2;
    o.reader_threads = 2;
    o.tfidf_index_size = 1 << 20;
    o.path_index_size = 1 << 20;
    o.block_size = 1 << 16;
    scipis_build_stats st;
    scipis_error err;
    int rc = testutil::build(dir, root, o, &st, &err);
    long grown[3] = {rc, rss_kb() - before, static_cast<long>(st.segments)};
    if (write(pipefd[1], grown, sizeof grown) != sizeof grown) _exit(2);
    _exit(0);
  }
  long grown[3] = {-1, 0, 0};
  ssize_t got = read(pipefd[0], grown, sizeof grown);
  int status = 0;
  waitpid(pid, &status, 0);
  close(pipefd[0]);
  close(pipefd[1]);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
  if (got != static_cast<ssize_t>(sizeof grown) || grown[0] != 0) return -1;
  *segments = grown[2];
  return grown[1];
}

}  // namespace

TEST(Memory, BuildMemoryDoesNotGrowWithTheCollection) {
  long seg_small = 0, seg_large = 0;
  long small = build_growth(12, &seg_small);
  long large = build_growth(60, &seg_large);
  ASSERT_GT(small, 0) << "the build failed";
  ASSERT_GT(large, 0) << "the build failed";
  EXPECT_GT(seg_large, 4 * seg_small) << "five times the input flushes about five times as often";
  // Index memory 4 MiB, read buffers, serialised flushes in flight, thread
  // stacks, allocator slack: the same for 12 and for 60 MiB of input.
  EXPECT_LT(large, small + small / 2 + 4096)
      << "peak growth " << small << " KiB for 12 MiB, " << large << " KiB for 60 MiB";
  EXPECT_LT(large, 60 * 1024) << "peak growth must stay below the input size";
}
