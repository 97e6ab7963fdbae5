// Packed segments (index/segment_pack.h): a refresh writes each small
// segment as one file; its parts read back as the separate files would,
// damage to the pack or to a part is an error naming the pack, and
// refreshes, merges and searches over packs answer as the oracle does.
#include <gtest/gtest.h>

#include <dirent.h>

#include <filesystem>

#include "index/journal.h"
#include "index/manifest.h"
#include "index/segment_format.h"
#include "index/segment_pack.h"
#include "refresh_util.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace {

namespace fs = std::filesystem;
using namespace scipis;
using refresh_util::check;
using refresh_util::refresh;

std::vector<std::string> files_named(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (e.is_regular_file() && p.size() >= suffix.size() &&
        p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void set_u64(std::string& b, size_t at, uint64_t v) {
  std::string enc;
  put_u64(enc, v);
  b.replace(at, 8, enc);
}

int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) {
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

Manifest manifest_of(const std::string& dir) {
  return read_current(dir).m;
}

// A pack of made-up parts under home, as segment 3 of indexer 1.
struct PackOnDisk {
  std::string home = testutil::scratch_dir();
  SegmentRef ref;
  std::vector<std::string> parts;
  explicit PackOnDisk(uint32_t splits) {
    ref.indexer = 1;
    ref.seg = 3;
    ref.home = kOwnGeneration;
    ref.packed = true;
    for (uint32_t i = 0; i < 2 * splits + 3; i++)
      parts.push_back(i % 3 == 1 ? std::string() : std::string(i * 5 + 1, static_cast<char>('a' + i)));
    std::vector<std::string_view> views(parts.begin(), parts.end());
    fs::create_directories(home + "/" + tf_dir(1));
    testutil::write(path(), encode_pack(views, splits));
  }
  ~PackOnDisk() { testutil::rm_rf(home); }
  std::string path() const { return home + "/" + tf_dir(1) + "/" + seg_pack(3); }
};

std::string corrupt_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(SegmentPack, PartsReadBackAsWritten) {
  for (uint32_t splits : {1u, 4u, 16u}) {
    PackOnDisk p(splits);
    PartOpener o(p.home, p.ref, splits);
    auto expect_part = [&](Part kind, uint32_t split) {
      const SegmentPart part = o.open(kind, split);
      EXPECT_EQ(std::string(part.map->bytes()), p.parts[part_index(kind, split, splits)]);
      EXPECT_NE(part.name.find(p.path()), std::string::npos) << part.name;
    };
    expect_part(Part::kTfData, 0);
    expect_part(Part::kFileData, 0);
    expect_part(Part::kPaths, 0);
    for (uint32_t s = 0; s < splits; s++) {
      expect_part(Part::kTfMeta, s);
      expect_part(Part::kFileMeta, s);
    }
    uint64_t off, len;
    EXPECT_EQ(o.file_of(Part::kFileData, 0, &off, &len), p.path());
    EXPECT_EQ(off % 8, 0u);
    EXPECT_EQ(len, p.parts[part_index(Part::kFileData, 0, splits)].size());
    const uint64_t wrong = len + 1;
    corrupt_message([&] { o.open(Part::kFileData, 0, &wrong); });
  }
}

TEST(SegmentPack, DamageNamesThePack) {
  auto damaged = [](const std::function<void(std::string&)>& harm, uint32_t open_splits = 4) {
    PackOnDisk p(4);
    std::string b = testutil::read(p.path());
    harm(b);
    testutil::write(p.path(), b);
    PartOpener o(p.home, p.ref, open_splits);
    const std::string msg = corrupt_message([&] { o.open(Part::kTfMeta, 2); });
    EXPECT_NE(msg.find(p.path()), std::string::npos) << msg;
  };
  damaged([](std::string& b) { b[kHeaderSize + 3] ^= 0x40; });  // the part table
  damaged([](std::string& b) { b[2] ^= 1; });                   // the magic
  damaged([](std::string& b) { b.resize(kHeaderSize + 20); });  // cut inside the table
  damaged([](std::string& b) { b.resize(b.size() - 1); });      // the last part cut short
  damaged([](std::string&) {}, 5);                              // another split factor
  // A table pointing past the end, its checksum made good again.
  damaged([](std::string& b) {
    set_u64(b, kHeaderSize + 16, uint64_t{1} << 40);
    std::string fixed = b.substr(0, kHeaderSize + 16 * 11);
    FileHeader h;
    h.aux = 4;
    h.count = 11;
    h.body_crc = crc32c(fixed.data() + kHeaderSize, 16 * 11);
    std::string head;
    put_header(head, kMagicPack, h);
    b.replace(0, kHeaderSize, head);
  });
  // Missing altogether.
  PackOnDisk p(2);
  fs::remove(p.path());
  PartOpener o(p.home, p.ref, 2);
  EXPECT_NE(corrupt_message([&] { o.open(Part::kPaths, 0); }).find(p.path()), std::string::npos);
}

TEST(SegmentPack, ManifestKeepsTheFlag) {
  Manifest m;
  m.generation = 7;
  m.indexers = 2;
  m.split_factor = 4;
  for (int kind : {0, 1, 1, 2}) {  // own files, packed (before version 6), packed at the root
    SegmentRef s;
    s.indexer = kind ? 1 : 0;
    s.seg = static_cast<uint32_t>(m.segments.size());
    s.packed = kind > 0;
    s.pack_root = kind == 2;
    m.segments.push_back(s);
  }
  const Manifest back = Manifest::decode("MANIFEST", m.encode());
  ASSERT_EQ(back.segments.size(), 4u);
  EXPECT_FALSE(back.segments[0].packed);
  EXPECT_TRUE(back.segments[1].packed);
  EXPECT_TRUE(back.segments[2].packed);
  EXPECT_TRUE(back.segments[3].packed);
  EXPECT_FALSE(back.segments[0].pack_root);
  EXPECT_FALSE(back.segments[1].pack_root);
  EXPECT_TRUE(back.segments[3].pack_root);
  EXPECT_EQ(pack_file(back.segments[1]), "tfidf_index_1/seg_1.pack");
  EXPECT_EQ(pack_file(back.segments[3]), "tfidf_index_1.seg_3.pack");
  // A segment with its own files is never at the root: the flag alone is refused.
  SegmentRef own;
  own.pack_root = true;
  m.segments = {own};
  EXPECT_FALSE(Manifest::decode("MANIFEST", m.encode()).segments[0].pack_root);
}

TEST(SegmentPack, ManifestRefusesARootFlagWithoutAPack) {
  Manifest m;
  m.generation = 3;
  m.indexers = 1;
  m.split_factor = 2;
  SegmentRef s;
  s.packed = true;
  s.pack_root = true;
  m.segments = {s};
  std::string bytes = m.encode();
  // The flags are the body's last u32; flag 2 alone is damage.
  const size_t at = bytes.size() - 4;
  ASSERT_EQ(static_cast<unsigned char>(bytes[at]), 3u);
  bytes[at] = 2;
  std::string body = bytes.substr(kHeaderSize);
  bytes = sealed_file(kMagicManifest, 1, body, 6);
  EXPECT_NE(corrupt_message([&] { Manifest::decode("MANIFEST", bytes); }).find("not packed"), std::string::npos);
  bytes[bytes.size() - 4] = 4;  // an unknown flag
  bytes = sealed_file(kMagicManifest, 1, bytes.substr(kHeaderSize), 6);
  EXPECT_NE(corrupt_message([&] { Manifest::decode("MANIFEST", bytes); }).find("unknown flags"), std::string::npos);
}

// Refreshes write packs and nothing else for their small segments; a
// merge of them packs its output too; the answers are the oracle's, and a
// damaged pack is an error naming it.
TEST(SegmentPack, RefreshesAndMergesAnswerAsTheOracle) {
  refresh_util::NoJournal whole_generations;
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(11);
  for (int i = 0; i < 12; i++) testutil::write(root + "/f" + std::to_string(i) + ".log", refresh_util::lines(rng, 3000));
  scipis_options o = refresh_util::tiny_options();
  o.tfidf_index_size = 1 << 20;  // one segment per refresh and indexer
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const size_t built_packs = files_named(dir, ".pack").size();
  EXPECT_EQ(built_packs, 0u);  // a build keeps separate files
  for (int round = 0; round < 4; round++) {
    testutil::write(root + "/new" + std::to_string(round) + ".log", refresh_util::lines(rng, 2000) + " fresh" + std::to_string(round));
    const std::string one = root + "/new" + std::to_string(round) + ".log";
    ASSERT_EQ(refresh(dir, root, o, {one}, &st, &err), 0) << err.message;
    const Manifest m = manifest_of(dir);
    size_t fresh = 0;
    for (const SegmentRef& sr : m.segments)
      if (m.home_of(sr) == m.generation) {
        fresh++;
        EXPECT_TRUE(sr.packed);
      }
    EXPECT_EQ(fresh, 1u);
    const std::string gen = m.gen_dir(dir);
    EXPECT_EQ(files_named(gen, ".pack").size(), 1u);
    EXPECT_TRUE(files_named(gen, ".data").empty());
    // The pack sits in the generation's directory: no directory beside it.
    for (const auto& e : fs::directory_iterator(gen)) EXPECT_FALSE(e.is_directory()) << e.path();
    check(dir, root, "refresh " + std::to_string(round), {"fresh0", "fresh3 w1"});
  }
  ASSERT_EQ(finish(scipis_compact_start(dir.c_str(), &o, 0, &err), &st, &err), 0) << err.message;
  check(dir, root, "after a merge", {"fresh1", "fresh2 w0"});
  ASSERT_EQ(finish(scipis_compact_start(dir.c_str(), &o, SCIPIS_COMPACT_ALL, &err), &st, &err), 0)
      << err.message;
  check(dir, root, "after a full merge", {"fresh1", "fresh2 w0"});
  // One more refresh, then its pack damaged inside a dictionary part.
  testutil::write(root + "/last.log", "fresh9 w1 w2");
  ASSERT_EQ(refresh(dir, root, o, {root + "/last.log"}, &st, &err), 0) << err.message;
  const auto packs = files_named(manifest_of(dir).gen_dir(dir), ".pack");
  ASSERT_EQ(packs.size(), 1u);
  std::string b = testutil::read(packs[0]);
  for (size_t i = kHeaderSize + 16 * (2 * 4 + 3); i < b.size(); i += 7) b[i] ^= 0x21;
  testutil::write(packs[0], b);
  scipis_error serr{};
  testutil::search(dir, "fresh9", 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &serr);
  EXPECT_EQ(serr.code, SCIPIS_E_CORRUPT) << serr.message;
  EXPECT_NE(std::string(serr.message).find(packs[0]), std::string::npos) << serr.message;
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A refreshed segment's postings are read from its pack's mapping: a
// damaged data header or posting block there is an error naming the pack
// (top k and every match alike), never a crash or a wrong answer.
TEST(SegmentPack, DamagedPostingsInAPackAreErrors) {
  refresh_util::NoJournal whole_generations;
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  for (int i = 0; i < 4; i++) testutil::write(root + "/f" + std::to_string(i), "w1 w2 w3\n");
  scipis_options o = refresh_util::tiny_options();
  o.indexer_threads = 1;  // the new files' postings in one segment, as regions
  o.tfidf_index_size = 4 << 20;
  scipis_build_stats st;
  scipis_error err;
  refresh_util::settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  std::string text;
  for (int i = 0; i < 400; i++) text += "zz1 zz2 zz" + std::to_string(i) + "\n";
  for (int i = 0; i < 3; i++) testutil::write(root + "/n" + std::to_string(i), text);
  refresh_util::settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(testutil::search(dir, "zz1").size(), 3u);
  std::vector<std::string> packs;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".pack") packs.push_back(e.path().string());
  ASSERT_FALSE(packs.empty());
  int harmed = 0;
  for (const std::string& pack : packs) {
    const std::string orig = testutil::read(pack);
    ASSERT_GT(orig.size(), kHeaderSize + 16) << pack;
    // The part table's first entry: the TF data's offset and length.
    const auto* t = reinterpret_cast<const unsigned char*>(orig.data()) + kHeaderSize;
    const uint64_t off = get_u64(t), len = get_u64(t + 8);
    ASSERT_EQ(orig.compare(off, 8, kMagicTfData), 0) << pack;
    // Its magic, then every byte of its regions.
    for (int harm = 0; harm < 2; harm++) {
      std::string bad = orig;
      if (harm == 0) bad[off + 1] ^= 0x21;
      for (uint64_t at = off + kHeaderSize; harm == 1 && at < off + len; at++) bad[at] ^= 0x21;
      testutil::write(pack, bad);
      for (int64_t k : {int64_t{10}, int64_t{-1}}) {
        scipis_error e{};
        const auto hits = testutil::search(dir, "zz1 zz2", k, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &e);
        EXPECT_EQ(e.code, SCIPIS_E_CORRUPT) << pack << " harm " << harm << " k " << k << ": " << e.message;
        EXPECT_NE(std::string(e.message).find(pack), std::string::npos) << e.message;
        EXPECT_TRUE(hits.empty());
      }
      harmed++;
    }
    testutil::write(pack, orig);
  }
  EXPECT_GT(harmed, 0);
  EXPECT_EQ(testutil::search(dir, "zz1").size(), 3u);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

}  // namespace
