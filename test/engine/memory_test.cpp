// Memory stays within what the options allow, whatever the collection's
// size. The engine accounts for its own large allocations (term tables and
// arenas, path indexes, read buffers, flush buffers in flight); the test
// bounds that account, which no allocator, sanitizer or machine load
// moves, by scipis_build_memory_bound, which depends on the options alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "index/huge_pages.h"
#include "index/out_buffer.h"
#include "util/mem_account.h"

#include "test_util.h"

namespace {

struct BuildRun {
  uint64_t peak = 0;
  uint64_t segments = 0;
  uint64_t bytes = 0;
};

// A build over `mib` MiB of mostly distinct tokens with 2 x (1 MiB + 1 MiB)
// of index memory: it flushes dozens of times.
BuildRun build_peak(int mib, const scipis_options& o) {
  std::string root = testutil::scratch_dir();
  for (int f = 0; f < mib; f++) {
    std::string text;
    text.reserve(1 << 20);
    for (unsigned i = 0; text.size() < (1u << 20); i++)
      text += "id" + std::to_string((f * 2654435761u + i * 40503u) % 9000011u) + (i % 8 ? " " : "\n");
    testutil::write(root + "/f" + std::to_string(f) + ".log", text);
  }
  std::string dir = testutil::scratch_dir();
  EXPECT_EQ(scipis_memory_held(), 0u) << "nothing is held between builds";
  scipis_memory_reset_peak();
  scipis_build_stats st;
  scipis_error err;
  BuildRun r;
  EXPECT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  r.peak = scipis_memory_peak();
  r.segments = st.segments;
  r.bytes = st.bytes;
  EXPECT_EQ(scipis_memory_held(), 0u) << "a finished build holds nothing";
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
  return r;
}

scipis_options small_options() {
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  o.reader_threads = 2;
  o.writer_threads = 1;
  o.tfidf_index_size = 1 << 20;
  o.path_index_size = 1 << 20;
  o.block_size = 1 << 16;
  return o;
}

}  // namespace

TEST(Memory, BuildMemoryIsBoundedByTheOptionsNotTheCollection) {
  const scipis_options o = small_options();
  const uint64_t bound = scipis_build_memory_bound(&o);
  const BuildRun small = build_peak(12, o);
  const BuildRun large = build_peak(60, o);
  EXPECT_GT(large.segments, 4 * small.segments) << "five times the input flushes about five times as often";
  // The account is real: both indexers' term regions were held at once.
  EXPECT_GE(small.peak, 2u * o.tfidf_index_size);
  EXPECT_LE(small.peak, bound) << "peak " << small.peak << " bytes for 12 MiB";
  EXPECT_LE(large.peak, bound) << "peak " << large.peak << " bytes for 60 MiB";
  std::printf("accounted peak: %llu bytes for 12 MiB, %llu for 60 MiB; bound %llu\n",
              static_cast<unsigned long long>(small.peak), static_cast<unsigned long long>(large.peak),
              static_cast<unsigned long long>(bound));
}

TEST(Memory, TheBoundGrowsWithTheOptionsOnly) {
  scipis_options o = small_options();
  const uint64_t base = scipis_build_memory_bound(&o);
  o.tfidf_index_size = 8 << 20;
  const uint64_t bigger = scipis_build_memory_bound(&o);
  EXPECT_GT(bigger, base);
  o.indexer_threads = 4;
  EXPECT_GT(scipis_build_memory_bound(&o), bigger);
  const BuildRun r = build_peak(4, o);
  EXPECT_LE(r.peak, scipis_build_memory_bound(&o));
}

// A flush buffer that must grow keeps the pages it has touched: they move
// into the larger mapping (a fresh one would be faulted in and cleared by
// the kernel again, which on a VM costs as much as writing them). What it
// held is still there, and the account holds the larger mapping only.
TEST(Memory, AGrowingFlushBufferKeepsItsPages) {
  const size_t before = scipis::mem::held();
  {
    scipis::OutBuffer b(3 * scipis::kHugePage);
    for (size_t i = 0; i < b.size(); i++) b.data()[i] = static_cast<char>(i * 7 + 1);
    const size_t small = scipis::mem::held() - before;
    EXPECT_GE(small, 3 * scipis::kHugePage);
    b.reset(20 * scipis::kHugePage);
    ASSERT_EQ(b.size(), 20 * scipis::kHugePage);
    size_t wrong = 0;
    for (size_t i = 0; i < 3 * scipis::kHugePage; i++) wrong += b.data()[i] != static_cast<char>(i * 7 + 1);
    EXPECT_EQ(wrong, 0u) << "the bytes written before it grew";
    std::memset(b.data(), 0, b.size());  // the new part is writable too
    const size_t large = scipis::mem::held() - before;
    EXPECT_GE(large, 20 * scipis::kHugePage);
    EXPECT_LE(large, 2 * 20 * scipis::kHugePage) << "the old mapping is not held beside the new";
    b.reset(4 * scipis::kHugePage);  // less: kept as it is
    EXPECT_EQ(scipis::mem::held() - before, large);
  }
  EXPECT_EQ(scipis::mem::held(), before);
}

// huge_grow within the mapping it has stays where it is; past it, the
// region moves with what it holds, and the account follows the mapping.
TEST(Memory, AGrownRegionKeepsWhatItHolds) {
  const size_t before = scipis::mem::held();
  const size_t mib = size_t{1} << 20;
  auto* p = static_cast<char*>(scipis::huge_alloc(3 * mib));
  std::memset(p, 'x', 3 * mib);
  EXPECT_EQ(scipis::huge_grow(p, 3 * mib, 3 * mib + mib / 2), p) << "4 MiB were mapped for 3";
  auto* q = static_cast<char*>(scipis::huge_grow(p, 3 * mib + mib / 2, 9 * mib));
  EXPECT_EQ(std::memchr(q, 'y', 3 * mib), nullptr);
  EXPECT_EQ(std::count(q, q + 3 * mib, 'x'), static_cast<long>(3 * mib));
  EXPECT_EQ(scipis::mem::held() - before, 10 * mib) << "9 MiB in 2 MiB pages";
  scipis::huge_free(q, 9 * mib);
  EXPECT_EQ(scipis::mem::held(), before);
}
