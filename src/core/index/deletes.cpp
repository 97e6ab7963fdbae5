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
  body.reserve(2 * count_dead(dead) + 16 * dead.size());
  for (size_t i = 0; i < dead.size(); i++) {
    if (dead[i].empty()) continue;
    put_varint(body, i);
    put_varint(body, dead[i].size());
    uint64_t prev = 0;
    for (uint64_t seq : dead[i]) {
      put_varint(body, seq - prev);
      prev = seq;
    }
  }
  return sealed_file(kMagicDeletes, count_dead(dead), body, kDeletesDeltas);
}

namespace {

// Appends seq to dead[ix], checking what every encoding promises.
void take(const std::string& path, const std::vector<uint64_t>& docs, DeadSeqs& dead, uint32_t& last_ix,
          uint64_t ix, uint64_t seq) {
  if (ix >= docs.size() || seq >= docs[ix]) fail_corrupt(path, "tombstone names an unknown document");
  auto& d = dead[ix];
  if (ix < last_ix || (!d.empty() && d.back() >= seq)) fail_corrupt(path, "tombstones are out of order");
  last_ix = static_cast<uint32_t>(ix);
  d.push_back(seq);
}

}  // namespace

DeadSeqs decode_deletes(const std::string& path, const std::string& bytes,
                        const std::vector<uint64_t>& docs) {
  const FileHeader h = check_header(path, kMagicDeletes, bytes.data(), bytes.size());
  const std::string_view body(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
  if (h.aux != kDeletesFixed && h.aux != kDeletesDeltas) fail_corrupt(path, "tombstone file of an unknown encoding");
  if (h.aux == kDeletesFixed && (body.size() % 12 != 0 || body.size() / 12 != h.count))
    fail_corrupt(path, "tombstone file has a bad length");
  // Every entry takes a byte at least: no count a damaged header claims
  // is reserved for.
  if (h.count > body.size()) fail_corrupt(path, "tombstone file has a bad length");
  check_body(path, h, body);
  DeadSeqs dead(docs.size());
  if (h.aux == kDeletesFixed) {
    uint32_t last_ix = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(body.data());
    for (uint64_t e = 0; e < h.count; e++, p += 12) take(path, docs, dead, last_ix, get_u32(p), get_u64(p + 4));
    return dead;
  }
  // Indexers ascending, each once; seqs ascending below its documents.
  Cursor c(body.data(), body.size());
  uint64_t seen = 0, next_ix = 0;
  while (c.ok() && c.left() > 0) {
    const uint64_t ix = c.varint(), n = c.varint();
    if (!c.ok() || ix < next_ix || ix >= docs.size() || n == 0 || n > h.count - seen)
      fail_corrupt(path, "tombstone file has a bad indexer entry");
    next_ix = ix + 1;
    auto& d = dead[ix];
    d.resize(n);
    uint64_t seq = 0;
    for (uint64_t k = 0; k < n; k++) {
      const uint64_t delta = c.varint();
      if (!c.ok() || (k > 0 && delta == 0) || delta >= docs[ix] - seq)
        fail_corrupt(path, "tombstone names an unknown document or repeats one");
      seq += delta;
      d[k] = seq;
    }
    seen += n;
  }
  if (!c.ok() || seen != h.count) fail_corrupt(path, "tombstone file has a bad length");
  return dead;
}

}  // namespace scipis
