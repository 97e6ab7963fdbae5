// The file-index data file (segment_format.h): records in blocks of
// kFileBlock, front-coded paths. Round trips at the edges of every field,
// and damage to every part of a file: always a corruption error naming the
// file, never a crash, a hang or a huge allocation.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "index/file_block_stats.h"
#include "index/path_index.h"
#include "index/segment_format.h"
#include "index/segment_reader.h"
#include "test_util.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace {

using scipis::DocInfo;
using scipis::FileBlocks;
using scipis::FileData;
using scipis::kFileBlock;
using scipis::kHeaderSize;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
const std::string kPath = "/index/g7/file_index_3/seg_5.data";

struct Rec {
  DocInfo d;
  std::string path;
};

DocInfo doc(uint64_t seq, uint64_t size, int64_t mtime, uint64_t tokens, int64_t ctime = 0,
            uint64_t ino = 0, uint32_t uid = 0, uint32_t gid = 0, uint32_t mode = 0,
            uint64_t tail = 0) {
  return DocInfo{seq, size, mtime, tokens, ctime, ino, uid, gid, mode, tail};
}

std::string serialise(const std::vector<Rec>& recs) {
  scipis::PathIndex pi(uint64_t{1} << 30);
  for (const Rec& r : recs) pi.add(r.d, r.path);
  std::string data;
  std::vector<std::string> metas;
  pi.serialise(1, data, metas);
  return data;
}

// The length array and each block's statistics, read in place, against
// the records themselves: lengths exact (or the escape), ranges exact,
// fences the least and greatest paths cut to kPathFence bytes; and a
// block's path test never rules out a range that holds one of its paths.
void expect_lengths_and_stats(const std::string& bytes, const std::vector<Rec>& recs) {
  const FileBlocks fb(kPath, bytes);
  ASSERT_EQ(fb.records(), recs.size());
  for (size_t i = 0; i < recs.size(); i++) {
    const uint64_t want = std::min<uint64_t>(recs[i].d.tokens, scipis::kLenInRecord);
    ASSERT_EQ(fb.len(i), want) << i;
  }
  std::mt19937_64 rng(recs.size());
  // The fences keep what follows the prefix all paths share.
  size_t lcp = recs.empty() ? 0 : recs[0].path.size();
  for (const Rec& r : recs) {
    size_t k = 0;
    while (k < lcp && k < r.path.size() && r.path[k] == recs[0].path[k]) k++;
    lcp = k;
  }
  if (fb.blocks()) {
    EXPECT_EQ(fb.common_prefix(), recs[0].path.substr(0, lcp));
  }
  for (size_t b = 0; b < fb.blocks(); b++) {
    const scipis::FileBlockStats st = fb.stats(b);
    uint64_t smin = kU64Max, smax = 0;
    int64_t mmin = kI64Max, mmax = kI64Min, cmin = kI64Max, cmax = kI64Min;
    uint32_t umin = UINT32_MAX, umax = 0, gmin = UINT32_MAX, gmax = 0;
    std::string lo, hi;
    const size_t end = std::min(recs.size(), (b + 1) * kFileBlock);
    for (size_t i = b * kFileBlock; i < end; i++) {
      const DocInfo& d = recs[i].d;
      smin = std::min(smin, d.size), smax = std::max(smax, d.size);
      mmin = std::min(mmin, d.mtime_ns), mmax = std::max(mmax, d.mtime_ns);
      cmin = std::min(cmin, d.ctime_ns), cmax = std::max(cmax, d.ctime_ns);
      umin = std::min(umin, d.uid), umax = std::max(umax, d.uid);
      gmin = std::min(gmin, d.gid), gmax = std::max(gmax, d.gid);
      if (i == b * kFileBlock || recs[i].path < lo) lo = recs[i].path;
      if (i == b * kFileBlock || recs[i].path > hi) hi = recs[i].path;
    }
    EXPECT_EQ(st.size_min, smin) << b;
    EXPECT_EQ(st.size_max, smax) << b;
    EXPECT_EQ(st.mtime_min, mmin) << b;
    EXPECT_EQ(st.mtime_max, mmax) << b;
    EXPECT_EQ(st.ctime_min, cmin) << b;
    EXPECT_EQ(st.ctime_max, cmax) << b;
    EXPECT_EQ(st.uid_min, umin) << b;
    EXPECT_EQ(st.uid_max, umax) << b;
    EXPECT_EQ(st.gid_min, gmin) << b;
    EXPECT_EQ(st.gid_max, gmax) << b;
    EXPECT_EQ(st.path_lo, lo.substr(lcp, scipis::kPathFence)) << b;
    EXPECT_EQ(st.path_hi, hi.substr(lcp, scipis::kPathFence)) << b;
    EXPECT_EQ(st.hi_cut, hi.size() - lcp > scipis::kPathFence) << b;
    // Ranges around and between the block's paths (and prefixes of
    // them): whenever one holds a path, the block may meet it.
    for (int k = 0; k < 40; k++) {
      const std::string& a = recs[b * kFileBlock + rng() % (end - b * kFileBlock)].path;
      const std::string& z = recs[b * kFileBlock + rng() % (end - b * kFileBlock)].path;
      std::string from = a.substr(0, rng() % (a.size() + 1));
      std::string to = z.substr(0, rng() % (z.size() + 1));
      if (rng() % 3 == 0) to.push_back(static_cast<char>(rng()));
      if (rng() % 4 == 0) to.clear();
      bool holds = false;
      for (size_t i = b * kFileBlock; i < end; i++)
        holds |= recs[i].path >= from && (to.empty() || recs[i].path < to);
      if (holds) {
        std::string_view sfrom, sto;
        const bool any = scipis::range_after_prefix(fb.common_prefix(), from, to, !to.empty(), sfrom, sto);
        EXPECT_TRUE(any && st.paths_may_meet(sfrom, sto)) << b << " [" << from << ", " << to << ")";
      }
    }
  }
}

// Decoded from each restart, up to the record after it and to the end of
// its block, the records are the ones written; each path read alone too.
void expect_restarts(const std::string& bytes, const std::vector<Rec>& recs) {
  const FileBlocks fb(kPath, bytes);
  DocInfo docs[kFileBlock];
  size_t ends[kFileBlock];
  std::string alone = "left over";
  for (size_t b = 0; b < fb.blocks(); b++)
    for (size_t i = 0; i < fb.records_in(b); i++) {
      fb.path_of(b, i, alone);
      ASSERT_EQ(alone, recs[b * kFileBlock + i].path) << b << " " << i;
    }
  for (size_t b = 0; b < fb.blocks(); b++) {
    for (size_t r = 0; r < fb.records_in(b); r += scipis::kRestart) {
      for (size_t upto : {r + 1, fb.records_in(b)}) {
        std::string paths = "kept";  // decoded paths are appended
        fb.decode_from(b, r, docs, paths, ends, upto);
        size_t at = 4;
        for (size_t i = r; i < upto; i++) {
          const Rec& want = recs[b * kFileBlock + i];
          const DocInfo& d = docs[i - r];
          ASSERT_EQ(d.seq, want.d.seq) << b << " " << i;
          ASSERT_EQ(d.mtime_ns, want.d.mtime_ns) << b << " " << i;
          ASSERT_EQ(d.ino, want.d.ino) << b << " " << i;
          ASSERT_EQ(d.uid, want.d.uid) << b << " " << i;
          ASSERT_EQ(d.gid, want.d.gid) << b << " " << i;
          ASSERT_EQ(d.mode, want.d.mode) << b << " " << i;
          ASSERT_EQ(d.ctime_ns, want.d.ctime_ns) << b << " " << i;
          ASSERT_EQ(paths.substr(at, ends[i - r] - at), want.path) << b << " " << i;
          at = ends[i - r];
        }
      }
    }
  }
}

void expect_round_trip(const std::vector<Rec>& recs) {
  FileData fd;
  fd.bytes = serialise(recs);
  FileData::load(kPath, fd);
  ASSERT_EQ(fd.docs.size(), recs.size());
  ASSERT_EQ(fd.paths.size(), recs.size());
  for (size_t i = 0; i < recs.size(); i++) {
    EXPECT_EQ(fd.docs[i].seq, recs[i].d.seq) << i;
    EXPECT_EQ(fd.docs[i].size, recs[i].d.size) << i;
    EXPECT_EQ(fd.docs[i].mtime_ns, recs[i].d.mtime_ns) << i;
    EXPECT_EQ(fd.docs[i].tokens, recs[i].d.tokens) << i;
    EXPECT_EQ(fd.docs[i].ctime_ns, recs[i].d.ctime_ns) << i;
    EXPECT_EQ(fd.docs[i].ino, recs[i].d.ino) << i;
    EXPECT_EQ(fd.docs[i].uid, recs[i].d.uid) << i;
    EXPECT_EQ(fd.docs[i].gid, recs[i].d.gid) << i;
    EXPECT_EQ(fd.docs[i].mode, recs[i].d.mode) << i;
    EXPECT_EQ(fd.docs[i].tail, recs[i].d.tail) << i;
    EXPECT_EQ(fd.paths[i], recs[i].path) << i;
  }
  expect_lengths_and_stats(serialise(recs), recs);
  expect_restarts(serialise(recs), recs);
}

// Records with consecutive seqs from first, as an indexer makes them.
std::vector<Rec> plain(size_t n, uint64_t first = 0) {
  std::vector<Rec> v;
  for (size_t i = 0; i < n; i++)
    v.push_back({doc(first + i, 1000 + i * 37, 1700000000000000000 + static_cast<int64_t>(i) * 999,
                     i * 11, 1700000000000000000 + static_cast<int64_t>(i) * 1001, 5000000 + i * 3,
                     1000 + static_cast<uint32_t>(i % 3), 100, 0100644 | static_cast<uint32_t>(i % 2) << 7),
                 "/data/logs/run" + std::to_string(i / 10) + "/part" + std::to_string(i) + ".log"});
  return v;
}

void expect_corrupt(const std::string& bytes, const std::string& what) {
  FileData fd;
  fd.bytes = bytes;
  try {
    FileData::load(kPath, fd);
    ADD_FAILURE() << what << ": loaded without an error";
  } catch (const scipis::Error& e) {
    EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(kPath), std::string::npos) << what << ": " << e.what();
  }
}

uint32_t u32_at(const std::string& b, size_t at) {
  return scipis::get_u32(reinterpret_cast<const unsigned char*>(b.data()) + at);
}
void set_u32(std::string& b, size_t at, uint32_t v) { scipis::write_u32(b.data() + at, v); }
uint64_t count_of(const std::string& b) {
  return scipis::get_u64(reinterpret_cast<const unsigned char*>(b.data()) + 16);
}
size_t blocks_of(const std::string& b) {
  return static_cast<size_t>((count_of(b) + kFileBlock - 1) / kFileBlock);
}
// Where block k starts in the file, and where the first one does.
// (after the offset table, the two section crcs, the common prefix's
// length, the lengths and their chunks' crcs, and the statistics).
size_t first_block(const std::string& b) {
  const size_t lens = kHeaderSize + 4 * blocks_of(b) + 12;
  const size_t chunks = (count_of(b) + scipis::kLenChunk - 1) / scipis::kLenChunk;
  return lens + 4 * count_of(b) + 4 * chunks + u32_at(b, lens - 4) + scipis::kBlockStatBytes * blocks_of(b);
}
size_t block_start(const std::string& b, size_t k) { return first_block(b) + u32_at(b, kHeaderSize + 4 * k); }
size_t block_end(const std::string& b, size_t k) {
  return k + 1 < blocks_of(b) ? block_start(b, k + 1) : b.size();
}

// Re-signs a file after an edit: the header's checksums, the table's and
// every block's, so that the structural checks are what must catch it.
void resign_header(std::string& b) {
  set_u32(b, 24, scipis::crc32c(b.data() + kHeaderSize, 4 * blocks_of(b) + 12));
  set_u32(b, 28, scipis::crc32c(b.data(), 28));
}
void resign_block(std::string& b, size_t start, size_t end) {
  set_u32(b, end - 4, scipis::crc32c(b.data() + start, end - 4 - start));
}

}  // namespace

TEST(FileData, ZeroRecords) {
  std::string b = serialise({});
  EXPECT_EQ(b.size(), kHeaderSize + 12);  // two section crcs, a prefix length
  expect_round_trip({});
}

TEST(FileData, OneRecord) { expect_round_trip(plain(1)); }

TEST(FileData, BlockEdges) {
  for (size_t n : {kFileBlock - 1, kFileBlock, kFileBlock + 1, 2 * kFileBlock, 2 * kFileBlock + 1,
                   size_t{1000}}) {
    SCOPED_TRACE(n);
    expect_round_trip(plain(n));
    expect_round_trip(plain(n, uint64_t{1} << 40));
    const std::string b = serialise(plain(n));
    EXPECT_EQ(blocks_of(b), (n + kFileBlock - 1) / kFileBlock);
  }
}

TEST(FileData, PathsSharingNoPrefix) {
  std::vector<Rec> v = plain(150);
  for (size_t i = 0; i < v.size(); i++)
    v[i].path = std::string(1, static_cast<char>('a' + i % 26)) + std::to_string(i);
  expect_round_trip(v);
}

TEST(FileData, IdenticalAndNestedPaths) {
  std::vector<Rec> v = plain(140);
  for (size_t i = 0; i < v.size(); i++) {
    // Runs of one path, then a path that is a prefix of the one before
    // and one that extends it, and empty paths.
    if (i < 70) v[i].path = "/same/path/for/all";
    else if (i % 4 == 0) v[i].path = "/same/path";
    else if (i % 4 == 1) v[i].path = "/same/path/longer/still";
    else if (i % 4 == 2) v[i].path = "";
    else v[i].path = "/";
  }
  expect_round_trip(v);
}

TEST(FileData, LongPaths) {
  std::vector<Rec> v = plain(130);
  for (size_t i = 0; i < v.size(); i++) {
    v[i].path = std::string(4096, static_cast<char>('a' + i % 3));
    if (i % 5 == 0) v[i].path[4095] = 'z';       // shares 4095 bytes
    if (i % 7 == 0) v[i].path += std::string(5000, 'q');  // longer still
  }
  expect_round_trip(v);
}

TEST(FileData, ExtremeValues) {
  const uint64_t sizes[] = {0, 1, kU64Max, kU64Max - 1, uint64_t{1} << 63};
  const int64_t mtimes[] = {0, -1, kI64Min, kI64Max, kI64Min + 1, kI64Max - 1, -1000000000, 1};
  std::vector<Rec> v;
  for (size_t i = 0; i < 200; i++) {
    const uint32_t ids[] = {0, 1, UINT32_MAX, UINT32_MAX - 1, 1u << 31, 1000};
    DocInfo d = doc(i, sizes[i % 5], mtimes[(i * 3) % 8], sizes[(i + 2) % 5], mtimes[(i * 5 + 1) % 8],
                    sizes[(i + 3) % 5], ids[i % 6], ids[(i + 2) % 6], ids[(i * 7) % 6],
                    i % 3 == 0 ? 0 : i % 3 == 1 ? 1 : uint64_t{1} << 32);
    v.push_back({d, "/x/" + std::to_string(i)});
  }
  expect_round_trip(v);
  // Negative mtimes throughout, and seqs at the top of their range, not
  // ascending: the deltas wrap and still round-trip.
  for (size_t i = 0; i < v.size(); i++) {
    v[i].d.mtime_ns = -static_cast<int64_t>(i) * 1000000007 - 1;
    v[i].d.seq = i % 2 ? kU64Max - i : i * 1000;
  }
  expect_round_trip(v);
  std::vector<Rec> one = {{doc(kU64Max, kU64Max, kI64Min, kU64Max, kI64Max, kU64Max, UINT32_MAX,
                               UINT32_MAX, UINT32_MAX),
                           "/z"}};
  expect_round_trip(one);
  one[0].d = doc(0, 0, kI64Max, 0, kI64Min, 0, 0, 0, 0);
  expect_round_trip(one);
}

TEST(FileData, RandomRecords) {
  std::mt19937_64 rng(7);
  std::vector<Rec> v;
  std::string path = "/r";
  for (size_t i = 0; i < 3000; i++) {
    DocInfo d = doc(i, rng() >> (rng() % 64), static_cast<int64_t>(rng()) >> (rng() % 64),
                    rng() >> (rng() % 64), static_cast<int64_t>(rng()) >> (rng() % 64),
                    rng() >> (rng() % 64), static_cast<uint32_t>(rng() >> (rng() % 64)),
                    static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng() >> 40),
                    rng() % 3 ? (rng() & UINT32_MAX) + 1 : 0);
    path.resize(rng() % (path.size() + 1));
    for (size_t k = rng() % 20; k > 0; k--) path.push_back(static_cast<char>(rng()));
    v.push_back({d, path});
  }
  expect_round_trip(v);
}

TEST(FileData, LengthsPastThirtyTwoBits) {
  std::vector<Rec> v = plain(70);
  v[3].d.tokens = scipis::kLenInRecord;
  v[4].d.tokens = scipis::kLenInRecord - 1;
  v[66].d.tokens = kU64Max;
  v[67].d.tokens = uint64_t{1} << 40;
  expect_round_trip(v);
}

// Paths longer than a fence, sharing more than a fence's bytes, in no
// order within a block.
TEST(FileData, FencesOfLongPaths) {
  std::mt19937_64 rng(11);
  std::vector<Rec> v = plain(300);
  const std::string stem = "/scratch/project-with-a-long-name/run-";
  for (Rec& r : v) r.path = stem + std::to_string(rng() % 1000) + (rng() % 2 ? "/a" : std::string(40, 'z'));
  expect_round_trip(v);
}

TEST(FileData, SmallerThanFixedRecords) {
  // Fixed fields (six of 64 bits, three of 32: 60 bytes) and the whole
  // path per record. A restart (one record in kRestart) is coded whole,
  // as a block's first is: these short deltas compress 2.3-fold, not 3
  // (2.8-fold when one record in 16 was a restart).
  const std::vector<Rec> v = plain(1000);
  size_t fixed = kHeaderSize;
  for (const Rec& r : v) fixed += 60 + r.path.size();
  const size_t now = serialise(v).size();
  EXPECT_LT(now * 20, fixed * 9) << now << " bytes against " << fixed;
}

TEST(FileDataDamage, RestartTablesWithValidChecksums) {
  const std::string b = serialise(plain(3 * kFileBlock + 40));
  size_t damaged = 0;
  for (size_t k = 0; k < blocks_of(b); k++) {
    const size_t start = block_start(b, k), end = block_end(b, k);
    const size_t records = std::min<size_t>(kFileBlock, count_of(b) - k * kFileBlock);
    const size_t restarts = (records - 1) / scipis::kRestart;
    for (size_t j = 0; j < restarts; j++) {
      const uint32_t was = u32_at(b, start + 4 * j);
      const uint32_t len = static_cast<uint32_t>(end - 4 - start);
      for (uint32_t v : {uint32_t{0}, uint32_t{1}, static_cast<uint32_t>(4 * restarts - 1),
                         static_cast<uint32_t>(4 * restarts), was - 1, was + 1, len - 1, len,
                         len + 100, UINT32_MAX}) {
        if (v == was) continue;
        std::string c = b;
        set_u32(c, start + 4 * j, v);
        resign_block(c, start, end);
        expect_corrupt(c, "restart " + std::to_string(j) + " of block " + std::to_string(k) + " at " +
                              std::to_string(v));
        // Read from the damaged restart alone: an error, or records
        // within the block's bytes, never a crash.
        const FileBlocks fb(kPath, c);
        DocInfo docs[kFileBlock];
        size_t ends[kFileBlock];
        std::string paths;
        try {
          fb.decode_from(k, scipis::kRestart * (j + 1), docs, paths, ends);
          EXPECT_LE(paths.size(), (end - start) * kFileBlock) << v;
        } catch (const scipis::Error& e) {
          EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << e.what();
        }
        damaged++;
      }
    }
  }
  EXPECT_GT(damaged, 50u);
}

TEST(FileDataDamage, TruncatedAtEveryBlockBoundary) {
  const std::string b = serialise(plain(4 * kFileBlock + 10));
  ASSERT_EQ(blocks_of(b), 5u);
  std::vector<size_t> cuts = {0, 8, kHeaderSize - 1, kHeaderSize, first_block(b) - 1};
  for (size_t k = 0; k < blocks_of(b); k++) {
    cuts.push_back(block_start(b, k));
    cuts.push_back(block_start(b, k) + 1);
    cuts.push_back(block_end(b, k) - 4);  // the block's crc gone
    cuts.push_back(block_end(b, k) - 1);
  }
  for (size_t cut : cuts) {
    if (cut >= b.size()) continue;
    expect_corrupt(b.substr(0, cut), "truncated to " + std::to_string(cut));
  }
  // Every other length too.
  for (size_t cut = 0; cut < b.size(); cut++) expect_corrupt(b.substr(0, cut), "cut");
  // And bytes after the end.
  expect_corrupt(b + std::string(1, '\0'), "one byte more");
  expect_corrupt(b + b.substr(first_block(b)), "the blocks twice");
}

TEST(FileDataDamage, FlippedBitInEachBlock) {
  const std::string b = serialise(plain(3 * kFileBlock + 1));
  ASSERT_EQ(blocks_of(b), 4u);
  for (size_t k = 0; k < blocks_of(b); k++) {
    for (size_t at : {block_start(b, k), (block_start(b, k) + block_end(b, k)) / 2,
                      block_end(b, k) - 1}) {
      std::string d = b;
      d[at] ^= 0x04;
      expect_corrupt(d, "block " + std::to_string(k) + " byte " + std::to_string(at));
    }
  }
  // Every bit of the file, header and offset table included.
  for (size_t at = 0; at < b.size(); at++) {
    for (int bit = 0; bit < 8; bit++) {
      std::string d = b;
      d[at] ^= static_cast<char>(1 << bit);
      expect_corrupt(d, "byte " + std::to_string(at) + " bit " + std::to_string(bit));
    }
  }
}

TEST(FileDataDamage, BadOffsetTables) {
  const std::string b = serialise(plain(3 * kFileBlock + 5));
  const size_t blocks = blocks_of(b);
  ASSERT_EQ(blocks, 4u);
  auto with_offset = [&](size_t k, uint32_t v) {
    std::string d = b;
    set_u32(d, kHeaderSize + 4 * k, v);
    resign_header(d);
    return d;
  };
  const uint32_t room = static_cast<uint32_t>(b.size() - first_block(b));
  for (size_t k = 0; k < blocks; k++) {
    const std::string name = "block " + std::to_string(k);
    expect_corrupt(with_offset(k, room), name + " at the end");
    expect_corrupt(with_offset(k, room + 1), name + " past the end");
    expect_corrupt(with_offset(k, UINT32_MAX), name + " far past the end");
    // Into the middle of its own block or the one before: checksums or
    // bounds fail.
    const uint32_t own = u32_at(b, kHeaderSize + 4 * k);
    expect_corrupt(with_offset(k, own + 1), name + " one byte late");
    if (k > 0) {
      expect_corrupt(with_offset(k, own - 1), name + " one byte early");
      expect_corrupt(with_offset(k, u32_at(b, kHeaderSize + 4 * (k - 1))), name + " same as before");
    }
  }
}

// A flipped bit in the length array or the statistics is reported when
// they are first read, naming the file.
TEST(FileDataDamage, LengthsAndStatisticsChecked) {
  // Lengths of more than one chunk; damage in any chunk, in the chunks'
  // crcs or in the statistics is reported when that part is read.
  const std::vector<Rec> v = plain(scipis::kLenChunk + 3 * kFileBlock + 5);
  const std::string b = serialise(v);
  const size_t lens_at = kHeaderSize + 4 * blocks_of(b) + 12;
  const size_t crcs_at = lens_at + 4 * v.size();
  const size_t stats_at = crcs_at + 8;
  for (size_t at : {lens_at, lens_at + 4 * scipis::kLenChunk - 1, lens_at + 4 * scipis::kLenChunk,
                    crcs_at - 1, crcs_at, crcs_at + 7, stats_at, stats_at + 70, first_block(b) - 1}) {
    std::string d = b;
    d[at] = static_cast<char>(d[at] ^ 4);
    const FileBlocks fb(kPath, d);
    try {
      for (size_t i = 0; i < v.size(); i++) fb.len(i);
      fb.stats(0);
      ADD_FAILURE() << "byte " << at << ": read without an error";
    } catch (const scipis::Error& e) {
      EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << e.what();
      EXPECT_NE(std::string(e.what()).find(kPath), std::string::npos) << e.what();
    }
  }
  // An undamaged chunk still reads when another one is damaged.
  std::string d = b;
  d[lens_at + 4 * scipis::kLenChunk] ^= 4;
  const FileBlocks fb(kPath, d);
  EXPECT_EQ(fb.len(3), std::min<uint64_t>(v[3].d.tokens, scipis::kLenInRecord));
  EXPECT_THROW(fb.len(scipis::kLenChunk), scipis::Error);
}

TEST(FileDataDamage, CountsAndLengthsWithValidChecksums) {
  const std::string b = serialise(plain(2 * kFileBlock + 3));
  // A count no file could hold: refused before anything is sized by it.
  for (uint64_t count : {kU64Max, uint64_t{1} << 60, uint64_t{1} << 32, count_of(b) + 1,
                         count_of(b) - 1, count_of(b) + kFileBlock, uint64_t{0}}) {
    std::string d = b;
    scipis::write_u64(d.data() + 16, count);
    // The table that count implies, re-signed where it fits the file.
    const uint64_t table = 4 * ((count + kFileBlock - 1) / kFileBlock) + 12;
    if (table <= d.size() - kHeaderSize) set_u32(d, 24, scipis::crc32c(d.data() + kHeaderSize, table));
    set_u32(d, 28, scipis::crc32c(d.data(), 28));
    expect_corrupt(d, "count " + std::to_string(count));
  }
  // A single record whose fields are rewritten, its block re-signed.
  auto one = [&](const std::string& record) {
    std::string d;
    scipis::FileHeader h;
    h.count = 1;
    // The offset table, the length (5, as fields() has it) and its chunk's
    // crc, zeroed statistics, each signed.
    std::string lens, crcs, stats(scipis::kBlockStatBytes, '\0'), table;
    scipis::put_u32(lens, 5);
    scipis::put_u32(crcs, scipis::crc32c(lens.data(), lens.size()));
    lens += crcs;
    scipis::put_u32(table, 0);
    scipis::put_u32(table, scipis::crc32c(crcs.data(), crcs.size()));
    scipis::put_u32(table, scipis::crc32c(stats.data(), stats.size()));
    scipis::put_u32(table, 0);  // no common prefix kept
    h.body_crc = scipis::crc32c(table.data(), table.size());
    scipis::put_header(d, scipis::kMagicFileData, h);
    d += table + lens + stats;
    std::string blk = record;
    scipis::put_u32(blk, scipis::crc32c(blk.data(), blk.size()));
    return d + blk;
  };
  // seq, size, mtime, tokens, ctime - mtime, inode, uid, gid, mode, tail.
  auto fields = [](uint64_t uid = 5, uint64_t gid = 5, uint64_t mode = 5, uint64_t tail = 5) {
    std::string r;
    for (int i = 0; i < 6; i++) scipis::put_varint(r, 5);
    scipis::put_varint(r, uid);
    scipis::put_varint(r, gid);
    scipis::put_varint(r, mode);
    scipis::put_varint(r, tail);
    return r;
  };
  auto record = [&](uint64_t shared, uint64_t suffix, const std::string& bytes,
                    const std::string& head = "") {
    std::string r = head.empty() ? fields() : head;
    scipis::put_varint(r, shared);
    scipis::put_varint(r, suffix);
    return r + bytes;
  };
  {
    FileData fd;
    fd.bytes = one(record(0, 3, "/ab"));
    FileData::load(kPath, fd);
    ASSERT_EQ(fd.paths.size(), 1u);
    EXPECT_EQ(fd.paths[0], "/ab");
  }
  expect_corrupt(one(record(0, uint64_t{1} << 40, "/ab")), "a huge suffix");
  expect_corrupt(one(record(0, kU64Max, "/ab")), "the largest suffix");
  expect_corrupt(one(record(0, 4, "/ab")), "a suffix longer than the block");
  expect_corrupt(one(record(1, 3, "/ab")), "a prefix shared with no path");
  expect_corrupt(one(record(0, 2, "/ab")), "a byte after the record");
  expect_corrupt(one(record(0, 3, "/ab") + "\x80"), "a varint cut short after the record");
  expect_corrupt(one(std::string(11, '\x05') + "\x80"), "a varint cut short");
  // 32-bit fields past 32 bits.
  expect_corrupt(one(record(0, 3, "/ab", fields(uint64_t{1} << 32))), "a uid past 32 bits");
  expect_corrupt(one(record(0, 3, "/ab", fields(5, kU64Max))), "a gid past 32 bits");
  expect_corrupt(one(record(0, 3, "/ab", fields(5, 5, uint64_t{1} << 40))), "a mode past 32 bits");
  expect_corrupt(one(record(0, 3, "/ab", fields(5, 5, 5, (uint64_t{1} << 32) + 1))),
                 "a tail checksum past 32 bits");
  {
    FileData fd;
    fd.bytes = one(record(0, 3, "/ab", fields(UINT32_MAX, 0, UINT32_MAX)));
    FileData::load(kPath, fd);
    EXPECT_EQ(fd.docs[0].uid, UINT32_MAX);
    EXPECT_EQ(fd.docs[0].mode, UINT32_MAX);
  }
  expect_corrupt(one(std::string(11, '\xff') + record(0, 3, "/ab")), "an 11-byte varint");
  expect_corrupt(one(""), "an empty block");

  // A prefix longer than the previous path, with valid checksums.
  const std::vector<Rec> two = {{doc(0, 1, 1, 1), "/a"}, {doc(1, 1, 1, 1), "/b"}};
  std::string d = serialise(two);
  const size_t start = block_start(d, 0);
  // The second record's shared length (1) sits right after its fields.
  std::string blk = d.substr(start, d.size() - 4 - start);
  // The first record: 12 one-byte varints and "/a"; the second's shared
  // length follows its 10 field varints.
  const size_t second = 12 + 2;
  ASSERT_EQ(blk[second + 10], 1);
  blk[second + 10] = 3;
  d = d.substr(0, start) + blk + "0000";
  resign_block(d, start, d.size());
  expect_corrupt(d, "a prefix longer than the previous path");
  // A path read alone (a ranking's tie) finds it too.
  const FileBlocks fb(kPath, d);
  std::string p;
  fb.path_of(0, 0, p);
  EXPECT_EQ(p, "/a");
  try {
    fb.path_of(0, 1, p);
    ADD_FAILURE() << "path_of read a prefix longer than the previous path";
  } catch (const scipis::Error& e) {
    EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << e.what();
  }
}

// Through a collection: damage to any block of a data file of several
// blocks is reported by a search.
TEST(FileDataDamage, SearchReportsEachBlock) {
  const std::string root = testutil::scratch_dir();
  for (int i = 0; i < 3 * static_cast<int>(kFileBlock) + 7; i++)
    testutil::write(root + "/f" + std::to_string(i) + ".log", "alpha beta " + std::to_string(i));
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 1;
  o.split_factor = 1;
  auto build = [&](const std::string& dir) {
    scipis_build_stats st;
    scipis_error err;
    ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  };
  auto data_file = [](const std::string& dir) {
    std::string g;
    DIR* d = opendir(dir.c_str());
    while (struct dirent* e = readdir(d))
      if (e->d_name[0] == 'g') g = dir + "/" + e->d_name + "/file_index_0/seg_0.data";
    closedir(d);
    return g;
  };
  const std::string probe_dir = testutil::scratch_dir();
  build(probe_dir);
  const std::string probe = testutil::read(data_file(probe_dir));
  ASSERT_EQ(blocks_of(probe), 4u);
  EXPECT_EQ(testutil::search(probe_dir, "alpha", -1).size(), 3 * kFileBlock + 7);
  testutil::rm_rf(probe_dir);
  for (size_t k = 0; k < 4; k++) {
    const std::string dir = testutil::scratch_dir();
    build(dir);
    const std::string p = data_file(dir);
    std::string b = testutil::read(p);
    b[(block_start(b, k) + block_end(b, k)) / 2] ^= 0x20;
    testutil::write(p, b);
    scipis_error err{};
    auto hits = testutil::search(dir, "beta", 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &err);
    EXPECT_EQ(err.code, SCIPIS_E_CORRUPT) << k << ": " << err.message;
    EXPECT_NE(std::string(err.message).find(p), std::string::npos) << err.message;
    EXPECT_TRUE(hits.empty());
    testutil::rm_rf(dir);
  }
  testutil::rm_rf(root);
}

// Through a collection: every file's record holds what stat(2) says of it
// (the oracle), for small files read in packs and a large one read in
// blocks, with other modes, owners (when the test may chown) and times.
TEST(FileData, RecordsHoldEachFilesStat) {
  const std::string root = testutil::scratch_dir();
  std::vector<std::string> paths;
  for (int i = 0; i < 150; i++) {
    const std::string p = root + "/d" + std::to_string(i % 3) + "/f" + std::to_string(i) + ".log";
    if (i < 3) ::mkdir((root + "/d" + std::to_string(i)).c_str(), 0755);
    testutil::write(p, "alpha beta " + std::to_string(i));
    paths.push_back(p);
  }
  const std::string big = root + "/big.log";
  testutil::write(big, std::string(3 << 20, 'x') + " tail");
  paths.push_back(big);
  for (size_t i = 0; i < paths.size(); i++) {
    ::chmod(paths[i].c_str(), i % 4 == 0 ? 0600 : i % 4 == 1 ? 0644 : i % 4 == 2 ? 0444 : 0755);
    if (::geteuid() == 0) (void)!::chown(paths[i].c_str(), 1000 + static_cast<uid_t>(i % 5),
                                         2000 + static_cast<gid_t>(i % 7));
    const struct timespec times[2] = {{1000000000 + static_cast<time_t>(i), 123456789},
                                      {1600000000 + static_cast<time_t>(i) * 7, static_cast<long>(i)}};
    ::utimensat(AT_FDCWD, paths[i].c_str(), times, 0);
  }
  scipis_options o;
  scipis_options_init(&o);
  o.indexer_threads = 2;
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr) << err.message;
  scipis_docs docs;
  ASSERT_EQ(scipis_list_files(ix, &docs, &err), 0) << err.message;
  ASSERT_EQ(docs.n, paths.size());
  for (size_t i = 0; i < docs.n; i++) {
    const scipis_doc& d = docs.docs[i];
    const std::string p(d.path, d.path_len);
    struct stat s;
    ASSERT_EQ(::stat(p.c_str(), &s), 0) << p;
    EXPECT_EQ(d.size, static_cast<uint64_t>(s.st_size)) << p;
    EXPECT_EQ(d.mtime_ns, static_cast<int64_t>(s.st_mtim.tv_sec) * 1000000000 + s.st_mtim.tv_nsec) << p;
    EXPECT_EQ(d.ctime_ns, static_cast<int64_t>(s.st_ctim.tv_sec) * 1000000000 + s.st_ctim.tv_nsec) << p;
    EXPECT_EQ(d.inode, static_cast<uint64_t>(s.st_ino)) << p;
    EXPECT_EQ(d.uid, static_cast<uint32_t>(s.st_uid)) << p;
    EXPECT_EQ(d.gid, static_cast<uint32_t>(s.st_gid)) << p;
    EXPECT_EQ(d.mode, static_cast<uint32_t>(s.st_mode)) << p;
  }
  scipis_docs_free(&docs);
  scipis_index_close(ix);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
