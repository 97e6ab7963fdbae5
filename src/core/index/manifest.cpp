#include "index/manifest.h"

#include <cstring>

#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/error.h"
#include "util/fileio.h"

namespace scipis {

namespace {
// 1: the count of tombstoned documents follows the segments, then each
//    segment's run_started_ns.
// 2: then the count of appended files' chain links.
// 3: then each segment's meta_bytes.
// 4: then each segment's home generation and file number (its files may
//    be in an older generation's directory).
// 5: then each segment's flags (1: packed, index/segment_pack.h).
// 6: flag 2: the pack is at its generation's root (with flag 1 only).
// 7: flag 4: the pack is in its home's journal; then, for each such
//    segment, u64 offset and u64 length there.
constexpr uint32_t kManifestVersion = 7;
constexpr uint32_t kSegPacked = 1;
constexpr uint32_t kSegPackRoot = 2;
constexpr uint32_t kSegJournal = 4;
}  // namespace

std::string Manifest::encode() const {
  std::string body;
  // Grown once: each refresh encodes a manifest twice or more.
  body.reserve(16 + 256 + 8 * 8 + segments.size() * 88);
  put_u64(body, generation);
  put_u32(body, split_factor);
  put_u32(body, indexers);
  body.append(reinterpret_cast<const char*>(delimiter), 256);
  for (uint64_t v : {files, bytes, docs_with_tokens, total_tokens, terms, skipped,
                     index_bytes})
    put_u64(body, v);
  for (const auto& s : segments) {
    put_u32(body, s.indexer);
    put_u32(body, s.seg);
    put_u64(body, s.first_seq);
    put_u64(body, s.docs);
    put_u64(body, s.tf_data_bytes);
    put_u64(body, s.file_data_bytes);
  }
  put_u64(body, deleted);
  for (const auto& s : segments) put_u64(body, static_cast<uint64_t>(s.run_started_ns));
  put_u64(body, chain_links);
  for (const auto& s : segments) put_u64(body, s.meta_bytes);
  for (const auto& s : segments) {
    put_u64(body, home_of(s));
    put_u32(body, file_seg_of(s));
  }
  for (const auto& s : segments)
    put_u32(body, (s.packed ? kSegPacked : 0) | (s.packed && s.pack_root ? kSegPackRoot : 0) |
                      (s.packed && s.in_journal() ? kSegJournal : 0));
  for (const auto& s : segments) {
    if (!s.packed || !s.in_journal()) continue;
    put_u64(body, s.journal_off);
    put_u64(body, s.journal_len);
  }
  return sealed_file(kMagicManifest, segments.size(), body, kManifestVersion);
}

Manifest Manifest::decode(const std::string& path, const std::string& bytes) {
  FileHeader h = check_header(path, kMagicManifest, bytes.data(), bytes.size());
  std::string_view body(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
  check_body(path, h, body);
  Cursor c(body.data(), body.size());
  Manifest m;
  m.generation = c.u64();
  m.split_factor = c.u32();
  m.indexers = c.u32();
  // What the options allow (a reader sizes a table by it).
  if (c.ok() && (m.indexers == 0 || m.indexers > 256)) fail_corrupt(path, "bad indexer count");
  std::string_view d = c.bytes(256);
  if (c.ok()) std::copy(d.begin(), d.end(), m.delimiter);
  for (uint64_t* v : {&m.files, &m.bytes, &m.docs_with_tokens, &m.total_tokens,
                      &m.terms, &m.skipped, &m.index_bytes})
    *v = c.u64();
  if (!c.ok() || h.count > c.left() / 40)
    fail_corrupt(path, "manifest body is shorter than its header says");
  for (uint64_t i = 0; i < h.count; i++) {
    SegmentRef s;
    s.indexer = c.u32();
    s.seg = c.u32();
    s.first_seq = c.u64();
    s.docs = c.u64();
    s.tf_data_bytes = c.u64();
    s.file_data_bytes = c.u64();
    if (s.indexer >= m.indexers) fail_corrupt(path, "segment names an unknown indexer");
    m.segments.push_back(s);
  }
  if (h.aux >= 1) {
    m.deleted = c.u64();
    for (auto& s : m.segments) s.run_started_ns = static_cast<int64_t>(c.u64());
  }
  if (h.aux >= 2) m.chain_links = c.u64();
  for (auto& s : m.segments) s.meta_bytes = h.aux >= 3 ? c.u64() : kUnknownBytes;
  for (auto& s : m.segments) {
    s.home = h.aux >= 4 ? c.u64() : m.generation;
    s.file_seg = h.aux >= 4 ? c.u32() : s.seg;
    if (s.home > m.generation) fail_corrupt(path, "segment lives in a generation after the manifest's");
  }
  for (auto& s : m.segments) {
    const uint32_t flags = h.aux >= 5 ? c.u32() : 0;
    const uint32_t known = kSegPacked | kSegPackRoot | (h.aux >= 7 ? kSegJournal : 0);
    if (flags & ~known) fail_corrupt(path, "segment has unknown flags");
    if ((flags & kSegPackRoot) && !(flags & kSegPacked))
      fail_corrupt(path, "segment is at its generation's root but not packed");
    if ((flags & kSegJournal) && !(flags & kSegPacked))
      fail_corrupt(path, "segment is in its generation's journal but not packed");
    s.packed = flags & kSegPacked;
    s.pack_root = flags & kSegPackRoot;
    s.journal_len = flags & kSegJournal ? 1 : 0;  // its place follows
  }
  for (auto& s : m.segments) {
    if (!s.journal_len) continue;
    s.journal_off = c.u64();
    s.journal_len = c.u64();
    if (c.ok() && (s.journal_len == 0 || s.journal_off == 0 || s.journal_off % 4096 != 0 ||
                   s.journal_len > UINT64_MAX - s.journal_off))
      fail_corrupt(path, "segment's place in its journal is impossible");
  }
  if (h.aux > kManifestVersion) fail_corrupt(path, "manifest of a newer version");
  if (!c.ok() || c.left() != 0) fail_corrupt(path, "manifest has a bad length");
  if (m.split_factor == 0 || m.split_factor > 4096)
    fail_corrupt(path, "bad split factor");
  return m;
}

std::string encode_terms(const std::vector<uint8_t>& registers) {
  return sealed_file(kMagicTerms, registers.size(),
                     std::string_view(reinterpret_cast<const char*>(registers.data()), registers.size()));
}

std::vector<uint8_t> decode_terms(const std::string& bytes) {
  try {
    const FileHeader h = check_header("TERMS", kMagicTerms, bytes.data(), bytes.size());
    const std::string_view body(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
    if (body.size() != h.count) return {};
    check_body("TERMS", h, body);
    std::vector<uint8_t> r(body.size());
    std::memcpy(r.data(), body.data(), body.size());
    return r;
  } catch (const Error&) {
    return {};
  }
}

void write_fresh_as_of(const std::string& dir, int64_t ns) {
  std::string body;
  put_u64(body, static_cast<uint64_t>(ns));
  // A FRESH lost in a crash is only older (or unknown): no fsync.
  replace_file_atomic(dir + "/FRESH", sealed_file(kMagicFresh, 1, body), false);
}

bool read_fresh_as_of(const std::string& dir, int64_t& ns) {
  std::string bytes;
  if (!read_file(dir + "/FRESH", bytes)) return false;
  try {
    const FileHeader h = check_header(dir + "/FRESH", kMagicFresh, bytes.data(), bytes.size());
    const std::string_view body(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
    if (body.size() != 8 || h.count != 1) return false;
    check_body(dir + "/FRESH", h, body);
    ns = static_cast<int64_t>(get_u64(reinterpret_cast<const unsigned char*>(body.data())));
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace scipis
