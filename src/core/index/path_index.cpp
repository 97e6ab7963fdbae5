#include "index/path_index.h"

#include <algorithm>

#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"

namespace scipis {

void PathIndex::add(const DocInfo& d, std::string_view path) {
  docs_.push_back(d);
  lens_.push_back(static_cast<uint32_t>(path.size()));
  paths_.append(path);
}

void PathIndex::serialise(int split_factor, std::string& data,
                          std::vector<std::string>& metas) const {
  // Records and paths go straight after room for the header, which is
  // written last, once the body's checksum is known.
  data.assign(kHeaderSize, '\0');
  data.reserve(kHeaderSize + docs_.size() * kFileRecordSize + paths_.size());
  for (size_t i = 0; i < docs_.size(); i++) {
    put_u64(data, docs_[i].seq);
    put_u64(data, docs_[i].size);
    put_u64(data, static_cast<uint64_t>(docs_[i].mtime_ns));
    put_u64(data, docs_[i].tokens);
    put_u32(data, lens_[i]);
  }
  data.append(paths_.data(), paths_.size());
  FileHeader h;
  h.count = docs_.size();
  h.body_crc = crc32c(data.data() + kHeaderSize, data.size() - kHeaderSize);
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
