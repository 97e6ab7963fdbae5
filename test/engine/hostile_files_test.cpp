// Hostile index files: bytes changed and every checksum recomputed, so that
// only the reader's own bounds and sanity checks stand between them and the
// process. Opening, searching, looking up and listing must either answer or
// fail with SCIPIS_E_CORRUPT; under the ASan build (make engine-asan) any
// out-of-bounds read fails the test too.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "index/segment_format.h"
#include "test_util.h"
#include "util/crc32c.h"

namespace {

void put_u32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = static_cast<char>(v >> (8 * i));
}

// Recomputes the body and header checksums (layout in segment_format.h).
void reseal(std::string& b) {
  if (b.size() < scipis::kHeaderSize) return;
  put_u32(b, 24, scipis::crc32c(b.data() + scipis::kHeaderSize, b.size() - scipis::kHeaderSize));
  put_u32(b, 28, scipis::crc32c(b.data(), 28));
}

std::string mutate(const std::string& orig, std::mt19937_64& rng) {
  std::string b = orig;
  const int kind = static_cast<int>(rng() % 6);
  const size_t body = b.size() > scipis::kHeaderSize ? b.size() - scipis::kHeaderSize : 0;
  if (kind <= 2 && body > 0) {
    // A few bytes of the body set to anything.
    for (int n = 1 + static_cast<int>(rng() % 4); n > 0; n--)
      b[scipis::kHeaderSize + rng() % body] = static_cast<char>(rng());
  } else if (kind == 3) {
    // The header's aux (split) or count field set to an edge value.
    static const uint64_t edges[] = {0, 1, 2, 0xff, 0xffff, 0x7fffffff, 0xffffffffull,
                                     0x100000000ull, ~0ull >> 1, ~0ull};
    const uint64_t v = edges[rng() % (sizeof(edges) / sizeof(edges[0]))];
    if (rng() % 2)
      put_u32(b, 12, static_cast<uint32_t>(v));
    else
      for (int i = 0; i < 8; i++) b[16 + i] = static_cast<char>(v >> (8 * i));
  } else if (kind == 4 && body > 0) {
    b.resize(scipis::kHeaderSize + rng() % body);  // the body cut short
  } else {
    // Bytes inserted into the body: every later offset is off.
    const size_t at = scipis::kHeaderSize + (body ? rng() % body : 0);
    b.insert(at, std::string(1 + rng() % 9, static_cast<char>(rng())));
  }
  reseal(b);
  return b;
}

struct Built {
  std::string root, dir;
  std::vector<std::string> files;  // every index file, MANIFEST included
  Built() {
    root = testutil::scratch_dir();
    for (int d = 0; d < 3; d++) mkdir((root + "/dir" + std::to_string(d)).c_str(), 0755);
    for (int i = 0; i < 30; i++) {
      std::string text;
      for (int w = 0; w < 150; w++)
        text += "w" + std::to_string((i * 11 + w * 7) % 83) + (w % 5 ? " " : "-long-term-x ");
      testutil::write(root + "/dir" + std::to_string(i % 3) + "/f" + std::to_string(i) + ".log", text);
    }
    dir = testutil::scratch_dir();
    scipis_options o;
    scipis_options_init(&o);
    o.indexer_threads = 2;
    o.split_factor = 3;
    scipis_build_stats st;
    scipis_error err;
    EXPECT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
    collect(dir);
  }
  ~Built() {
    testutil::rm_rf(dir);
    testutil::rm_rf(root);
  }
  void collect(const std::string& d) {
    DIR* h = opendir(d.c_str());
    if (!h) return;
    while (struct dirent* e = readdir(h)) {
      if (e->d_name[0] == '.') continue;
      std::string p = d + "/" + e->d_name;
      struct stat st;
      if (stat(p.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode))
        collect(p);
      else
        files.push_back(p);
    }
    closedir(h);
  }
};

// Every entry point a backend uses; returns the first error code (0: none).
int exercise(const Built& b) {
  scipis_error err{};
  scipis_index* ix = scipis_index_open(b.dir.c_str(), &err);
  if (!ix) return err.code;
  int code = 0;
  scipis_docs docs;
  const char* queries[] = {"w5", "w1 w40 long", "x w82 w0 term"};
  for (const char* q : queries) {
    for (int64_t k : {int64_t{3}, int64_t{-1}}) {
      for (scipis_match m : {SCIPIS_MATCH_ANY, SCIPIS_MATCH_ALL}) {
        if (scipis_search(ix, q, std::strlen(q), k, SCIPIS_BM25, m, &docs, &err) == 0)
          scipis_docs_free(&docs);
        else if (!code)
          code = err.code;
      }
    }
  }
  const std::string path = b.root + "/dir1/f4.log";
  if (scipis_lookup(ix, path.data(), path.size(), &docs, &err) == 0)
    scipis_docs_free(&docs);
  else if (!code)
    code = err.code;
  if (scipis_list_files(ix, &docs, &err) == 0)
    scipis_docs_free(&docs);
  else if (!code)
    code = err.code;
  scipis_index_close(ix);
  return code;
}

}  // namespace

TEST(HostileFiles, ResealedDamageIsRefusedOrAnsweredNeverACrash) {
  Built b;
  ASSERT_GT(b.files.size(), 8u);
  ASSERT_EQ(exercise(b), 0);
  std::mt19937_64 rng(20261122);
  int refused = 0, answered = 0;
  for (const std::string& f : b.files) {
    const std::string orig = testutil::read(f);
    for (int round = 0; round < 40; round++) {
      testutil::write(f, mutate(orig, rng));
      const int code = exercise(b);
      EXPECT_TRUE(code == 0 || code == SCIPIS_E_CORRUPT) << f << " round " << round << ": code " << code;
      (code ? refused : answered)++;
    }
    testutil::write(f, orig);
  }
  ASSERT_EQ(exercise(b), 0);
  // Damage to a part no call needed goes unnoticed; the rest is refused.
  EXPECT_GT(refused, 0) << answered << " answered";
}
