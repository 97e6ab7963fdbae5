// A generation's journal: small refreshes commit by appending one record to
// g<N>/JOURNAL and syncing that one file, instead of a new generation
// directory with its own manifest, lists and pack (four new inodes, four
// freed and six fsyncs: half of a 1 KiB append's refresh). A record holds
// the whole new manifest (its generation still N), the lists it changed
// (tombstones, chains, racy documents, term registers, directory records)
// and the new segments' packs, which readers map from the journal itself.
// What readers see is MANIFEST, then every valid record in order; a last
// record that is short or fails its checksum is a crash's (unseen), and
// the next writer writes its own over it.
// A larger change, a merge or a build writes a full generation as before;
// segments in an older generation's journal stay there while live.
//
// Record, at an offset that is a multiple of kJournalAlign, little-endian:
//   header (kJournalHead bytes): magic SCIPISJR, u32 version, u32 parts P,
//     u64 generation, u64 record number (1, 2, ... in the file), u64
//     record length L (a multiple of kJournalAlign), u64 meta length M,
//     u32 the lists it names (bit i: list i of deleted, appended, racy,
//     TERMS, DIRS; bit 31: written without a sync), u32 crc32c of bytes
//     [kJournalHead, M), u32 crc32c of bytes [kJournalHead, L), u32 crc32c
//     of the header's bytes before it;
//   written without a sync only: the boot id of the kernel that wrote it
//     (16 bytes) and u64 when (realtime ns);
//   part table: P entries of u32 kind, u32 present (0: the list is gone),
//     u64 offset from the record's start, u64 length;
//   the lists and the manifest (up to M), then the packs, each at a
//     multiple of kJournalAlign (mapped in place; their parts carry their
//     own checksums); padding is zeros.
// A record is synced before the next is written, so only the last can be
// torn: a reader reads every header, the last record whole (its checksum
// over L), and then the metadata of the last record and of the last to
// name each list only; never a pack, nor a list or manifest replaced since.
// Unless it was written without a sync (a refresh whose caller chose
// synchronous_commit = off): such a record is in the page cache, which a
// killed process leaves whole but a crash of the machine does not. Readers
// take those after the last synced record only in the boot that wrote
// them: in another, the journal ends before the first (the state before
// it; the tree still holds what it saw, for the next refresh to find). A
// synced record's sync covers every byte before it, so it vouches for the
// unsynced ones before it too.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/manifest.h"
#include "util/boot_id.h"

namespace scipis {

inline const char* kJournalFile = "JOURNAL";
inline constexpr char kMagicJournal[] = "SCIPISJR";
constexpr uint64_t kJournalAlign = 4096;
constexpr size_t kJournalHead = 64;
constexpr size_t kJournalEntry = 24;
constexpr size_t kJournalUnsyncedBytes = 24;
// A refresh that may leave its record unsynced syncs it all the same once
// the first unsynced record after the last synced one is this old: what a
// crash of the machine can take back stays this short while refreshes go on.
constexpr int64_t kJournalDeferNs = 1'000'000'000;
// That age now; tests set another (a test's pace must not decide which
// records are synced).
int64_t journal_defer_ns();
void set_journal_defer_ns(int64_t ns);
// A journal longer than this, or a record larger, commits a generation;
// so does a journal of kJournalMaxRecords (every reader's open reads each
// record's metadata: one generation in so many keeps that short).
constexpr uint64_t kJournalMaxBytes = 4u << 20;
constexpr uint64_t kJournalMaxRecord = 512u << 10;
constexpr uint64_t kJournalMaxRecords = 32;

// On by default; tests of a generation's own list files turn it off.
void set_journal_enabled(bool on);
bool journal_enabled();

enum class JournalKind : uint32_t { kManifest = 1, kList = 2, kPack = 3 };

// Where and when a record written without a sync was written.
struct JournalUnsynced {
  BootId boot;
  int64_t written_ns;
};

// A part to append: a list (by its file name) present or gone, the
// manifest, or a pack (whose absolute offset the writer reports back).
struct JournalPart {
  JournalKind kind;
  std::string name;  // a list's file name
  bool present = true;
  std::string_view bytes;
};

// What readers of a collection see now: the manifest with the journal's
// records applied, and the lists as the last record that named each left
// them (else the generation's files).
struct CurrentState {
  Manifest m;
  std::string dir, gen_dir;
  uint64_t records = 0;      // valid records applied
  uint64_t journal_end = 0;  // their bytes (where the next one goes)
  // When the first record after the last synced one was written, unsynced
  // (realtime ns; 0: every record is synced).
  int64_t unsynced_since_ns = 0;
  // Shared, not copied, by the copies of a state (remember_current keeps some).
  absl::flat_hash_map<std::string, std::shared_ptr<const std::string>> lists;  // null: none
  // The MANIFEST file's bytes the state was read from, and that file's
  // inode and mtime (from the descriptor read: a stat of the path after
  // could name a newer manifest, and a stale state then look current).
  std::shared_ptr<const std::string> manifest_file;
  ino_t manifest_ino = 0;
  struct timespec manifest_mtime {};
  // Whether MANIFEST is still the file this state was read from.
  bool manifest_unmoved() const;

  // Per indexer, the first number a new segment of this generation may
  // take: past those its current segments hold and those its base
  // manifest held. The generation's PATHS file names the latter
  // (index/gen_paths.h); a segment merged or dropped since must not lend
  // its name to a new one, which PATHS would then take for it.
  std::vector<uint32_t> first_free_segments() const;

  // A list of the generation; false when it has none.
  bool read_list(const char* name, std::string& out) const;
  // Puts the list into another generation's directory, as a link when it
  // is the generation's own file.
  void carry_list(const char* name, const std::string& to_gen) const;
};

// Throws SCIPIS_E_NOT_INDEXED without a manifest, a corruption error
// naming the file when the manifest or a valid record's parts are damaged.
// A process keeps the last state of a few collections (remember_current):
// while MANIFEST holds the same bytes and the journal no record after the
// state's (journal_moved), that state is the current one, and its journal
// is not read again.
CurrentState read_current(const std::string& dir);
// Whether the journal holds other records than st's now: cut back below
// their end, or the whole header of a next record after them. fd: the
// journal open for reading (the other form opens it).
bool journal_moved(int fd, const CurrentState& st);
bool journal_moved(const CurrentState& st);
// Keeps st (as the state of st.dir) for read_current: a state read whole,
// or the one a record appended by this process made.
void remember_current(const CurrentState& st);
// Drops the state kept for dir: the next read_current reads the files. For
// tests that stand in for another process (one that crashed mid-record).
void forget_current(const std::string& dir);
// The same, nullopt without a manifest or when it is damaged.
std::optional<CurrentState> try_read_current(const std::string& dir);

// Applies the records of a journal of size bytes, read by read(offset,
// length, out), onto st (its manifest already MANIFEST's).
void apply_journal(CurrentState& st, const std::string& path, uint64_t size,
                   const std::function<void(uint64_t, size_t, char*)>& read);
void apply_journal(CurrentState& st, const std::string& path, std::string_view bytes);

// The bytes before a record's packs: header, table, lists and manifest
// (whose size does not depend on the offsets it holds).
uint64_t journal_meta_bytes(const std::vector<JournalPart>& parts, bool unsynced = false);
// Where the packs of a record starting at start will lie (absolute
// offsets in the journal), its meta bytes given.
std::vector<uint64_t> journal_pack_offsets(uint64_t start, uint64_t meta,
                                           const std::vector<uint64_t>& pack_sizes);
// The record's bytes; packs are laid out as journal_pack_offsets says, in
// the order given. unsynced: to be written without a sync.
std::string encode_journal_record(uint64_t generation, uint64_t number, uint64_t start,
                                  const std::vector<JournalPart>& parts,
                                  const JournalUnsynced* unsynced = nullptr);

// Appends a record to st's generation's journal (over a torn tail), synced
// unless it was encoded as unsynced (never the one that makes the file);
// st is then the state it made. Returns its length. The file is written
// ahead with zeros (synced with its size) that records overwrite: a
// record's sync then commits no metadata. Readers stop at the first
// header that is not a record's: the zeros after the last.
uint64_t append_journal(CurrentState& st, const std::string& record);

}  // namespace scipis
