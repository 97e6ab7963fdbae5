// scipis_list_files_where: the files a filter keeps, against the whole
// listing filtered record by record in the test, for random ranges over
// every field; blocks whose statistics rule them out are not read.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "scipis_engine.h"
#include "test_util.h"

namespace {

struct FilterRow {
  std::string path;
  scipis_doc d;
};

std::vector<FilterRow> rows_of(scipis_docs& docs) {
  std::vector<FilterRow> out;
  for (size_t i = 0; i < docs.n; i++)
    out.push_back({std::string(docs.docs[i].path, docs.docs[i].path_len), docs.docs[i]});
  scipis_docs_free(&docs);
  return out;
}

bool keeps(const scipis_file_filter& f, const FilterRow& r) {
  const std::string from(f.path_from ? f.path_from : "", f.path_from_len);
  const std::string to(f.path_to ? f.path_to : "", f.path_to_len);
  return r.d.size >= f.size_min && r.d.size <= f.size_max && r.d.mtime_ns >= f.mtime_min &&
         r.d.mtime_ns <= f.mtime_max && r.d.ctime_ns >= f.ctime_min && r.d.ctime_ns <= f.ctime_max &&
         r.d.uid >= f.uid_min && r.d.uid <= f.uid_max && r.d.gid >= f.gid_min && r.d.gid <= f.gid_max &&
         r.path >= from && (!f.path_to_set || r.path < to);
}

TEST(FileFilter, RandomRangesKeepWhatTheRecordsSay) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937_64 rng(5);
  // Directories of files whose sizes and times rise with their names, as
  // job outputs do, and some that do not.
  for (int d = 0; d < 30; d++) {
    const std::string sub = root + "/job" + std::to_string(1000 + d);
    mkdir(sub.c_str(), 0755);
    for (int i = 0; i < 40; i++) {
      const std::string p = sub + "/out" + std::to_string(i) + ".log";
      testutil::write(p, std::string(static_cast<size_t>(d * 40 + i + (rng() % 7 == 0 ? rng() % 5000 : 0)), 'x') + " w\n");
      const int64_t t = 1600000000 + d * 86400 + i * 60 + static_cast<int64_t>(rng() % 3 == 0 ? rng() % 100000 : 0);
      struct timespec ts[2] = {{t, static_cast<long>(rng() % 1000000000)}, {t, static_cast<long>(rng() % 1000000000)}};
      utimensat(AT_FDCWD, p.c_str(), ts, 0);
    }
  }
  scipis_options o;
  scipis_options_init(&o);
  // One reader and one indexer: a directory's files stay together in
  // records, whatever the threads' timing, so the blocks read below do
  // not depend on it.
  o.indexer_threads = 1;
  o.reader_threads = 1;
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr) << err.message;
  scipis_docs docs;
  ASSERT_EQ(scipis_list_files(ix, &docs, &err), 0) << err.message;
  const std::vector<FilterRow> all = rows_of(docs);
  ASSERT_EQ(all.size(), 1200u);

  uint64_t blocks = 0, read = 0;
  for (int q = 0; q < 600; q++) {
    scipis_file_filter f;
    scipis_file_filter_init(&f);
    const FilterRow& a = all[rng() % all.size()];
    const FilterRow& b = all[rng() % all.size()];
    std::string from, to;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; k++) {
      switch (rng() % 6) {
        case 0: f.size_min = a.d.size - (rng() % 2); f.size_max = rng() % 2 ? b.d.size : UINT64_MAX; break;
        case 1: f.mtime_min = a.d.mtime_ns + static_cast<int64_t>(rng() % 3) - 1; break;
        case 2: f.mtime_max = b.d.mtime_ns; f.ctime_min = rng() % 2 ? a.d.ctime_ns : INT64_MIN; break;
        case 3: f.uid_min = f.uid_max = a.d.uid + static_cast<uint32_t>(rng() % 2); f.gid_max = b.d.gid; break;
        case 4:  // a path prefix: [p, p with its last byte raised)
          from = a.path.substr(0, rng() % (a.path.size() + 1));
          to = from;
          if (!to.empty()) to.back() = static_cast<char>(to.back() + 1);
          f.path_to_set = !to.empty();
          break;
        default:
          from = std::min(a.path, b.path);
          to = std::max(a.path, b.path);
          f.path_to_set = rng() % 2;
      }
    }
    f.path_from = from.data();
    f.path_from_len = from.size();
    f.path_to = to.data();
    f.path_to_len = to.size();
    scipis_scan_stats ss{};
    ASSERT_EQ(scipis_list_files_where(ix, &f, &docs, &ss, &err), 0) << err.message;
    const std::vector<FilterRow> got = rows_of(docs);
    std::vector<std::string> want, have;
    for (const FilterRow& r : all)
      if (keeps(f, r)) want.push_back(r.path);
    for (const FilterRow& r : got) have.push_back(r.path);
    ASSERT_EQ(have, want) << "filter " << q;
    if (want.size() <= 20) {
      blocks += ss.blocks;
      read += ss.blocks_read;
    }
  }
  // Selective filters on files laid out like these pass most blocks over.
  ASSERT_GT(blocks, 0u);
  EXPECT_LT(read * 4, blocks) << read << " of " << blocks;
  scipis_index_close(ix);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

}  // namespace
