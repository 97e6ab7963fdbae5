// Segment files written past the page cache (write_file_direct, option
// direct_writes): every byte lands at each edge of the 4 KiB blocks, from
// aligned and unaligned memory, where O_DIRECT is refused too; a build
// with it finds what a build without it finds.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "test_util.h"
#include "util/fileio.h"

namespace {

// Bytes no two offsets share within a period longer than a block.
std::string pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

// Memory at a 4 KiB boundary plus shift, holding bytes.
struct Placed {
  Placed(const std::string& bytes, size_t shift)
      : mem(static_cast<char*>(std::aligned_alloc(4096, ((bytes.size() + shift) / 4096 + 1) * 4096))) {
    std::memcpy(mem + shift, bytes.data(), bytes.size());
    view = std::string_view(mem + shift, bytes.size());
  }
  ~Placed() { std::free(mem); }
  char* mem;
  std::string_view view;
};

const size_t kSizes[] = {0, 1, 4095, 4096, 4097, 3 * 4096, (size_t{1} << 20) - 1, (size_t{1} << 20) + 4096 + 17,
                         (size_t{2} << 20) + 5};

void check_sizes(int refusal) {
  const std::string dir = testutil::scratch_dir();
  ASSERT_FALSE(dir.empty());
  scipis::set_direct_refusal_for_tests(refusal);
  scipis::DirectBounce bounce;
  unsigned seed = 0;
  for (size_t n : kSizes) {
    for (size_t shift : {size_t{0}, size_t{1}, size_t{512}}) {
      const std::string bytes = pattern(n, seed++);
      Placed placed(bytes, shift);
      const std::string path = dir + "/f" + std::to_string(n) + "-" + std::to_string(shift);
      // A longer file there before: the write leaves exactly the new bytes.
      testutil::write(path, pattern(n + 9000, 99));
      scipis::write_file_direct(path, placed.view, bounce);
      const std::string got = testutil::read(path);
      ASSERT_EQ(got.size(), n) << "size " << n << " shift " << shift << " refusal " << refusal;
      EXPECT_TRUE(got == bytes) << "size " << n << " shift " << shift << " refusal " << refusal;
    }
  }
  scipis::set_direct_refusal_for_tests(0);
  testutil::rm_rf(dir);
}

}  // namespace

TEST(DirectWrite, EveryByteAtEachBlockEdge) { check_sizes(0); }

TEST(DirectWrite, RefusedAtTheOpenWritesBuffered) { check_sizes(1); }

TEST(DirectWrite, RefusedAtTheFirstWriteGoesOnBuffered) { check_sizes(2); }

// What O_DIRECT is for: the whole blocks written never enter the page
// cache (on ext4, xfs or btrfs).
TEST(DirectWrite, WholeBlocksStayOutOfThePageCache) {
  const std::string dir = testutil::scratch_dir();
  if (!testutil::on_block_file_system(dir)) {
    testutil::rm_rf(dir);
    GTEST_SKIP() << "scratch directory not on ext4, xfs or btrfs";
  }
  const size_t n = (size_t{1} << 20) + 100;
  const std::string bytes = pattern(n, 7);
  Placed placed(bytes, 0);
  scipis::DirectBounce bounce;
  const std::string path = dir + "/direct";
  scipis::write_file_direct(path, placed.view, bounce);
  scipis::Fd fd = scipis::open_read(path);
  void* map = mmap(nullptr, n, PROT_READ, MAP_SHARED, fd.get(), 0);
  ASSERT_NE(map, MAP_FAILED);
  unsigned char resident[(n + 4095) / 4096];
  ASSERT_EQ(mincore(map, n, resident), 0);
  size_t cached = 0;
  for (size_t i = 0; i < n / 4096; i++) cached += resident[i] & 1;
  munmap(map, n);
  EXPECT_EQ(cached, 0u) << "of " << n / 4096 << " whole blocks";
  testutil::rm_rf(dir);
}

// A build whose segment files pass 256 KiB: with direct_writes and
// without, the same answers.
TEST(DirectWrite, BuildFindsWhatABufferedBuildFinds) {
  const std::string root = testutil::scratch_dir();
  for (int i = 0; i < 40; i++) {
    std::string text;
    for (int w = 0; w < 12000; w++)
      text += "t" + std::to_string((w * 7919 + i * 104729) % 60000) + (w % 11 ? " " : "\n");
    testutil::write(root + "/f" + std::to_string(i) + ".log", text);
  }
  const std::string a = testutil::scratch_dir(), b = testutil::scratch_dir();
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 1;
  scipis_build_stats st;
  scipis_error err;
  o.direct_writes = 0;
  ASSERT_EQ(testutil::build(a, root, o, &st, &err), 0) << err.message;
  o.direct_writes = 1;
  ASSERT_EQ(testutil::build(b, root, o, &st, &err), 0) << err.message;
  // The case it is for: some file of the segment is that large.
  size_t largest = 0;
  std::vector<std::string> dirs{b};
  while (!dirs.empty()) {
    const std::string d = dirs.back();
    dirs.pop_back();
    for (const std::string& name : scipis::list_dir(d)) {
      struct stat s;
      if (lstat((d + "/" + name).c_str(), &s) != 0) continue;
      if (S_ISDIR(s.st_mode)) dirs.push_back(d + "/" + name);
      else largest = std::max<size_t>(largest, static_cast<size_t>(s.st_size));
    }
  }
  EXPECT_GE(largest, size_t{256} << 10);
  for (const char* q : {"t1", "t17 t4242", "t59999 t0 t123"}) {
    auto x = testutil::search(a, q, -1), y = testutil::search(b, q, -1);
    ASSERT_EQ(x.size(), y.size()) << q;
    for (size_t i = 0; i < x.size(); i++) {
      EXPECT_EQ(x[i].path, y[i].path) << q;
      EXPECT_EQ(x[i].score, y[i].score) << q;
    }
  }
  testutil::rm_rf(a);
  testutil::rm_rf(b);
  testutil::rm_rf(root);
}
