#include "pipeline/dir_records.h"

#include <algorithm>

#include "index/segment_format.h"
#include "pipeline/refresh.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/fileio.h"
#include "util/time_ns.h"

namespace scipis {

namespace {

constexpr char kMagicDirs[] = "SCIPISDR";

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

uint64_t crawl_rules_id(const std::string& root, const std::vector<std::string>& include,
                        const std::vector<std::string>& exclude, bool follow_symlinks) {
  std::string s = root + '\0' + (follow_symlinks ? "1" : "0");
  for (const auto& g : include) s.append("\0i", 2).append(g);
  for (const auto& g : exclude) s.append("\0e", 2).append(g);
  return (static_cast<uint64_t>(crc32c(s.data(), s.size())) << 32) | s.size();
}

bool DirRecords::load(const std::string& path, uint64_t rules_id) {
  std::string bytes;
  try {
    if (!read_file(path, bytes)) return false;
  } catch (const Error&) {
    return false;
  }
  return load_bytes(path, bytes, rules_id);
}

bool DirRecords::load_bytes(const std::string& path, const std::string& bytes, uint64_t rules_id) {
  dirs_.clear();
  children_.clear();
  try {
    const FileHeader h = check_header(path, kMagicDirs, bytes.data(), bytes.size());
    const std::string_view body(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
    check_body(path, h, body);
    Cursor c(body.data(), body.size());
    if (c.u64() != rules_id || !c.ok()) return false;
    std::string prev;
    for (uint64_t i = 0; i < h.count && c.ok(); i++) {
      const uint64_t shared = c.varint(), len = c.varint();
      if (!c.ok() || shared > prev.size() || len > c.left()) return dirs_.clear(), false;
      std::string p = prev.substr(0, shared);
      p += c.bytes(len);
      DirRecord r;
      r.ino = c.varint();
      r.mtime_ns = static_cast<int64_t>(c.u64());
      r.ctime_ns = static_cast<int64_t>(c.u64());
      prev = p;
      dirs_[std::move(p)] = r;
    }
    if (!c.ok() || c.left() != 0) return dirs_.clear(), false;
  } catch (const Error&) {
    // Damaged: the refresh lists every directory.
    dirs_.clear();
    return false;
  }
  for (const auto& [p, r] : dirs_) {
    const std::string parent = parent_of(p);
    if (!parent.empty() && parent != p && dirs_.contains(parent))
      children_[parent].push_back(p.substr(p.rfind('/') + 1));
  }
  for (auto& [p, names] : children_) std::sort(names.begin(), names.end());
  return true;
}

const DirRecord* DirRecords::unchanged(const std::string& path, const struct stat& st) const {
  auto it = dirs_.find(path);
  if (it == dirs_.end()) return nullptr;
  const DirRecord& r = it->second;
  const bool same = r.ino != 0 && r.ino == static_cast<uint64_t>(st.st_ino) &&
                    r.mtime_ns == timespec_ns(st.st_mtim) && r.ctime_ns == timespec_ns(st.st_ctim);
  return same ? &r : nullptr;
}

const std::vector<std::string>& DirRecords::children(const std::string& path) const {
  auto it = children_.find(path);
  return it == children_.end() ? none_ : it->second;
}

void DirRecorder::listed(const std::string& path, const struct stat& st, int64_t now_ns) {
  DirRecord r;
  r.mtime_ns = timespec_ns(st.st_mtim);
  r.ctime_ns = timespec_ns(st.st_ctim);
  // An entry added within the same tick of the clock may leave both as
  // they are: such a directory is listed again.
  if (r.mtime_ns < now_ns - kRacyNs && r.ctime_ns < now_ns - kRacyNs) r.ino = static_cast<uint64_t>(st.st_ino);
  std::lock_guard<std::mutex> lk(mu_);
  dirs_.emplace_back(path, r);
}

void DirRecorder::unlisted(const std::string& path) {
  std::lock_guard<std::mutex> lk(mu_);
  dirs_.emplace_back(path, DirRecord{});
}

void DirRecorder::kept(const std::string& path, const DirRecord& r) {
  std::lock_guard<std::mutex> lk(mu_);
  dirs_.emplace_back(path, r);
}

std::string DirRecorder::encode(uint64_t rules_id) {
  std::lock_guard<std::mutex> lk(mu_);
  std::sort(dirs_.begin(), dirs_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  dirs_.erase(std::unique(dirs_.begin(), dirs_.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
              dirs_.end());
  std::string body;
  put_u64(body, rules_id);
  const std::string* prev = nullptr;
  for (const auto& [p, r] : dirs_) {
    size_t shared = 0;
    if (prev)
      while (shared < prev->size() && shared < p.size() && (*prev)[shared] == p[shared]) shared++;
    put_varint(body, shared);
    put_varint(body, p.size() - shared);
    body.append(p, shared, std::string::npos);
    put_varint(body, r.ino);
    put_u64(body, static_cast<uint64_t>(r.mtime_ns));
    put_u64(body, static_cast<uint64_t>(r.ctime_ns));
    prev = &p;
  }
  return sealed_file(kMagicDirs, dirs_.size(), body);
}

}  // namespace scipis
