#include "index/deletes.h"

#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis {

uint64_t count_dead(const DeadSeqs& dead) {
  uint64_t n = 0;
  for (const auto& d : dead) n += d.size();
  return n;
}

std::string encode_deletes(const DeadSeqs& dead) {
  std::string body;
  body.reserve(12 * count_dead(dead));
  for (size_t i = 0; i < dead.size(); i++) {
    for (uint64_t seq : dead[i]) {
      put_u32(body, static_cast<uint32_t>(i));
      put_u64(body, seq);
    }
  }
  return sealed_file(kMagicDeletes, count_dead(dead), body);
}

DeadSeqs decode_deletes(const std::string& path, const std::string& bytes,
                        const std::vector<uint64_t>& docs) {
  const FileHeader h = check_header(path, kMagicDeletes, bytes.data(), bytes.size());
  const std::string_view body(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
  if (body.size() % 12 != 0 || body.size() / 12 != h.count)
    fail_corrupt(path, "tombstone file has a bad length");
  check_body(path, h, body);
  DeadSeqs dead(docs.size());
  const auto* p = reinterpret_cast<const unsigned char*>(body.data());
  uint32_t last_ix = 0;
  for (uint64_t e = 0; e < h.count; e++, p += 12) {
    const uint32_t ix = get_u32(p);
    const uint64_t seq = get_u64(p + 4);
    if (ix >= docs.size() || seq >= docs[ix])
      fail_corrupt(path, "tombstone names an unknown document");
    auto& d = dead[ix];
    if (ix < last_ix || (!d.empty() && d.back() >= seq))
      fail_corrupt(path, "tombstones are out of order");
    last_ix = ix;
    d.push_back(seq);
  }
  return dead;
}

}  // namespace scipis
