#include "query/collection.h"

#include <sys/stat.h>

#include "index/segment_format.h"
#include "util/error.h"

namespace scipis {

namespace {

Manifest read_manifest(const std::string& dir, struct stat& st) {
  std::string path = manifest_path(dir);
  std::string bytes;
  // stat after reading: a concurrent replace then only looks stale.
  if (!read_file(path, bytes))
    fail(SCIPIS_E_NOT_INDEXED, "collection has not been indexed yet (no manifest in \"%s\")",
         dir.c_str());
  if (::stat(path.c_str(), &st) != 0) fail_io(errno, "stat", path);
  return Manifest::decode(path, bytes);
}

}  // namespace

Collection::Collection(std::string dir) : dir_(std::move(dir)) {
  struct stat st;
  m_ = read_manifest(dir_, st);
  ino_ = st.st_ino;
  mtime_ = st.st_mtim;
  tokenizer_ = std::make_unique<Tokenizer>(m_.delimiter);
  gen_dir_ = m_.gen_dir(dir_);
  segs_.resize(m_.segments.size());
  ix_.resize(m_.indexers);
  for (size_t i = 0; i < segs_.size(); i++) {
    SegmentState& s = segs_[i];
    s.ref = m_.segments[i];
    s.tf_dir = gen_dir_ + "/" + tf_dir(s.ref.indexer) + "/";
    s.file_dir = gen_dir_ + "/" + file_dir(s.ref.indexer) + "/";
    s.tf_meta.resize(m_.split_factor);
    s.file_meta.resize(m_.split_factor);
  }
  for (auto& s : segs_) ix_[s.ref.indexer].segs.push_back(&s);
}

bool Collection::is_current() const {
  struct stat st;
  if (::stat(manifest_path(dir_).c_str(), &st) != 0) return false;
  return st.st_ino == ino_ && st.st_mtim.tv_sec == mtime_.tv_sec &&
         st.st_mtim.tv_nsec == mtime_.tv_nsec;
}

const TfMeta& Collection::tf_meta(SegmentState& s, uint32_t split) {
  auto& slot = s.tf_meta[split];
  if (!slot) {
    std::string p = s.tf_dir + seg_meta(s.ref.seg, split);
    std::string bytes;
    if (!read_file(p, bytes)) fail_corrupt(p, "file is missing");
    // Any split of the segment already open may share its code tables.
    const TfMeta* like = nullptr;
    for (const auto& other : s.tf_meta) {
      if (other) {
        like = other.get();
        break;
      }
    }
    slot = std::make_unique<TfMeta>(p, std::move(bytes), like);
  }
  return *slot;
}

void Collection::read_block(SegmentState& s, const TermRef& r, std::string& out) {
  std::string p = s.tf_dir + seg_data(s.ref.seg);
  const uint64_t at = r.read_offset(), len = r.read_len();
  if (at < kHeaderSize || len > s.ref.tf_data_bytes || at > s.ref.tf_data_bytes - len)
    fail_corrupt(p, "dictionary points outside the data file");
  Fd transient;
  Fd* fd = &s.tf_fd;
  if (!s.tf_fd) {
    Fd opened = open_read(p);
    struct stat st;
    if (::fstat(opened.get(), &st) != 0) fail_io(errno, "stat", p);
    if (static_cast<uint64_t>(st.st_size) != s.ref.tf_data_bytes)
      fail_corrupt(p, "file size differs from the manifest (truncated or overwritten)");
    std::string head(kHeaderSize, '\0');
    pread_exact(opened.get(), head.data(), kHeaderSize, 0, p);
    check_header(p, kMagicTfData, head.data(), head.size());
    if (open_fds_ < kMaxOpenDataFiles) {
      s.tf_fd = std::move(opened);
      open_fds_++;
    } else {
      transient = std::move(opened);
      fd = &transient;
    }
  }
  out.resize(len);
  pread_exact(fd->get(), out.data(), len, at, p);
}

const FileData& Collection::files(SegmentState& s) {
  if (!s.files) {
    std::string p = s.file_dir + seg_data(s.ref.seg);
    auto fd = std::make_unique<FileData>();
    if (!read_file(p, fd->bytes)) fail_corrupt(p, "file is missing");
    if (fd->bytes.size() != s.ref.file_data_bytes)
      fail_corrupt(p, "file size differs from the manifest (truncated or overwritten)");
    FileData::load(p, *fd);
    if (fd->docs.size() != s.ref.docs)
      fail_corrupt(p, "document count differs from the manifest");
    s.files = std::move(fd);
  }
  return *s.files;
}

const FileMeta& Collection::file_meta(SegmentState& s, uint32_t split) {
  auto& slot = s.file_meta[split];
  if (!slot) {
    std::string p = s.file_dir + seg_meta(s.ref.seg, split);
    std::string bytes;
    if (!read_file(p, bytes)) fail_corrupt(p, "file is missing");
    slot = std::make_unique<FileMeta>(p, bytes, s.ref.docs);
  }
  return *slot;
}

IndexerState& Collection::indexer(uint32_t i) {
  IndexerState& st = ix_[i];
  if (st.loaded) return st;
  std::vector<const DocInfo*> docs;
  std::vector<std::string_view> paths;
  std::vector<double> lens;
  for (SegmentState* s : st.segs) {
    const FileData& fd = files(*s);
    for (size_t k = 0; k < fd.docs.size(); k++) {
      if (fd.docs[k].seq != docs.size())
        fail_corrupt(s->file_dir + seg_data(s->ref.seg),
                     "document numbers are not consecutive");
      docs.push_back(&fd.docs[k]);
      paths.push_back(fd.paths[k]);
      lens.push_back(static_cast<double>(fd.docs[k].tokens));
    }
  }
  st.docs = std::move(docs);
  st.paths = std::move(paths);
  st.lens = std::move(lens);
  st.loaded = true;
  return st;
}

}  // namespace scipis
