// Resuming an interrupted build: stopped after every possible number of
// flushed segments, then resumed, the index answers exactly as a clean
// build of the same tree, and the files of kept segments are not read
// again. Files changed between the stop and the resume are read again.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <string>
#include <vector>

#include "index/segment_format.h"
#include "pipeline/resume.h"
#include "test_util.h"
#include "util/fileio.h"

namespace {

struct ResumeTree {
  std::string root = testutil::scratch_dir();
  std::vector<std::string> files;
  ResumeTree() {
    // Small files, and a few big ones of many distinct terms, so that with
    // a 1 MB term table flushes come both between and inside files.
    for (int d = 0; d < 4; d++) {
      std::string dir = root + "/d" + std::to_string(d);
      mkdir(dir.c_str(), 0755);
      for (int f = 0; f < 50; f++) {
        std::string body;
        const int words = f % 25 == 7 ? 30000 : 40 + (d * 13 + f * 7) % 300;
        for (int i = 0; i < words; i++)
          body += "w" + std::to_string((d * 7919 + f * 104729 + i * 31) % (f % 25 == 7 ? 90000 : 3000)) +
                  (i % 17 == 0 ? "\n" : " ");
        files.push_back(dir + "/f" + std::to_string(f) + ".log");
        testutil::write(files.back(), body);
      }
    }
  }
  ~ResumeTree() { testutil::rm_rf(root); }
};

scipis_options resume_options() {
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  o.tfidf_index_size = 1 << 20;
  o.split_factor = 2;  // few files per segment: fsyncs stay few
  o.block_size = 64 << 10;
  return o;
}

int run(const std::string& dir, const std::string& root, int flags, scipis_build_stats* stats,
        scipis_error* err) {
  scipis_options o = resume_options();
  scipis_build* b = scipis_build_start_ex(dir.c_str(), root.c_str(), &o, flags, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 50)) {
  }
  return scipis_build_finish(b, stats, err);
}

const std::vector<std::string> kResumeQueries = {"w1", "w17 w2999", "w42 w7 w100 w2500", "w89999",
                                           "w5 w6"};

void expect_same_answers(const std::string& dir, const std::string& clean, const std::string& what) {
  for (const auto& q : kResumeQueries) {
    for (auto rank : {SCIPIS_TFIDF, SCIPIS_BM25}) {
      scipis_error err;
      auto a = testutil::search(dir, q, -1, rank, SCIPIS_MATCH_ANY, &err);
      ASSERT_EQ(err.code, SCIPIS_OK) << what << " query " << q << ": " << err.message;
      auto b = testutil::search(clean, q, -1, rank);
      ASSERT_EQ(a.size(), b.size()) << what << " query " << q;
      for (size_t i = 0; i < a.size(); i++) {
        ASSERT_EQ(a[i].path, b[i].path) << what << " query " << q << " rank " << i;
        ASSERT_LE(std::fabs(a[i].score - b[i].score), 1e-12 * std::fabs(b[i].score))
            << what << " query " << q << " rank " << i;
        ASSERT_EQ(a[i].tokens, b[i].tokens) << what << " " << a[i].path;
      }
    }
  }
}

TEST(Resume, AtEveryFlushPointAnswersAsACleanBuild) {
  ResumeTree tree;
  std::string clean = testutil::scratch_dir();
  scipis_build_stats full;
  scipis_error err;
  ASSERT_EQ(run(clean, tree.root, 0, &full, &err), 0) << err.message;
  ASSERT_GT(full.segments, 4u) << "the tree must give several flushes";
  uint64_t resumed_somewhere = 0;
  for (uint32_t k = 1; k <= full.segments + 1; k++) {
    if (!testutil::sampled(k, 2) && k != 1) continue;
    std::string dir = testutil::scratch_dir();
    scipis_build_stats st;
    int rc = run(dir, tree.root, SCIPIS_BUILD_RESUME | SCIPIS_BUILD_STOP_AFTER_MARKS(k), &st, &err);
    if (rc != 0) {
      ASSERT_EQ(err.code, SCIPIS_E_CANCELED) << err.message;
      ASSERT_EQ(run(dir, tree.root, SCIPIS_BUILD_RESUME, &st, &err), 0) << err.message;
      EXPECT_LE(st.resumed_files, full.files);
      EXPECT_LE(st.resumed_bytes, full.bytes);
      resumed_somewhere += st.resumed_files;
    }
    EXPECT_EQ(st.files, full.files) << "stopped after " << k;
    EXPECT_EQ(st.bytes, full.bytes) << "stopped after " << k;
    EXPECT_EQ(st.tokens, full.tokens) << "stopped after " << k;
    expect_same_answers(dir, clean, "stopped after " + std::to_string(k) + " marks");
    testutil::rm_rf(dir);
  }
  EXPECT_GT(resumed_somewhere, 0u) << "no stop left a segment to keep";
  testutil::rm_rf(clean);
}

// Documents are numbered by their records: a mark whose indexer began a
// document no kept record holds (as an indexer given files after a stop
// left one unfinished once wrote) ends the kept segments, else the resumed
// index has a gap in its numbers and reads as damaged.
TEST(Resume, AMarkThatDoesNotAddUpIsNotKept) {
  ResumeTree tree;
  std::string clean = testutil::scratch_dir();
  scipis_build_stats full;
  scipis_error err;
  ASSERT_EQ(run(clean, tree.root, 0, &full, &err), 0) << err.message;
  // The first stop that leaves a mark after a whole file (the first ones
  // come inside the big files); that mark says one document more was begun.
  std::string dir;
  bool changed = false;
  for (uint32_t k = 1; k <= full.segments && !changed; k++) {
    if (!dir.empty()) testutil::rm_rf(dir);
    dir = testutil::scratch_dir();
    scipis_build_stats st;
    if (run(dir, tree.root, SCIPIS_BUILD_RESUME | SCIPIS_BUILD_STOP_AFTER_MARKS(k), &st, &err) == 0) break;
    for (uint32_t i = 0; i < 2 && !changed; i++) {
      for (uint32_t s = 0; !changed; s++) {
        const std::string path = dir + "/g1/" + scipis::file_dir(i) + "/" + scipis::seg_mark(s);
        std::string bytes;
        if (!scipis::read_file(path, bytes)) break;
        auto m = scipis::SegmentMark::decode(bytes);
        ASSERT_TRUE(m.has_value()) << path;
        if (m->partial) continue;
        m->next_seq++;
        testutil::write(path, m->encode());
        changed = true;
      }
    }
  }
  ASSERT_TRUE(changed) << "no stop left a mark after a whole file";
  scipis_build_stats st;
  ASSERT_EQ(run(dir, tree.root, SCIPIS_BUILD_RESUME, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files, full.files);
  expect_same_answers(dir, clean, "a mark one document over");
  testutil::rm_rf(dir);
  testutil::rm_rf(clean);
}

TEST(Resume, ChangedFilesAreReadAgain) {
  ResumeTree tree;
  std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_NE(run(dir, tree.root, SCIPIS_BUILD_RESUME | SCIPIS_BUILD_STOP_AFTER_MARKS(4), &st, &err), 0);
  // Every tenth file changes (and one goes) while the build is stopped.
  for (size_t i = 0; i < tree.files.size(); i += 10)
    testutil::write(tree.files[i], "changed w1 w1 w1 fresh");
  ::unlink(tree.files[5].c_str());
  ASSERT_EQ(run(dir, tree.root, SCIPIS_BUILD_RESUME, &st, &err), 0) << err.message;
  std::string clean = testutil::scratch_dir();
  scipis_build_stats cs;
  ASSERT_EQ(run(clean, tree.root, 0, &cs, &err), 0) << err.message;
  EXPECT_EQ(st.files, cs.files);
  expect_same_answers(dir, clean, "after changes");
  EXPECT_EQ(testutil::search(dir, "fresh").size(), testutil::search(clean, "fresh").size());
  testutil::rm_rf(dir);
  testutil::rm_rf(clean);
}

// A pause (a server shutdown) keeps everything read before it: the files
// being read are finished, the indexers flush, the segments are marked.
TEST(Resume, APauseKeepsEverythingRead) {
  ResumeTree tree;
  std::string dir = testutil::scratch_dir();
  scipis_options o = resume_options();
  scipis_error err;
  scipis_build* b = scipis_build_start_ex(dir.c_str(), tree.root.c_str(), &o,
                                          SCIPIS_BUILD_RESUME | SCIPIS_BUILD_COUNT_BYTES, &err);
  ASSERT_NE(b, nullptr) << err.message;
  scipis_build_progress p{};
  do {
    scipis_build_get_progress(b, &p);
  } while (p.files_done < 60 && !scipis_build_wait(b, 1));
  scipis_build_pause(b);
  scipis_build_progress at_pause;
  scipis_build_get_progress(b, &at_pause);
  while (!scipis_build_wait(b, 20)) {
  }
  scipis_build_stats st;
  if (scipis_build_finish(b, &st, &err) == 0) GTEST_SKIP() << "the build ended before the pause";
  ASSERT_EQ(err.code, SCIPIS_E_CANCELED) << err.message;
  ASSERT_EQ(run(dir, tree.root, SCIPIS_BUILD_RESUME, &st, &err), 0) << err.message;
  EXPECT_GE(st.resumed_files, at_pause.files_done);
  EXPECT_GE(st.resumed_bytes, at_pause.bytes_done);
  std::string clean = testutil::scratch_dir();
  scipis_build_stats cs;
  ASSERT_EQ(run(clean, tree.root, 0, &cs, &err), 0) << err.message;
  EXPECT_EQ(st.files, cs.files);
  expect_same_answers(dir, clean, "after a pause");
  testutil::rm_rf(dir);
  testutil::rm_rf(clean);
}

// Other options make another index: nothing is resumed.
TEST(Resume, OtherOptionsStartOver) {
  ResumeTree tree;
  std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_NE(run(dir, tree.root, SCIPIS_BUILD_RESUME | SCIPIS_BUILD_STOP_AFTER_MARKS(3), &st, &err), 0);
  scipis_options o = resume_options();
  o.split_factor = 4;
  scipis_build* b = scipis_build_start_ex(dir.c_str(), tree.root.c_str(), &o, SCIPIS_BUILD_RESUME, &err);
  ASSERT_NE(b, nullptr) << err.message;
  while (!scipis_build_wait(b, 50)) {
  }
  ASSERT_EQ(scipis_build_finish(b, &st, &err), 0) << err.message;
  EXPECT_EQ(st.resumed_files, 0u);
  testutil::rm_rf(dir);
}

}  // namespace
