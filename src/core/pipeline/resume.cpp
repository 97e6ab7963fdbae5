#include "pipeline/resume.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/hash/hash.h"
#include "index/distinct_terms.h"
#include "index/path_index.h"
#include "index/segment_format.h"
#include "index/segment_reader.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/fileio.h"
#include "util/time_ns.h"

namespace scipis {

namespace {
constexpr uint32_t kMarkMagic = 0x4b52414d;  // "MARK"
constexpr uint32_t kMarkVersion = 1;
constexpr size_t kMarkFixed = 4 + 4 + 4 + 4 + 8 * 5 + 1 + 8 * 5 + 4;  // before the sketch
}  // namespace

std::string SegmentMark::encode() const {
  std::string out;
  put_u32(out, kMarkMagic);
  put_u32(out, kMarkVersion);
  put_u32(out, ref.indexer);
  put_u32(out, ref.seg);
  put_u64(out, ref.first_seq);
  put_u64(out, ref.docs);
  put_u64(out, ref.tf_data_bytes);
  put_u64(out, ref.file_data_bytes);
  put_u64(out, next_seq);
  out.push_back(partial ? 1 : 0);
  put_u64(out, files);
  put_u64(out, bytes);
  put_u64(out, tokens);
  put_u64(out, docs_with_tokens);
  put_u64(out, sketch.size());
  put_u32(out, 0);  // reserved
  out.append(reinterpret_cast<const char*>(sketch.data()), sketch.size());
  put_u32(out, crc32c(out.data(), out.size()));
  return out;
}

std::optional<SegmentMark> SegmentMark::decode(std::string_view bytes) {
  if (bytes.size() < kMarkFixed + 4) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (get_u32(p + bytes.size() - 4) != crc32c(bytes.data(), bytes.size() - 4)) return std::nullopt;
  if (get_u32(p) != kMarkMagic || get_u32(p + 4) != kMarkVersion) return std::nullopt;
  SegmentMark m;
  m.ref.indexer = get_u32(p + 8);
  m.ref.seg = get_u32(p + 12);
  m.ref.first_seq = get_u64(p + 16);
  m.ref.docs = get_u64(p + 24);
  m.ref.tf_data_bytes = get_u64(p + 32);
  m.ref.file_data_bytes = get_u64(p + 40);
  m.ref.meta_bytes = kUnknownBytes;  // stat at the commit
  m.next_seq = get_u64(p + 48);
  m.partial = p[56] != 0;
  m.files = get_u64(p + 57);
  m.bytes = get_u64(p + 65);
  m.tokens = get_u64(p + 73);
  m.docs_with_tokens = get_u64(p + 81);
  const uint64_t n = get_u64(p + 89);
  if (n != bytes.size() - kMarkFixed - 4) return std::nullopt;
  m.sketch.assign(p + kMarkFixed, p + kMarkFixed + n);
  return m;
}

PathKey path_key(std::string_view path) {
  return PathKey{absl::HashOf(uint64_t{0x9e3779b97f4a7c15}, path),
                 absl::HashOf(path, uint64_t{0xc2b2ae3d27d4eb4f})};
}

namespace {

// The segment number of a file named seg_<n>.<anything>, or -1.
long seg_number(const char* name) {
  if (std::strncmp(name, "seg_", 4) != 0) return -1;
  char* end;
  long n = std::strtol(name + 4, &end, 10);
  return end != name + 4 && *end == '.' && n >= 0 ? n : -1;
}

// Removes the files of segments from..∞ of one directory.
void remove_from(const std::string& dir, uint32_t from) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> doomed;
  while (struct dirent* e = ::readdir(d)) {
    long n = seg_number(e->d_name);
    if (n >= 0 && static_cast<uint64_t>(n) >= from) doomed.push_back(dir + "/" + e->d_name);
  }
  ::closedir(d);
  for (const auto& f : doomed) ::unlink(f.c_str());
}

// The segment's files are on disk as recorded; keys gets their paths' keys.
bool files_unchanged(const std::string& data_path, std::vector<PathKey>& keys) {
  std::string bytes;
  if (!read_file(data_path, bytes)) return false;
  try {
    FileBlocks fb(data_path, bytes);
    std::vector<DocInfo> docs(kFileBlock);
    std::vector<size_t> ends(kFileBlock);
    for (size_t b = 0; b < fb.blocks(); b++) {
      std::string paths;
      fb.decode(b, docs.data(), paths, ends.data());
      size_t start = 0;
      for (size_t i = 0; i < fb.records_in(b); i++) {
        std::string path = paths.substr(start, ends[i] - start);
        start = ends[i];
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0 && ::stat(path.c_str(), &st) != 0) return false;
        if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0) return false;
        const DocInfo& d = docs[i];
        if (static_cast<uint64_t>(st.st_size) != d.size ||
            timespec_ns(st.st_mtim) != d.mtime_ns || timespec_ns(st.st_ctim) != d.ctime_ns ||
            static_cast<uint64_t>(st.st_ino) != d.ino)
          return false;
        keys.push_back(path_key(path));
      }
    }
    return true;
  } catch (const Error&) {
    return false;  // a damaged segment is not kept
  }
}

}  // namespace

ResumeState plan_resume(const std::string& gen_dir, uint32_t indexers) {
  ResumeState st;
  st.indexers.resize(indexers);
  for (uint32_t i = 0; i < indexers; i++) {
    const std::string fdir = gen_dir + "/" + file_dir(i);
    const std::string tdir = gen_dir + "/" + tf_dir(i);
    std::vector<SegmentMark> chain;
    uint64_t records = 0;  // in the chain's segments
    for (uint32_t s = 0;; s++) {
      std::string bytes;
      if (!read_file(fdir + "/" + seg_mark(s), bytes)) break;
      auto m = SegmentMark::decode(bytes);
      if (!m || m->ref.indexer != i || m->ref.seg != s) break;
      if (m->sketch.size() != DistinctTerms::kRegisters) break;
      struct stat sb;
      if (::stat((tdir + "/" + seg_data(s)).c_str(), &sb) != 0 ||
          static_cast<uint64_t>(sb.st_size) != m->ref.tf_data_bytes ||
          ::stat((fdir + "/" + seg_data(s)).c_str(), &sb) != 0 ||
          static_cast<uint64_t>(sb.st_size) != m->ref.file_data_bytes)
        break;
      // Documents are numbered by their records: every one the indexer
      // began has its record in the chain, but the one a partial flush
      // came inside. (A stopped indexer once marked what it flushed after
      // a file left unfinished: a gap, and an index read as damaged.)
      records += m->ref.docs;
      if (m->next_seq != records + (m->partial ? 1 : 0)) break;
      chain.push_back(std::move(*m));
    }
    // A chain may not end inside a file: its rest was never written.
    while (!chain.empty() && chain.back().partial) chain.pop_back();
    // Every kept file must be as its record says; the first segment with
    // a changed one ends the chain (and a partial end before it goes too).
    std::vector<std::vector<PathKey>> keys(chain.size());
    size_t good = 0;
    for (; good < chain.size(); good++)
      if (!files_unchanged(fdir + "/" + seg_data(static_cast<uint32_t>(good)), keys[good])) break;
    chain.resize(good);
    while (!chain.empty() && chain.back().partial) chain.pop_back();
    for (size_t s = 0; s < chain.size(); s++) st.done.insert(keys[s].begin(), keys[s].end());
    remove_from(fdir, static_cast<uint32_t>(chain.size()));
    remove_from(tdir, static_cast<uint32_t>(chain.size()));
    auto& ix = st.indexers[i];
    ix.segs = static_cast<uint32_t>(chain.size());
    if (!chain.empty()) {
      const SegmentMark& last = chain.back();
      ix.next_seq = last.next_seq;
      ix.files = last.files;
      ix.bytes = last.bytes;
      ix.tokens = last.tokens;
      ix.docs_with_tokens = last.docs_with_tokens;
      ix.sketch = std::make_shared<const std::vector<uint8_t>>(last.sketch);
      for (const auto& m : chain) st.kept.push_back(m.ref);
    }
    st.files += ix.files;
    st.bytes += ix.bytes;
    st.tokens += ix.tokens;
    st.docs_with_tokens += ix.docs_with_tokens;
  }
  return st;
}

}  // namespace scipis
