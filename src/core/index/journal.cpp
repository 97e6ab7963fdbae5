#include "index/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "util/boot_id.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/fileio.h"

namespace scipis {

namespace {

std::atomic<bool> journal_on{true};
std::atomic<int64_t> defer_ns{kJournalDeferNs};
constexpr uint32_t kJournalVersion = 1;
// Table kinds: the manifest, a pack, and a list by its number below.
constexpr uint32_t kTableManifest = 1, kTablePack = 2, kTableList = 16;
constexpr const char* kListNames[] = {"deleted", "appended", "racy", "TERMS", "DIRS"};
// In the header's lists: the record was written without a sync.
constexpr uint32_t kListsUnsynced = 1u << 31;

// Where a record's part table starts.
uint64_t table_at(bool unsynced) { return kJournalHead + (unsynced ? kJournalUnsyncedBytes : 0); }

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint32_t list_number(const std::string& name) {
  for (uint32_t i = 0; i < std::size(kListNames); i++)
    if (name == kListNames[i]) return i;
  fail(SCIPIS_E_INVALID, "\"%s\" is not a list a journal holds", name.c_str());
}

std::shared_ptr<const std::string> read_manifest_bytes(const std::string& dir, struct stat& st) {
  auto bytes = std::make_shared<std::string>();
  if (!read_file(manifest_path(dir), *bytes, &st))
    fail(SCIPIS_E_NOT_INDEXED, "collection has not been indexed yet (no manifest in \"%s\")",
         dir.c_str());
  return bytes;
}

// The states remember_current kept, newest last.
constexpr size_t kKeptStates = 8;
std::mutex kept_mu;
std::vector<CurrentState> kept;

// A journal is written ahead of its records with zeros (synced with the
// file's size), so that a record overwrites blocks already there and its
// fdatasync commits no metadata (an extending write's sync commits the
// size and blocks too). It grows by doubling, from this, to kJournalMaxBytes.
constexpr uint64_t kJournalFirstBytes = 256u << 10;

uint64_t journal_grown_size(uint64_t end) {
  const uint64_t want = std::max(end + kJournalHead, std::min(kJournalMaxBytes, std::max(2 * end, kJournalFirstBytes)));
  return align_up(want, kJournalAlign);
}

// Writes data at off, then zeros up to off + data.size() + zeros.
void pwrite_then_zeros(int fd, std::string_view data, uint64_t off, uint64_t zeros, const std::string& path) {
  static const std::vector<char> zero_block(64u << 10, 0);
  uint64_t done = 0;
  const uint64_t total = data.size() + zeros;
  while (done < total) {
    iovec iov[64];
    int n = 0;
    uint64_t at = done;
    if (at < data.size()) {
      iov[n++] = {const_cast<char*>(data.data() + at), data.size() - at};
      at = data.size();
    }
    while (n < 64 && at < total) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(zero_block.size(), total - at));
      iov[n++] = {const_cast<char*>(zero_block.data()), len};
      at += len;
    }
    const ssize_t w = ::pwritev(fd, iov, n, static_cast<off_t>(off + done));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail_io(errno, "write file", path);
    }
    done += static_cast<uint64_t>(w);
  }
}

// pread, retried when interrupted: the bytes read, or -1.
ssize_t pread_some(int fd, void* buf, size_t n, uint64_t off) {
  ssize_t got;
  do got = ::pread(fd, buf, n, static_cast<off_t>(off));
  while (got < 0 && errno == EINTR);
  return got;
}

// Whether bytes hold the header of record `number` of `generation`.
bool is_record_head(const unsigned char* h, uint64_t generation, uint64_t number) {
  return std::memcmp(h, kMagicJournal, 8) == 0 && crc32c(h, 60) == get_u32(h + 60) &&
         get_u64(h + 16) == generation && get_u64(h + 24) == number;
}

}  // namespace

void set_journal_enabled(bool on) { journal_on.store(on); }
int64_t journal_defer_ns() { return defer_ns.load(std::memory_order_relaxed); }
void set_journal_defer_ns(int64_t ns) { defer_ns.store(ns, std::memory_order_relaxed); }
bool journal_enabled() { return journal_on.load(); }

bool CurrentState::read_list(const char* name, std::string& out) const {
  auto it = lists.find(name);
  if (it == lists.end()) return read_file(gen_dir + "/" + name, out);
  if (!it->second) return false;
  out = *it->second;
  return true;
}

void CurrentState::carry_list(const char* name, const std::string& to_gen) const {
  auto it = lists.find(name);
  if (it == lists.end()) {
    if (::access((gen_dir + "/" + name).c_str(), F_OK) == 0)
      link_or_copy(gen_dir + "/" + name, to_gen + "/" + name);
  } else if (it->second) {
    write_file_durable(to_gen + "/" + name, *it->second);
  }
}

namespace {

struct RecordHead {
  uint64_t pos, number, len, meta;
  uint32_t parts, lists, meta_crc, body_crc;
  bool unsynced = false;
  BootId boot{};
  int64_t written_ns = 0;
};

// A record's metadata read and checked: its lists onto st, its manifest's
// bytes into manifest (when it has one).
void apply_record(CurrentState& st, const std::string& path, const RecordHead& r,
                  const std::function<void(uint64_t, size_t, char*)>& read, std::string& manifest) {
  const std::string where = path + " (record " + std::to_string(r.number) + ")";
  std::string meta(static_cast<size_t>(r.meta), '\0');
  read(r.pos, meta.size(), meta.data());
  const auto* h = reinterpret_cast<const unsigned char*>(meta.data());
  if (crc32c(h + kJournalHead, r.meta - kJournalHead) != r.meta_crc)
    fail_corrupt(where, "journal record checksum mismatch");
  bool has_manifest = false;
  for (uint32_t p = 0; p < r.parts; p++) {
    const unsigned char* e = h + table_at(r.unsynced) + kJournalEntry * p;
    const uint32_t kind = get_u32(e), present = get_u32(e + 4);
    const uint64_t off = get_u64(e + 8), n = get_u64(e + 16);
    if (off > r.len || n > r.len - off) fail_corrupt(where, "journal part lies outside its record");
    if (kind == kTablePack) {
      if (off < r.meta || off % kJournalAlign != 0) fail_corrupt(where, "journal pack is misplaced");
      continue;
    }
    if (off > r.meta || n > r.meta - off) fail_corrupt(where, "journal list lies outside the record's metadata");
    std::string part(meta.data() + off, static_cast<size_t>(n));
    if (kind == kTableManifest) {
      manifest = std::move(part);
      has_manifest = true;
    } else if (kind >= kTableList && kind - kTableList < std::size(kListNames) &&
               (r.lists >> (kind - kTableList) & 1)) {
      auto& slot = st.lists[kListNames[kind - kTableList]];
      if (present) slot = std::make_shared<const std::string>(std::move(part));
      else slot.reset();
    } else {
      fail_corrupt(where, "journal part of an unknown kind");
    }
  }
  if (!has_manifest) fail_corrupt(where, "journal record without a manifest");
}

}  // namespace

void apply_journal(CurrentState& st, const std::string& path, uint64_t size,
                   const std::function<void(uint64_t, size_t, char*)>& read) {
  // Headers first (the first one not whole ends the journal: a crash cut
  // it), then the metadata of the last record and of the last to name each
  // list: a list or manifest a later record replaced is never read.
  std::vector<RecordHead> heads;
  std::vector<size_t> last_of(std::size(kListNames), SIZE_MAX);
  uint64_t pos = 0;
  unsigned char h[kJournalHead];
  while (size - pos >= kJournalHead) {
    read(pos, kJournalHead, reinterpret_cast<char*>(h));
    if (std::memcmp(h, kMagicJournal, 8) != 0 || crc32c(h, 60) != get_u32(h + 60)) break;
    if (get_u32(h + 8) != kJournalVersion) fail_corrupt(path, "journal record of another version");
    RecordHead r{pos, get_u64(h + 24), get_u64(h + 32), get_u64(h + 40), get_u32(h + 12), get_u32(h + 48),
                 get_u32(h + 52), get_u32(h + 56)};
    if (get_u64(h + 16) != st.m.generation || r.number != heads.size() + 1) break;
    // Short: the last record, cut by a crash (checked below).
    if (r.len > size - pos) break;
    r.unsynced = (r.lists & kListsUnsynced) != 0;
    r.lists &= ~kListsUnsynced;
    const uint64_t table = table_at(r.unsynced);
    if (r.len % kJournalAlign != 0 || r.meta > r.len || r.meta < table ||
        r.parts > (r.meta - table) / kJournalEntry || (r.lists >> std::size(kListNames)) != 0)
      fail_corrupt(path + " (record " + std::to_string(r.number) + ")", "journal record has impossible lengths");
    if (r.unsynced) {
      unsigned char u[kJournalUnsyncedBytes];
      read(pos + kJournalHead, sizeof u, reinterpret_cast<char*>(u));
      std::memcpy(r.boot.data(), u, r.boot.size());
      r.written_ns = static_cast<int64_t>(get_u64(u + 16));
    }
    heads.push_back(r);
    pos += r.len;
  }
  // Unsynced records after the last synced one count in the boot that
  // wrote them only. Then the last record is read whole: each synced one
  // was synced before the next was written, and an unsynced one of this
  // boot is whole in the page cache unless a killed writer cut it, so only
  // the last can be torn (again after a torn one, whatever it was).
  const std::optional<BootId> boot = current_boot_id();
  size_t first_unsynced = heads.size();
  while (!heads.empty()) {
    first_unsynced = heads.size();
    while (first_unsynced > 0 && heads[first_unsynced - 1].unsynced) first_unsynced--;
    for (size_t i = first_unsynced; i < heads.size(); i++)
      if (!boot || heads[i].boot != *boot) {
        pos = heads[i].pos;
        heads.resize(i);
        break;
      }
    if (heads.empty()) break;
    const RecordHead& last = heads.back();
    std::string body(static_cast<size_t>(last.len - kJournalHead), '\0');
    read(last.pos + kJournalHead, body.size(), body.data());
    if (crc32c(body.data(), body.size()) == last.body_crc) break;
    pos = last.pos;
    heads.pop_back();
  }
  if (heads.empty()) return;
  first_unsynced = std::min(first_unsynced, heads.size());
  for (size_t i = 0; i < heads.size(); i++)
    for (size_t k = 0; k < std::size(kListNames); k++)
      if (heads[i].lists >> k & 1) last_of[k] = i;
  std::vector<size_t> wanted(last_of.begin(), last_of.end());
  wanted.push_back(heads.size() - 1);
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::string manifest;
  for (size_t i : wanted)
    if (i != SIZE_MAX) apply_record(st, path, heads[i], read, manifest);
  const std::string where = path + " (record " + std::to_string(heads.size()) + ")";
  Manifest m = Manifest::decode(where, manifest);
  if (m.generation != st.m.generation) fail_corrupt(where, "journal manifest of another generation");
  st.m = std::move(m);
  st.records = heads.size();
  st.journal_end = pos;
  st.unsynced_since_ns = first_unsynced < heads.size() ? std::max<int64_t>(1, heads[first_unsynced].written_ns) : 0;
}

void apply_journal(CurrentState& st, const std::string& path, std::string_view bytes) {
  apply_journal(st, path, bytes.size(),
                [&](uint64_t off, size_t n, char* out) { std::memcpy(out, bytes.data() + off, n); });
}

bool journal_moved(int fd, const CurrentState& st) {
  // From the byte before the state's end: none there means the journal
  // was cut back below it. A next record unsynced in another boot is one
  // a reader of this boot does not take: no change.
  unsigned char b[kJournalHead + kJournalUnsyncedBytes + 1];
  const uint64_t from = st.journal_end > 0 ? st.journal_end - 1 : 0;
  const ssize_t n = pread_some(fd, b, sizeof b, from);
  if (n < 0) return true;
  const unsigned char* h = b;
  size_t have = static_cast<size_t>(n);
  if (st.journal_end > 0) {
    if (have == 0) return true;
    h++;
    have--;
  }
  if (have < kJournalHead || !is_record_head(h, st.m.generation, st.records + 1)) return false;
  if ((get_u32(h + 48) & kListsUnsynced) == 0 || have < kJournalHead + kJournalUnsyncedBytes) return true;
  const std::optional<BootId> boot = current_boot_id();
  return boot && std::memcmp(h + kJournalHead, boot->data(), boot->size()) == 0;
}

bool CurrentState::manifest_unmoved() const {
  struct stat sb;
  if (::stat(manifest_path(dir).c_str(), &sb) != 0) return false;
  return sb.st_ino == manifest_ino && sb.st_mtim.tv_sec == manifest_mtime.tv_sec &&
         sb.st_mtim.tv_nsec == manifest_mtime.tv_nsec;
}

bool journal_moved(const CurrentState& st) {
  const std::string path = st.gen_dir + "/" + kJournalFile;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno != ENOENT || st.journal_end > 0;
  return journal_moved(fd.get(), st);
}

void remember_current(const CurrentState& st) {
  if (!st.manifest_file) return;
  std::lock_guard<std::mutex> lk(kept_mu);
  std::erase_if(kept, [&](const CurrentState& k) { return k.dir == st.dir; });
  if (kept.size() >= kKeptStates) kept.erase(kept.begin());
  kept.push_back(st);
}

void forget_current(const std::string& dir) {
  std::lock_guard<std::mutex> lk(kept_mu);
  std::erase_if(kept, [&](const CurrentState& k) { return k.dir == dir; });
}

std::vector<uint32_t> CurrentState::first_free_segments() const {
  std::vector<uint32_t> next(m.indexers, 0);
  auto note = [&](const SegmentRef& s) {
    if (s.seg == UINT32_MAX) fail_corrupt(manifest_path(dir), "segment number out of range");
    if (s.indexer < next.size()) next[s.indexer] = std::max(next[s.indexer], s.seg + 1);
  };
  for (const SegmentRef& s : m.segments) note(s);
  if (manifest_file)
    for (const SegmentRef& s : Manifest::decode(manifest_path(dir), *manifest_file).segments) note(s);
  return next;
}

CurrentState read_current(const std::string& dir) {
  struct stat sm;
  std::shared_ptr<const std::string> manifest = read_manifest_bytes(dir, sm);
  {
    std::unique_lock<std::mutex> lk(kept_mu);
    for (const CurrentState& k : kept) {
      if (k.dir != dir || *k.manifest_file != *manifest) continue;
      CurrentState st = k;
      lk.unlock();
      st.manifest_ino = sm.st_ino;
      st.manifest_mtime = sm.st_mtim;
      // The same generation: its journal changes only by records written
      // after the last (or over a torn one).
      if (!journal_moved(st)) return st;
      break;
    }
  }
  CurrentState st;
  st.dir = dir;
  st.m = Manifest::decode(manifest_path(dir), *manifest);
  st.manifest_file = std::move(manifest);
  st.manifest_ino = sm.st_ino;
  st.manifest_mtime = sm.st_mtim;
  st.gen_dir = st.m.gen_dir(dir);
  const std::string path = st.gen_dir + "/" + kJournalFile;
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    if (errno != ENOENT) fail_io(errno, "open", path);
    remember_current(st);
    return st;
  }
  struct stat sb;
  if (::fstat(fd.get(), &sb) != 0) fail_io(errno, "stat", path);
  apply_journal(st, path, static_cast<uint64_t>(sb.st_size),
                [&](uint64_t off, size_t n, char* out) { pread_exact(fd.get(), out, n, off, path); });
  remember_current(st);
  return st;
}

std::optional<CurrentState> try_read_current(const std::string& dir) {
  try {
    return read_current(dir);
  } catch (const Error&) {
    return std::nullopt;
  }
}

uint64_t journal_meta_bytes(const std::vector<JournalPart>& parts, bool unsynced) {
  uint64_t at = table_at(unsynced) + kJournalEntry * parts.size();
  for (const JournalPart& p : parts)
    if (p.kind != JournalKind::kPack) at = align_up(at, 8) + (p.present ? p.bytes.size() : 0);
  return at;
}

std::vector<uint64_t> journal_pack_offsets(uint64_t start, uint64_t meta,
                                           const std::vector<uint64_t>& pack_sizes) {
  std::vector<uint64_t> out;
  uint64_t at = start + align_up(meta, kJournalAlign);
  for (uint64_t n : pack_sizes) {
    out.push_back(at);
    at = align_up(at + n, kJournalAlign);
  }
  return out;
}

std::string encode_journal_record(uint64_t generation, uint64_t number, uint64_t start,
                                  const std::vector<JournalPart>& parts, const JournalUnsynced* unsynced) {
  const uint64_t table_start = table_at(unsynced != nullptr);
  std::string rec(table_start + kJournalEntry * parts.size(), '\0'), table;
  auto entry = [&](uint32_t kind, bool present, uint64_t off, uint64_t n) {
    put_u32(table, kind);
    put_u32(table, present ? 1 : 0);
    put_u64(table, off);
    put_u64(table, n);
  };
  for (const JournalPart& p : parts) {
    if (p.kind == JournalKind::kPack) continue;
    rec.resize(align_up(rec.size(), 8), '\0');
    const uint32_t kind = p.kind == JournalKind::kManifest ? kTableManifest : kTableList + list_number(p.name);
    entry(kind, p.present, rec.size(), p.present ? p.bytes.size() : 0);
    if (p.present) rec.append(p.bytes);
  }
  const uint64_t meta = rec.size();
  std::vector<uint64_t> sizes;
  for (const JournalPart& p : parts)
    if (p.kind == JournalKind::kPack) sizes.push_back(p.bytes.size());
  const std::vector<uint64_t> at = journal_pack_offsets(start, meta, sizes);
  size_t next_pack = 0;
  for (const JournalPart& p : parts) {
    if (p.kind != JournalKind::kPack) continue;
    rec.resize(at[next_pack++] - start, '\0');
    entry(kTablePack, true, rec.size(), p.bytes.size());
    rec.append(p.bytes);
  }
  rec.resize(align_up(rec.size(), kJournalAlign), '\0');
  std::memcpy(rec.data() + table_start, table.data(), table.size());
  if (unsynced) {
    std::string u(reinterpret_cast<const char*>(unsynced->boot.data()), unsynced->boot.size());
    put_u64(u, static_cast<uint64_t>(unsynced->written_ns));
    std::memcpy(rec.data() + kJournalHead, u.data(), u.size());
  }
  std::string head(kMagicJournal, 8);
  put_u32(head, kJournalVersion);
  put_u32(head, static_cast<uint32_t>(parts.size()));
  put_u64(head, generation);
  put_u64(head, number);
  put_u64(head, rec.size());
  put_u64(head, meta);
  uint32_t lists = 0;
  for (const JournalPart& p : parts)
    if (p.kind == JournalKind::kList) lists |= 1u << list_number(p.name);
  if (unsynced) lists |= kListsUnsynced;
  put_u32(head, lists);
  put_u32(head, crc32c(rec.data() + kJournalHead, meta - kJournalHead));
  put_u32(head, crc32c(rec.data() + kJournalHead, rec.size() - kJournalHead));
  put_u32(head, crc32c(head.data(), head.size()));
  std::memcpy(rec.data(), head.data(), kJournalHead);
  return rec;
}

uint64_t append_journal(CurrentState& st, const std::string& record) {
  const std::string path = st.gen_dir + "/" + kJournalFile;
  // A state with records has the file: one open.
  bool created = st.journal_end == 0;
  Fd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | (created ? O_CREAT | O_EXCL : 0), 0600));
  if (!fd && created && errno == EEXIST) {
    created = false;
    fd = Fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  }
  if (!fd) fail_io(errno, "open", path);
  struct stat sb;
  if (::fstat(fd.get(), &sb) != 0) fail_io(errno, "stat", path);
  const uint64_t size = static_cast<uint64_t>(sb.st_size);
  if (size < st.journal_end)
    fail(SCIPIS_E_IO, "journal \"%s\" shrank while a refresh ran", path.c_str());
  const auto* rh = reinterpret_cast<const unsigned char*>(record.data());
  // The file itself (its name in the directory) is always made durable.
  const bool unsynced = !created && record.size() >= kJournalHead + kJournalUnsyncedBytes &&
                        (get_u32(rh + 48) & kListsUnsynced) != 0;
  // The record goes where the whole ones end, over a torn one a crash left
  // (no reader takes it); a zero header after it ends every reader's walk
  // there, whatever that torn one left beyond (written when not zero).
  const uint64_t end = st.journal_end + record.size();
  if (end + kJournalHead <= size) {
    // Zeros there already (no crash left bytes beyond): a page less to sync.
    unsigned char after[kJournalHead];
    const bool clean = pread_some(fd.get(), after, sizeof after, end) == static_cast<ssize_t>(sizeof after) &&
                       std::all_of(after, after + sizeof after, [](unsigned char c) { return c == 0; });
    pwrite_then_zeros(fd.get(), record, st.journal_end, clean ? 0 : kJournalHead, path);
    if (!unsynced && sync_data_fd(fd.get()) != 0) fail_io(errno, "fsync file", path);
  } else {
    // Unsynced, the new size too waits for a later record's sync (an
    // fdatasync commits a size that grew).
    pwrite_then_zeros(fd.get(), record, st.journal_end, journal_grown_size(end) - end, path);
    if (!unsynced && sync_fd(fd.get()) != 0) fail_io(errno, "fsync file", path);
    if (created) fsync_dir(st.gen_dir);
  }
  st.records++;
  st.journal_end = end;
  if (!unsynced) st.unsynced_since_ns = 0;
  else if (st.unsynced_since_ns == 0)
    st.unsynced_since_ns = std::max<int64_t>(1, static_cast<int64_t>(get_u64(rh + kJournalHead + 16)));
  return record.size();
}

}  // namespace scipis
