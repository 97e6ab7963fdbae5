#include "index/segment_format.h"

#include <cstring>

#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {

namespace {

// Nibble of a hex digit, 16 for any other byte.
struct NibbleTable {
  unsigned char v[256];
  constexpr NibbleTable() : v() {
    for (int c = 0; c < 256; c++) v[c] = 16;
    for (int c = 0; c < 10; c++) v['0' + c] = static_cast<unsigned char>(c);
    for (int c = 0; c < 6; c++) v['a' + c] = static_cast<unsigned char>(10 + c);
  }
};
constexpr NibbleTable kNibble;
constexpr char kHexDigits[] = "0123456789abcdef";

bool packable(const char* p, size_t n) {
  unsigned char any = 0;
  for (size_t i = 0; i < n; i++) any |= kNibble.v[static_cast<unsigned char>(p[i])];
  return !(any & 16);
}

}  // namespace

char* write_term(char* out, const char* p, size_t n) {
  const bool packed = packable(p, n);
  out = write_varint(out, (uint64_t{n} << 1) | (packed ? 1 : 0));
  if (!packed) {
    std::memcpy(out, p, n);
    return out + n;
  }
  size_t i = 0;
  for (; i + 1 < n; i += 2)
    *out++ = static_cast<char>(kNibble.v[static_cast<unsigned char>(p[i])] << 4 |
                               kNibble.v[static_cast<unsigned char>(p[i + 1])]);
  if (i < n) *out++ = static_cast<char>(kNibble.v[static_cast<unsigned char>(p[i])] << 4);
  return out;
}

std::string encode_term(std::string_view term) {
  std::string out(kMaxTermRecord + term.size(), '\0');
  char* end = write_term(out.data(), term.data(), term.size());
  out.resize(static_cast<size_t>(end - out.data()));
  return out;
}

bool read_term(Cursor& c, StoredTerm& t) {
  const unsigned char* start = c.pos();
  const uint64_t head = c.varint();
  t.len = static_cast<size_t>(head >> 1);
  t.packed = head & 1;
  if (!c.ok() || t.len == 0 || t.len > 255) return false;
  const size_t bytes = t.packed ? (t.len + 1) / 2 : t.len;
  std::string_view payload = c.bytes(bytes);
  if (!c.ok()) return false;
  // A packed odd length pads with 0, so that a term has one stored form.
  if (t.packed && (t.len & 1) && (payload.back() & 0x0f)) return false;
  t.record = std::string_view(reinterpret_cast<const char*>(start),
                              static_cast<size_t>(c.pos() - start));
  return true;
}

std::string decode_term(const StoredTerm& t) {
  const std::string_view payload = t.record.substr(t.record.size() - (t.packed ? (t.len + 1) / 2 : t.len));
  if (!t.packed) return std::string(payload);
  std::string out(t.len, '\0');
  for (size_t i = 0; i < t.len; i++) {
    const unsigned char b = static_cast<unsigned char>(payload[i / 2]);
    out[i] = kHexDigits[i & 1 ? b & 0x0f : b >> 4];
  }
  return out;
}

void put_header(std::string& out, const char* magic, const FileHeader& h) {
  size_t start = out.size();
  out.append(magic, 8);
  put_u32(out, kFormatVersion);
  put_u32(out, h.aux);
  put_u64(out, h.count);
  put_u32(out, h.body_crc);
  put_u32(out, crc32c(out.data() + start, 28));
}

FileHeader check_header(const std::string& path, const char* magic,
                        const void* data, size_t len) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (len < kHeaderSize) fail_corrupt(path, "file is shorter than its header");
  if (std::memcmp(p, magic, 8) != 0)
    fail_corrupt(path, "bad magic number (not a scipis file of this kind)");
  if (get_u32(p + 28) != crc32c(p, 28))
    fail_corrupt(path, "header checksum mismatch");
  uint32_t version = get_u32(p + 8);
  if (version != kFormatVersion)
    fail_corrupt(path, "format version " + std::to_string(version) +
                           " is not the supported version " +
                           std::to_string(kFormatVersion));
  FileHeader h;
  h.aux = get_u32(p + 12);
  h.count = get_u64(p + 16);
  h.body_crc = get_u32(p + 24);
  return h;
}

void check_body(const std::string& path, const FileHeader& h,
                std::string_view body) {
  if (crc32c(body.data(), body.size()) != h.body_crc)
    fail_corrupt(path, "checksum mismatch");
}

}  // namespace scipis
