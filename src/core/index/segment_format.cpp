#include "index/segment_format.h"

#include <cstring>

#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {

void put_header(std::string& out, const char* magic, const FileHeader& h) {
  size_t start = out.size();
  out.append(magic, 8);
  put_u32(out, kFormatVersion);
  put_u32(out, h.aux);
  put_u64(out, h.count);
  put_u32(out, h.body_crc);
  put_u32(out, crc32c(out.data() + start, 28));
}

std::string sealed_file(const char* magic, uint64_t count, std::string_view body, uint32_t aux) {
  FileHeader h;
  h.aux = aux;
  h.count = count;
  h.body_crc = crc32c(body.data(), body.size());
  std::string out;
  put_header(out, magic, h);
  out.append(body);
  return out;
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
  // Not damage: written by another scipis. Its collection must be built
  // again by this one (a full build over it works: it reads no old file).
  if (version != kFormatVersion)
    throw Error(SCIPIS_E_CORRUPT, "scipis index file \"" + path + "\" has format version " +
                                      std::to_string(version) + ", this scipis reads version " +
                                      std::to_string(kFormatVersion) +
                                      ": build the collection again with scipis_index");
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
