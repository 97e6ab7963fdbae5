#include "index/gen_paths.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "index/segment_format.h"
#include "index/segment_pack.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/fileio.h"
#include "util/mapped_file.h"

namespace scipis {

namespace {

constexpr size_t kFlushAt = 4 << 20;
constexpr uint64_t kBlock = kTrigramBlock;

}  // namespace

uint64_t write_gen_paths(const std::string& dir, const std::string& gen, const Manifest& m) {
  std::vector<CoveredSegment> segs;
  std::vector<PartOpener> openers;
  for (const SegmentRef& s : m.segments) {
    if (s.docs == 0) continue;
    segs.push_back(CoveredSegment{m.home_of(s), s.indexer, file_seg_of(s), s.docs, s.file_data_bytes});
    openers.emplace_back(m.home_dir(dir, s), s, m.split_factor);
  }
  if (segs.size() < 2) return 0;
  const size_t n = segs.size();
  std::vector<std::shared_ptr<const MappedFile>> maps;
  std::vector<std::unique_ptr<PathTrigrams>> tris;
  for (size_t i = 0; i < n; i++) {
    SegmentPart part = openers[i].open(Part::kPaths, 0);
    maps.push_back(std::move(part.map));
    tris.push_back(std::make_unique<PathTrigrams>(part.name, maps.back()->bytes()));
    if (tris.back()->records() != segs[i].docs) fail_corrupt(part.name, "record count differs from the manifest");
  }
  // The trigrams of any segment, ascending: the smallest under the
  // segments' cursors, which then move past it. Each cursor's trigram is
  // kept in cur (kDone past its last), so that finding the smallest reads
  // one small array.
  constexpr uint64_t kDone = UINT64_MAX;
  std::vector<size_t> at(n, 0);
  std::vector<uint64_t> cur(n);
  auto load = [&](size_t i) { cur[i] = at[i] < tris[i]->trigrams() ? tris[i]->trigram(at[i]) : kDone; };
  auto rewind = [&] {
    for (size_t i = 0; i < n; i++) {
      at[i] = 0;
      load(i);
    }
  };
  auto next = [&](uint32_t& t) {
    const uint64_t least = *std::min_element(cur.begin(), cur.end());
    t = static_cast<uint32_t>(least);
    return least != kDone;
  };
  auto holds = [&](size_t i, uint32_t t) { return cur[i] == t; };
  auto advance = [&](size_t i) {
    at[i]++;
    load(i);
  };
  rewind();
  uint64_t distinct = 0;
  for (uint32_t t = 0; next(t); distinct++)
    for (size_t i = 0; i < n; i++)
      if (holds(i, t)) advance(i);
  rewind();

  const std::string path = gen + "/" + kGenPathsFile;
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) fail_io(errno, "create file", path);
  const uint64_t parts_at = kHeaderSize + kGenPathsEntry * n + kTrigramEntry * distinct;
  std::string body, buf, directory;
  body.reserve(kGenPathsEntry * n + kTrigramEntry * distinct);
  for (const CoveredSegment& c : segs) {
    put_u64(body, c.home);
    put_u32(body, c.indexer);
    put_u32(body, c.file_seg);
    put_u64(body, c.docs);
    put_u64(body, c.file_bytes);
  }
  std::vector<TrigramList> chunks;
  uint64_t written = 0;
  for (uint32_t t = 0; next(t);) {
    directory.clear();
    chunks.clear();
    uint64_t end = 0;
    for (size_t i = 0; i < n; i++) {
      if (!holds(i, t)) continue;
      const TrigramList l = tris[i]->list(at[i]);
      advance(i);
      if (crc32c(l.data, l.len) != get_u32(l.data + l.len))
        fail_corrupt(maps[i]->path(), "trigram list checksum mismatch");
      end += l.len + 4;
      put_u32(directory, static_cast<uint32_t>(i));
      put_u32(directory, l.count);
      put_u64(directory, end);
      chunks.push_back(l);
    }
    const size_t before = buf.size();
    buf += directory;
    put_u32(buf, crc32c(directory.data(), directory.size()));
    for (const TrigramList& l : chunks) buf.append(reinterpret_cast<const char*>(l.data), l.len + 4);
    written += buf.size() - before;
    put_u32(body, t);
    put_u32(body, static_cast<uint32_t>(chunks.size()));
    put_u64(body, written);
    if (buf.size() >= kFlushAt) {
      pwrite_all(fd.get(), buf, parts_at + written - buf.size(), path);
      buf.clear();
    }
  }
  pwrite_all(fd.get(), buf, parts_at + written - buf.size(), path);
  FileHeader h;
  h.aux = static_cast<uint32_t>(distinct);
  h.count = n;
  h.body_crc = crc32c(body.data(), body.size());
  std::string head;
  put_header(head, kMagicGenPaths, h);
  head += body;
  pwrite_all(fd.get(), head, 0, path);
  if (sync_fd(fd.get()) != 0) fail_io(errno, "fsync file", path);
  return parts_at + written;
}

GenPaths::GenPaths(std::string path, std::string_view file) : path_(std::move(path)) {
  const FileHeader h = check_header(path_, kMagicGenPaths, file.data(), file.size());
  const uint64_t room = file.size() - kHeaderSize;
  if (h.count > room / kGenPathsEntry || h.aux > room / kTrigramEntry ||
      h.count * kGenPathsEntry + uint64_t{h.aux} * kTrigramEntry > room)
    fail_corrupt(path_, "segment list and trigram table exceed the file");
  const size_t entries = static_cast<size_t>(h.count) * kGenPathsEntry;
  const size_t table = size_t{h.aux} * kTrigramEntry;
  check_body(path_, h, file.substr(kHeaderSize, entries + table));
  const auto* p = reinterpret_cast<const unsigned char*>(file.data()) + kHeaderSize;
  covered_.reserve(static_cast<size_t>(h.count));
  for (uint64_t i = 0; i < h.count; i++, p += kGenPathsEntry) {
    CoveredSegment c{get_u64(p), get_u32(p + 8), get_u32(p + 12), get_u64(p + 16), get_u64(p + 24)};
    if (c.docs == 0 || c.docs >= UINT32_MAX) fail_corrupt(path_, "bad segment record count");
    covered_.push_back(c);
  }
  table_ = p;
  parts_ = table_ + table;
  trigrams_ = h.aux;
  room_ = room - entries - table;
  // The last part ends the file: a file cut short or grown fails here.
  if ((trigrams_ ? get_u64(table_ + kTrigramEntry * (trigrams_ - 1) + 8) : 0) != room_)
    fail_corrupt(path_, "trigram parts cut short or followed by trailing bytes");
}

std::vector<GenPaths::Chunk> GenPaths::part(uint32_t trigram) const {
  const size_t lo = trigram_lower_bound(table_, trigrams_, trigram);
  std::vector<Chunk> out;
  const unsigned char* e = table_ + kTrigramEntry * lo;
  if (lo == trigrams_ || get_u32(e) != trigram) return out;
  const uint64_t start = lo ? get_u64(e - kTrigramEntry + 8) : 0;
  const uint64_t end = get_u64(e + 8);
  const uint32_t c = get_u32(e + 4);
  if (lo && get_u32(e - kTrigramEntry) >= trigram) fail_corrupt(path_, "trigram table out of order");
  if (c == 0 || c > covered_.size()) fail_corrupt(path_, "bad trigram segment count");
  const uint64_t dir_len = uint64_t{c} * kGenPathsChunk;
  if (end > room_ || end < start || end - start < dir_len + 4) fail_corrupt(path_, "bad trigram part end");
  const unsigned char* d = parts_ + start;
  if (crc32c(d, dir_len) != get_u32(d + dir_len)) fail_corrupt(path_, "trigram directory checksum mismatch");
  const unsigned char* chunks = d + dir_len + 4;
  const uint64_t room = end - start - dir_len - 4;
  uint64_t prev = 0;
  for (uint32_t j = 0; j < c; j++, d += kGenPathsChunk) {
    const uint32_t entry = get_u32(d), count = get_u32(d + 4);
    const uint64_t cend = get_u64(d + 8);
    if (entry >= covered_.size() || (j && entry <= out.back().entry))
      fail_corrupt(path_, "trigram directory names a bad segment");
    if (count == 0 || count > covered_[entry].docs) fail_corrupt(path_, "bad trigram record count");
    if (cend > room || cend < prev || cend - prev < 4 + (count + kBlock - 1) / kBlock)
      fail_corrupt(path_, "bad trigram list end");
    out.push_back(Chunk{entry, TrigramList{chunks + prev, static_cast<size_t>(cend - prev - 4), count}});
    prev = cend;
  }
  if (prev != room) fail_corrupt(path_, "trailing bytes in a trigram part");
  return out;
}

std::optional<std::vector<std::vector<uint32_t>>> GenPaths::candidates(const PathPattern& pattern) const {
  const std::vector<uint32_t> tris = pattern_trigrams(pattern);
  if (tris.empty()) return std::nullopt;
  std::vector<std::vector<uint32_t>> out(covered_.size());
  std::vector<std::vector<Chunk>> parts;
  for (const uint32_t t : tris) {
    parts.push_back(part(t));
    if (parts.back().empty()) return out;
  }
  // The segments every trigram's part names, walked in step.
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  std::vector<size_t> at(parts.size(), 0);
  std::vector<TrigramList> lists;
  for (const Chunk& first : parts[0]) {
    lists.assign(1, first.list);
    for (size_t k = 1; k < parts.size(); k++) {
      while (at[k] < parts[k].size() && parts[k][at[k]].entry < first.entry) at[k]++;
      if (at[k] == parts[k].size() || parts[k][at[k]].entry != first.entry) break;
      lists.push_back(parts[k][at[k]].list);
    }
    if (lists.size() == parts.size())
      out[first.entry] = intersect_trigram_lists(path_, lists, static_cast<uint32_t>(covered_[first.entry].docs));
  }
  return out;
}

}  // namespace scipis
