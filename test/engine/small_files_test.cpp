// Many tiny and empty files: readers pack small files back to back into
// one buffer and one message (pipeline/file_pack.h). Whatever mix of packed
// and streamed files the tuning gives, every file must come out as its own
// document, with its own size and token count, no token running from one
// file into the next, and the searches of the brute-force scorer.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <random>

#include "brute_force.h"
#include "pipeline/pipeline.h"
#include "test_util.h"

namespace {

struct SmallCorpus {
  std::string root;
  std::vector<brute::Doc> docs;
  std::map<std::string, uint64_t> sizes;
};

// 1500 files: a directory of 700 (more than one crawler batch), nested
// directories of a few, most files a few bytes to a few hundred, some empty,
// a few of several KiB. Every file starts with a token "s<k>" and ends with
// a token "e<k>" with no delimiter around them, so that two files read as
// one would show tokens like "e3s7"; some end in a run of over 255 bytes.
SmallCorpus make_corpus(unsigned seed) {
  SmallCorpus c;
  c.root = testutil::scratch_dir();
  std::mt19937 rng(seed);
  const std::string dirs[] = {"/many", "/a", "/a/b", "/a/b/c", "/d"};
  for (const auto& d : dirs) mkdir((c.root + d).c_str(), 0755);
  for (int f = 0; f < 1500; f++) {
    std::string content;
    const unsigned kind = rng() % 20;
    if (kind == 0) {
      // empty
    } else if (kind == 1) {
      content = "x";
    } else {
      content = "s" + std::to_string(rng() % 10);
      // Mostly tiny; one in 25 several KiB (streamed at small block sizes).
      const int words = kind == 2 ? 600 + static_cast<int>(rng() % 1500)
                                  : static_cast<int>(rng() % 40);
      for (int w = 0; w < words; w++) {
        content += " .-:\n,"[rng() % 6];
        content += (rng() % 5 == 0 ? "W" : "w") + std::to_string(static_cast<int>(
                                                       std::pow((rng() % 1000) / 1000.0, 3) * 200));
      }
      if (rng() % 30 == 0) content += " " + std::string(256 + rng() % 300, 'z');
      content += " e" + std::to_string(rng() % 10);  // the last byte a token byte
    }
    const std::string& dir = f < 700 ? dirs[0] : dirs[1 + rng() % 4];
    const std::string path = c.root + dir + "/f" + std::to_string(f) + ".txt";
    testutil::write(path, content);
    brute::Doc d;
    d.path = path;
    for (const auto& t : brute::tokenize(content)) {
      d.tf[t]++;
      d.len++;
    }
    c.docs.push_back(d);
    c.sizes[path] = content.size();
  }
  return c;
}

void expect_same_hits(const std::vector<testutil::Result>& got,
                 const std::vector<brute::Hit>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_EQ(got[i].path, want[i].path) << what << " at " << i;
    EXPECT_NEAR(got[i].score, want[i].score, 1e-9 * std::fabs(want[i].score)) << what;
  }
}

}  // namespace

TEST(SmallFiles, PackedFilesMatchBruteForce) {
  SmallCorpus c = make_corpus(7);
  uint64_t total_bytes = 0;
  for (const auto& [p, n] : c.sizes) total_bytes += n;
  struct Tuning {
    const char* name;
    int readers, indexers;
    uint64_t block, path_size, tf_size;
    int direct;
    // Indexers that read (readers 0) find no file in the page cache (1:
    // each is read later) or a file system that cannot tell (2).
    int nowait_refusal = 0;
  };
  const Tuning tunings[] = {
      {"default", 0, 0, 1u << 20, 64ull << 20, 128ull << 20, 0},  // all packed
      {"block4k", 2, 3, 4096, 64ull << 20, 128ull << 20, 0},     // packed and streamed
      {"block512", 3, 2, 512, 64ull << 20, 128ull << 20, 0},
      // Flushes in the middle of a pack: both indexes fill after a few hundred files.
      {"tiny-indexes", 2, 2, 65536, 65536, 65536, 0},
      {"direct", 2, 2, 8192, 64ull << 20, 128ull << 20, 1},  // never packed
      {"read-later", 0, 2, 1u << 20, 64ull << 20, 128ull << 20, 0, 1},
      {"read-later-streamed", 0, 3, 4096, 65536, 65536, 0, 1},
      {"cannot-tell", 0, 2, 8192, 64ull << 20, 128ull << 20, 0, 2},
      {"indexers-read-streamed", 0, 2, 512, 65536, 65536, 0},
  };
  const char* queries[] = {"s1", "e2", "w0", "w1 w7", "W3 w150 s0", "x", "zzzz",
                           "e3s7", "e1s1", "w0s2", "e5 s5 w2"};
  for (const auto& t : tunings) {
    scipis_options o;
    scipis_options_init(&o);
    o.reader_threads = t.readers;
    o.indexer_threads = t.indexers;
    o.block_size = t.block;
    o.path_index_size = t.path_size;
    o.tfidf_index_size = t.tf_size;
    o.direct_io = t.direct;
    std::string dir = testutil::scratch_dir();
    scipis_build_stats st;
    scipis_error err;
    scipis::set_nowait_refusal_for_tests(t.nowait_refusal);
    const uint64_t later_before = scipis::files_read_later();
    const int built = testutil::build(dir, c.root, o, &st, &err);
    scipis::set_nowait_refusal_for_tests(0);
    ASSERT_EQ(built, 0) << t.name << ": " << err.message;
    // Left for later: every file with bytes, once, when refused.
    uint64_t with_bytes = 0;
    for (const auto& [p, n] : c.sizes) with_bytes += n > 0;
    // (As the kernel says, none is likely but none is certain either.)
    if (t.nowait_refusal != 0) {
      EXPECT_EQ(scipis::files_read_later() - later_before, t.nowait_refusal == 1 ? with_bytes : 0) << t.name;
    }
    EXPECT_EQ(st.files, c.docs.size()) << t.name;
    EXPECT_EQ(st.bytes, total_bytes) << t.name;
    EXPECT_EQ(st.skipped, 0u) << t.name;

    // Every file its own document, with its size and token count.
    scipis_index* ix = scipis_index_open(dir.c_str(), &err);
    ASSERT_NE(ix, nullptr) << err.message;
    scipis_docs docs;
    ASSERT_EQ(scipis_list_files(ix, &docs, &err), 0) << err.message;
    ASSERT_EQ(docs.n, c.docs.size()) << t.name;
    std::map<std::string, uint64_t> tokens;
    for (const auto& d : c.docs) tokens[d.path] = d.len;
    for (size_t i = 0; i < docs.n; i++) {
      const std::string p(docs.docs[i].path, docs.docs[i].path_len);
      ASSERT_TRUE(c.sizes.count(p)) << t.name << ": " << p;
      EXPECT_EQ(docs.docs[i].size, c.sizes[p]) << t.name << ": " << p;
      EXPECT_EQ(docs.docs[i].tokens, tokens[p]) << t.name << ": " << p;
    }
    scipis_docs_free(&docs);
    scipis_index_close(ix);

    for (const char* q : queries)
      for (bool bm25 : {false, true}) {
        auto want = brute::search(c.docs, q, bm25, false);
        auto got = testutil::search(dir, q, -1, bm25 ? SCIPIS_BM25 : SCIPIS_TFIDF);
        expect_same_hits(got, want, std::string(t.name) + " q=" + q);
      }
    testutil::rm_rf(dir);
  }
  testutil::rm_rf(c.root);
}

// Files dropped from the page cache: indexers that read start their
// reading, index the files still cached, then read those and find all.
TEST(SmallFiles, FilesOutOfThePageCacheAreReadLater) {
  SmallCorpus c = make_corpus(11);
  for (const auto& [path, n] : c.sizes) {
    const int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(fdatasync(fd), 0) << path;
    // Every other file: cached and uncached ones alternate in a batch.
    if (std::hash<std::string>{}(path) % 2) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  const uint64_t later_before = scipis::files_read_later();
  ASSERT_EQ(testutil::build(dir, c.root, o, &st, &err), 0) << err.message;
  if (testutil::on_block_file_system(c.root)) {
    EXPECT_GT(scipis::files_read_later(), later_before);
  }
  EXPECT_EQ(st.files, c.docs.size());
  EXPECT_EQ(st.skipped, 0u);
  for (const char* q : {"s1", "e2", "w0", "w1 w7", "W3 w150 s0", "e3s7", "e5 s5 w2"})
    expect_same_hits(testutil::search(dir, q, -1, SCIPIS_BM25), brute::search(c.docs, q, true, false), q);
  testutil::rm_rf(dir);
  testutil::rm_rf(c.root);
}
