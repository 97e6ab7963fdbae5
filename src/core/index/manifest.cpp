#include "index/manifest.h"

#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/fileio.h"

namespace scipis {

namespace {
// 1: the count of tombstoned documents follows the segments, then each
//    segment's run_started_ns.
constexpr uint32_t kManifestVersion = 1;
}  // namespace

std::string Manifest::encode() const {
  std::string body;
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
  std::string out;
  FileHeader h;
  h.aux = kManifestVersion;
  h.count = segments.size();
  h.body_crc = crc32c(body.data(), body.size());
  put_header(out, kMagicManifest, h);
  return out + body;
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
  if (h.aux > kManifestVersion) fail_corrupt(path, "manifest of a newer version");
  if (!c.ok() || c.left() != 0) fail_corrupt(path, "manifest has a bad length");
  if (m.split_factor == 0 || m.split_factor > 4096)
    fail_corrupt(path, "bad split factor");
  return m;
}

namespace {
constexpr uint32_t kTermsMagic = 0x534d5254;  // "TRMS"
constexpr uint32_t kFreshMagic = 0x48535246;  // "FRSH"
}  // namespace

std::string encode_terms(const std::vector<uint8_t>& registers) {
  std::string out;
  put_u32(out, kTermsMagic);
  put_u64(out, registers.size());
  out.append(reinterpret_cast<const char*>(registers.data()), registers.size());
  put_u32(out, crc32c(out.data(), out.size()));
  return out;
}

std::vector<uint8_t> decode_terms(const std::string& bytes) {
  if (bytes.size() < 16) return {};
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (get_u32(p) != kTermsMagic || get_u64(p + 4) != bytes.size() - 16 ||
      get_u32(p + bytes.size() - 4) != crc32c(bytes.data(), bytes.size() - 4))
    return {};
  return std::vector<uint8_t>(p + 12, p + bytes.size() - 4);
}

void write_fresh_as_of(const std::string& dir, int64_t ns) {
  std::string out;
  put_u32(out, kFreshMagic);
  put_u64(out, static_cast<uint64_t>(ns));
  put_u32(out, crc32c(out.data(), out.size()));
  replace_file_atomic(dir + "/FRESH", out);
}

bool read_fresh_as_of(const std::string& dir, int64_t& ns) {
  std::string bytes;
  if (!read_file(dir + "/FRESH", bytes) || bytes.size() != 16) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (get_u32(p) != kFreshMagic || get_u32(p + 12) != crc32c(bytes.data(), 12)) return false;
  ns = static_cast<int64_t>(get_u64(p + 4));
  return true;
}

}  // namespace scipis
