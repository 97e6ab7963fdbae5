// Damaged index files: every kind of damage is an error naming the file,
// never a crash and never a wrong answer. Cancelled builds leave the
// previous index answering as before.
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "index/segment_format.h"
#include "test_util.h"
#include "util/bytes.h"
#include "util/crc32c.h"

namespace {

struct Fixture {
  std::string root, dir;
  Fixture() {
    root = testutil::scratch_dir();
    for (int i = 0; i < 40; i++) {
      std::string text;
      for (int w = 0; w < 200; w++) text += "t" + std::to_string((i * 7 + w * 13) % 97) + " ";
      testutil::write(root + "/f" + std::to_string(i) + ".log", text);
    }
    dir = testutil::scratch_dir();
    scipis_options o;
    scipis_options_init(&o);
    o.indexer_threads = 1;
    o.split_factor = 1;
    scipis_build_stats st;
    scipis_error err;
    EXPECT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  }
  ~Fixture() {
    testutil::rm_rf(dir);
    testutil::rm_rf(root);
  }
  std::string gen() const {
    DIR* d = opendir(dir.c_str());
    std::string g;
    while (struct dirent* e = readdir(d))
      if (e->d_name[0] == 'g') g = dir + "/" + e->d_name;
    closedir(d);
    return g;
  }
};

// Applies damage to one file, then expects a corruption error naming it from
// a search that needs it (or from opening the index).
void expect_damage_reported(const std::function<std::string(Fixture&)>& damage,
                            const std::string& query = "t5") {
  Fixture f;
  std::string file = damage(f);
  scipis_error err{};
  auto hits = testutil::search(f.dir, query, 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
  EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << file << ": " << err.message;
  EXPECT_NE(std::string(err.message).find(file), std::string::npos) << err.message;
  EXPECT_TRUE(hits.empty());
}

void flip(const std::string& path, size_t from_end_or_start, bool from_end) {
  std::string b = testutil::read(path);
  size_t at = from_end ? b.size() - 1 - from_end_or_start : from_end_or_start;
  b[at] ^= 0x10;
  testutil::write(path, b);
}

}  // namespace

TEST(Damage, TruncatedTfData) {
  expect_damage_reported([](Fixture& f) {
    std::string p = f.gen() + "/tfidf_index_0/seg_0.data";
    std::string b = testutil::read(p);
    testutil::write(p, b.substr(0, b.size() / 2));
    return p;
  });
}

TEST(Damage, FlippedBitInTfData) {
  Fixture probe;
  std::string p0 = probe.gen() + "/tfidf_index_0/seg_0.data";
  size_t size = testutil::read(p0).size();
  // Every byte of the posting blocks: no flip may pass unnoticed.
  for (size_t at = scipis::kHeaderSize; at < size; at += 401) {
    expect_damage_reported(
        [at](Fixture& f) {
          std::string p = f.gen() + "/tfidf_index_0/seg_0.data";
          flip(p, at, false);
          return p;
        },
        "t0 t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t21 t22 "
        "t23 t24 t25 t26 t27 t28 t29 t30 t31 t32 t33 t34 t35 t36 t37 t38 t39 t40 t41 t42 "
        "t43 t44 t45 t46 t47 t48 t49 t50 t51 t52 t53 t54 t55 t56 t57 t58 t59 t60 t61 t62 "
        "t63 t64 t65 t66 t67 t68 t69 t70 t71 t72 t73 t74 t75 t76 t77 t78 t79 t80 t81 t82 "
        "t83 t84 t85 t86 t87 t88 t89 t90 t91 t92 t93 t94 t95 t96");
  }
}

// A query reads the dictionary's groups it needs (and the index chunks
// its search passes): one of every term reads them all.
TEST(Damage, FlippedBitInTfMeta) {
  std::string all;
  for (int t = 0; t < 97; t++) all += "t" + std::to_string(t) + " ";
  expect_damage_reported(
      [](Fixture& f) {
        std::string p = f.gen() + "/tfidf_index_0/seg_0.meta.0";
        flip(p, 3, true);
        return p;
      },
      all);
}

TEST(Damage, FlippedBitInFileData) {
  expect_damage_reported([](Fixture& f) {
    std::string p = f.gen() + "/file_index_0/seg_0.data";
    flip(p, 5, true);
    return p;
  });
}

// An index another scipis wrote (every file of it of another format
// version): the error says to build the collection again, and a build
// over it answers.
TEST(Damage, OtherFormatVersionAsksForARebuildThatWorks) {
  Fixture f;
  for (const char* rel : {"/MANIFEST", "/tfidf_index_0/seg_0.meta.0", "/tfidf_index_0/seg_0.data"}) {
    const std::string p = (rel[1] == 'M' ? f.dir : f.gen()) + rel;
    std::string b = testutil::read(p);
    b[8] = static_cast<char>(scipis::kFormatVersion - 1);
    const uint32_t crc = scipis::crc32c(b.data(), 28);
    for (int i = 0; i < 4; i++) b[28 + i] = static_cast<char>(crc >> (8 * i));
    testutil::write(p, b);
  }
  scipis_error err{};
  auto hits = testutil::search(f.dir, "t5", 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
  EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
  EXPECT_NE(std::string(err.message).find("format version " + std::to_string(scipis::kFormatVersion - 1)),
            std::string::npos) << err.message;
  EXPECT_NE(std::string(err.message).find("scipis_index"), std::string::npos) << err.message;
  EXPECT_TRUE(hits.empty());
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 1;
  scipis_build_stats st;
  ASSERT_EQ(testutil::build(f.dir, f.root, o, &st, &err), 0) << err.message;
  hits = testutil::search(f.dir, "t5", 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
  EXPECT_EQ(err.code, SCIPIS_OK) << err.message;
  EXPECT_EQ(hits.size(), 10u);
}

TEST(Damage, WrongVersionWithValidChecksum) {
  expect_damage_reported([](Fixture& f) {
    std::string p = f.gen() + "/tfidf_index_0/seg_0.meta.0";
    std::string b = testutil::read(p);
    b[8] = static_cast<char>(scipis::kFormatVersion + 1);  // a later version, header checksum recomputed
    uint32_t crc = scipis::crc32c(b.data(), 28);
    for (int i = 0; i < 4; i++) b[28 + i] = static_cast<char>(crc >> (8 * i));
    testutil::write(p, b);
    return p;
  });
}

TEST(Damage, DamagedManifest) {
  expect_damage_reported([](Fixture& f) {
    std::string p = f.dir + "/MANIFEST";
    flip(p, 40, false);
    return p;
  });
}

TEST(Damage, MissingSegmentFile) {
  expect_damage_reported([](Fixture& f) {
    std::string p = f.gen() + "/file_index_0/seg_0.data";
    unlink(p.c_str());
    return p;
  });
}

TEST(Damage, GarbageInsteadOfAFile) {
  expect_damage_reported([](Fixture& f) {
    std::string p = f.gen() + "/tfidf_index_0/seg_0.meta.0";
    testutil::write(p, "not a scipis file at all, just some bytes");
    return p;
  });
}

TEST(Cancel, CancelledRebuildLeavesPreviousIndex) {
  Fixture f;
  auto before = testutil::search(f.dir, "t1 t2 t3", -1);
  ASSERT_FALSE(before.empty());
  for (int i = 0; i < 1000; i++) testutil::write(f.root + "/more" + std::to_string(i), "t1 t1 extra");
  scipis_options o;
  scipis_options_init(&o);
  o.tfidf_index_size = 65536;
  scipis_error err;
  scipis_build* b = scipis_build_start(f.dir.c_str(), f.root.c_str(), &o, &err);
  ASSERT_NE(b, nullptr) << err.message;
  scipis_build_cancel(b);
  int waited = 0;
  while (!scipis_build_wait(b, 100)) waited++;
  // The promise is one second; the bound allows four more for a build under
  // AddressSanitizer on a machine whose two cores are busy with other work.
  EXPECT_LT(waited, 50) << "a cancel must stop the build promptly";
  scipis_build_stats st;
  EXPECT_NE(scipis_build_finish(b, &st, &err), 0);
  EXPECT_EQ(err.code, SCIPIS_E_CANCELED);
  auto after = testutil::search(f.dir, "t1 t2 t3", -1);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); i++) {
    EXPECT_EQ(after[i].path, before[i].path);
    EXPECT_EQ(after[i].score, before[i].score);
  }
  EXPECT_TRUE(testutil::search(f.dir, "extra").empty());
  // Only the manifest and the live generation remain after the next build.
  scipis_build_stats st2;
  ASSERT_EQ(testutil::build(f.dir, f.root, o, &st2, &err), 0) << err.message;
  EXPECT_EQ(testutil::search(f.dir, "extra").size(), 1000u);
}

// The paths' trigram index: missing or cut short, a pattern is an error
// naming it; a flipped byte anywhere gives an error or the right list.
TEST(Damage, PathTrigramIndex) {
  Fixture f;
  const std::string p = f.gen() + "/file_index_0/seg_0.paths";
  const std::string good = testutil::read(p);
  const std::vector<std::string> pats = {"f1", "f10", "/f1", ".log", "*/f2*", "f3.log", "f3?.log"};
  auto answers = [&](scipis_error& err) {
    std::vector<std::string> out;
    scipis_index* ix = scipis_index_open(f.dir.c_str(), &err);
    if (!ix) return out;
    for (const std::string& pat : pats) {
      scipis_docs docs{};
      if (scipis_locate(ix, pat.data(), pat.size(), &docs, &err) != 0) break;
      for (size_t i = 0; i < docs.n; i++) out.emplace_back(docs.docs[i].path, docs.docs[i].path_len);
      out.emplace_back("--");
      scipis_docs_free(&docs);
    }
    scipis_index_close(ix);
    return out;
  };
  scipis_error err{};
  const std::vector<std::string> want = answers(err);
  ASSERT_EQ(err.code, SCIPIS_OK) << err.message;
  ASSERT_EQ(std::count(want.begin(), want.end(), "--"), static_cast<long>(pats.size()));
  for (int kind = 0; kind < 2; kind++) {
    if (kind == 0) unlink(p.c_str());
    if (kind == 1) testutil::write(p, good.substr(0, good.size() / 2));
    err = scipis_error{};
    answers(err);
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << kind << ": " << err.message;
    EXPECT_NE(std::string(err.message).find(p), std::string::npos) << err.message;
  }
  for (size_t at = 0; at < good.size(); at++) {
    std::string b = good;
    b[at] = static_cast<char>(b[at] ^ 0x24);
    testutil::write(p, b);
    err = scipis_error{};
    const std::vector<std::string> got = answers(err);
    if (err.code == SCIPIS_OK) {
      EXPECT_EQ(got, want) << "byte " << at;
    } else {
      EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << "byte " << at << ": " << err.message;
    }
  }
}

// One-term top-10 queries through one open index (top-k reads a region
// once and remembers it checked): with a byte of the posting data flipped,
// each query is the undamaged index's answer or a corruption error naming
// the file, the same on asking again; some query reports it.
TEST(Damage, FlippedBitInTfDataThroughTopK) {
  auto answers = [](const std::string& dir, const std::string& file, size_t* errors) {
    std::vector<std::string> out;
    scipis_error err;
    scipis_index* ix = scipis_index_open(dir.c_str(), &err);
    EXPECT_NE(ix, nullptr) << err.message;
    if (!ix) return out;
    for (int pass = 0; pass < 2; pass++)
      for (int t = 0; t < 97; t++) {
        const std::string q = "t" + std::to_string(t);
        scipis_docs docs;
        std::string got;
        if (scipis_search(ix, q.data(), q.size(), 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &docs, &err) == 0) {
          for (size_t i = 0; i < docs.n; i++) {
            const std::string path(docs.docs[i].path, docs.docs[i].path_len);
            // Fixtures differ by their scratch directory alone.
            got += path.substr(path.rfind('/') + 1) + " " + std::to_string(docs.docs[i].score) + "\n";
          }
          scipis_docs_free(&docs);
        } else {
          EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << err.message;
          EXPECT_NE(std::string(err.message).find(file), std::string::npos) << err.message;
          got = "error";
          ++*errors;
        }
        if (pass == 0) {
          out.push_back(got);
        } else {
          EXPECT_EQ(got, out[static_cast<size_t>(t)]) << q << " asked again";
        }
      }
    scipis_index_close(ix);
    return out;
  };
  Fixture probe;
  const std::string p0 = probe.gen() + "/tfidf_index_0/seg_0.data";
  size_t none = 0;
  const std::vector<std::string> want = answers(probe.dir, p0, &none);
  ASSERT_EQ(none, 0u);
  const size_t size = testutil::read(p0).size();
  for (size_t at = scipis::kHeaderSize; at < size; at += 401) {
    Fixture f;
    const std::string p = f.gen() + "/tfidf_index_0/seg_0.data";
    flip(p, at, false);
    size_t errors = 0;
    const std::vector<std::string> got = answers(f.dir, p, &errors);
    EXPECT_GT(errors, 0u) << "byte " << at;
    for (size_t t = 0; t < got.size() && t < want.size(); t++)
      if (got[t] != "error") {
        EXPECT_EQ(got[t], want[t]) << "t" << t << ", byte " << at;
      }
  }
}
