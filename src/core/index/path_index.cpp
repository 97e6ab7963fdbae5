#include "index/path_index.h"

#include <algorithm>
#include <cstring>

#include "index/file_block_stats.h"
#include "index/path_trigrams.h"
#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {

void PathIndex::add(const DocInfo& d, std::string_view path) {
  docs_.push_back(d);
  lens_.push_back(static_cast<uint32_t>(path.size()));
  paths_.append(path);
}

void PathIndex::serialise(int split_factor, std::string& data, std::vector<std::string>& metas,
                          std::string* trigrams) const {
  if (trigrams)
    *trigrams = build_path_trigrams(std::string_view(paths_.data(), paths_.size()),
                                    std::span<const uint32_t>(lens_.data(), lens_.size()));
  // The offset table and the blocks go straight after room for the
  // header, which is written last, once the table's checksum is known.
  // The string grows as the blocks are encoded: their size is not known
  // ahead.
  const size_t n = docs_.size();
  const size_t blocks = (n + kFileBlock - 1) / kFileBlock;
  // The prefix every path shares: fences keep the bytes after it.
  size_t lcp = n ? lens_[0] : 0;
  for (size_t i = 1, off = lcp; i < n && lcp; off += lens_[i++]) {
    size_t k = 0;
    while (k < lcp && k < lens_[i] && paths_[k] == paths_[off + k]) k++;
    lcp = k;
  }
  const size_t lens_at = kHeaderSize + 4 * blocks + 12;
  const size_t len_chunks = (n + kLenChunk - 1) / kLenChunk;
  const size_t stats_at = lens_at + 4 * n + 4 * len_chunks;
  data.assign(stats_at + lcp + kBlockStatBytes * blocks, '\0');
  std::memcpy(data.data() + stats_at, paths_.data(), lcp);
  const size_t first = data.size();
  char rec[kMaxFileRecord];
  size_t path_off = 0;
  for (size_t b = 0; b < blocks; b++) {
    const size_t start = data.size();
    if (start - first >= kMaxFileBlocksBytes)
      fail(SCIPIS_E_INTERNAL, "file data of %zu records exceeds 4 GiB", n);
    write_u32(data.data() + kHeaderSize + 4 * b, static_cast<uint32_t>(start - first));
    std::string_view prev, lo, hi;
    FileBlockStats st;
    const size_t end = std::min(n, (b + 1) * kFileBlock);
    // The restarts' offsets, filled as they are reached.
    data.append(4 * ((end - b * kFileBlock - 1) / kRestart), '\0');
    for (size_t i = b * kFileBlock; i < end; i++) {
      const DocInfo& d = docs_[i];
      const std::string_view path(paths_.data() + path_off, lens_[i]);
      path_off += lens_[i];
      const size_t j = i - b * kFileBlock;
      const bool head = j % kRestart == 0;
      if (head && j) {
        write_u32(data.data() + start + 4 * (j / kRestart - 1), static_cast<uint32_t>(data.size() - start));
        prev = {};
      }
      st.add(d);
      if (j == 0 || path < lo) lo = path;
      if (j == 0 || path > hi) hi = path;
      write_u32(data.data() + lens_at + 4 * i,
                static_cast<uint32_t>(std::min<uint64_t>(d.tokens, kLenInRecord)));
      const DocInfo* p = head ? nullptr : &docs_[i - 1];
      char* w = rec;
      w = write_varint(w, head ? d.seq : d.seq - p->seq);
      w = write_varint(w, d.size);
      w = write_varint(w, zigzag(head ? d.mtime_ns
                                      : static_cast<int64_t>(static_cast<uint64_t>(d.mtime_ns) -
                                                             static_cast<uint64_t>(p->mtime_ns))));
      w = write_varint(w, d.tokens);
      w = write_varint(w, zigzag(static_cast<int64_t>(static_cast<uint64_t>(d.ctime_ns) -
                                                      static_cast<uint64_t>(d.mtime_ns))));
      auto delta = [head](uint64_t v, uint64_t prev) {
        return head ? v : zigzag(static_cast<int64_t>(v - prev));
      };
      auto delta32 = [head](uint32_t v, uint32_t prev) {
        return head ? v : zigzag(static_cast<int64_t>(v) - static_cast<int64_t>(prev));
      };
      w = write_varint(w, delta(d.ino, head ? 0 : p->ino));
      w = write_varint(w, delta32(d.uid, head ? 0 : p->uid));
      w = write_varint(w, delta32(d.gid, head ? 0 : p->gid));
      w = write_varint(w, delta32(d.mode, head ? 0 : p->mode));
      w = write_varint(w, d.tail);
      size_t shared = 0;
      const size_t most = std::min(prev.size(), path.size());
      while (shared < most && prev[shared] == path[shared]) shared++;
      w = write_varint(w, shared);
      w = write_varint(w, path.size() - shared);
      data.append(rec, static_cast<size_t>(w - rec));
      data.append(path.data() + shared, path.size() - shared);
      prev = path;
    }
    put_u32(data, crc32c(data.data() + start, data.size() - start));
    st.write(data.data() + stats_at + lcp + kBlockStatBytes * b, lo.substr(lcp), hi.substr(lcp));
  }
  for (size_t c = 0; c < len_chunks; c++)
    write_u32(data.data() + lens_at + 4 * n + 4 * c,
              crc32c(data.data() + lens_at + 4 * kLenChunk * c, 4 * std::min(kLenChunk, n - c * kLenChunk)));
  write_u32(data.data() + lens_at - 12, crc32c(data.data() + lens_at + 4 * n, 4 * len_chunks));
  write_u32(data.data() + lens_at - 8, crc32c(data.data() + stats_at, lcp + kBlockStatBytes * blocks));
  write_u32(data.data() + lens_at - 4, static_cast<uint32_t>(lcp));
  FileHeader h;
  h.count = n;
  h.body_crc = crc32c(data.data() + kHeaderSize, 4 * blocks + 12);
  std::string header;
  put_header(header, kMagicFileData, h);
  data.replace(0, kHeaderSize, header);

  using Entry = std::pair<uint64_t, uint32_t>;
  std::vector<std::vector<Entry, mem::Accounted<Entry>>> split(split_factor);
  size_t off = 0;
  for (size_t i = 0; i < docs_.size(); i++) {
    uint64_t hash = fnv1a(std::string_view(paths_).substr(off, lens_[i]));
    split[hash % split_factor].emplace_back(hash, static_cast<uint32_t>(i));
    off += lens_[i];
  }
  metas.assign(split_factor, std::string());
  for (int s = 0; s < split_factor; s++) {
    auto& v = split[s];
    std::sort(v.begin(), v.end());
    std::string mbody;
    for (const auto& [hash, rec] : v) {
      put_u64(mbody, hash);
      put_u32(mbody, rec);
    }
    FileHeader mh;
    mh.aux = static_cast<uint32_t>(s);
    mh.count = v.size();
    mh.body_crc = crc32c(mbody.data(), mbody.size());
    put_header(metas[s], kMagicFileMeta, mh);
    metas[s] += mbody;
  }
}

void PathIndex::clear() {
  // Capacity kept: the next segment fills about as much again, and small
  // files would otherwise regrow (and copy) the arrays at every flush.
  docs_.clear();
  lens_.clear();
  paths_.clear();
}

}  // namespace scipis
