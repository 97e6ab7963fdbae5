#include "pipeline/journal_commit.h"

#include <algorithm>
#include <optional>

#include "pipeline/build.h"
#include "util/time_ns.h"

namespace scipis {

bool commit_into_journal(CurrentState& st, Manifest& m, const std::vector<DeferredPack>& packs,
                         const std::vector<JournalPart>& lists, uint64_t replaced, bool may_defer_sync) {
  if (!journal_enabled() || st.records >= kJournalMaxRecords) return false;
  // A bound on the record (a page per pack and for the metadata's table
  // and manifest at most), checked before anything is laid out.
  uint64_t bound = kJournalAlign * (packs.size() + 1) + 256 * (m.segments.size() + 4);
  std::vector<uint64_t> sizes;
  for (const auto& p : packs) {
    sizes.push_back(p.bytes.size());
    bound += p.bytes.size();
  }
  for (const JournalPart& p : lists) bound += p.bytes.size();
  if (bound > kJournalMaxRecord || st.journal_end + bound > kJournalMaxBytes) return false;
  std::vector<SegmentRef*> placed;
  for (const auto& p : packs) {
    auto it = std::find_if(m.segments.begin(), m.segments.end(), [&](const SegmentRef& s) {
      return s.home == kOwnGeneration && s.indexer == p.indexer && s.seg == p.seg && s.packed;
    });
    if (it == m.segments.end()) return false;
    placed.push_back(&*it);
  }
  // The manifest's size depends on neither where the packs lie nor its
  // index_bytes: laid out with stand-ins first, then encoded for good.
  for (SegmentRef* s : placed) s->journal_off = s->journal_len = 1;
  m.generation = st.m.generation;
  // Unsynced only while nothing the state before it needs is removed after
  // it (a crash of the machine can take it back), and not for long.
  std::optional<JournalUnsynced> unsynced;
  if (may_defer_sync && st.journal_end > 0) {
    const std::optional<BootId> boot = current_boot_id();
    const int64_t now = realtime_ns();
    if (boot && (st.unsynced_since_ns == 0 || now - st.unsynced_since_ns < journal_defer_ns()) &&
        replaced_paths(st.dir, st.m, m).empty())
      unsynced = JournalUnsynced{*boot, now};
  }
  std::vector<JournalPart> parts;
  for (const auto& p : packs) parts.push_back({JournalKind::kPack, "", true, p.bytes});
  parts.insert(parts.end(), lists.begin(), lists.end());
  std::string manifest = m.encode();  // parts view it
  parts.push_back({JournalKind::kManifest, "", true, manifest});
  const uint64_t meta = journal_meta_bytes(parts, unsynced.has_value());
  const std::vector<uint64_t> at = journal_pack_offsets(st.journal_end, meta, sizes);
  for (size_t k = 0; k < packs.size(); k++) {
    placed[k]->journal_off = at[k];
    placed[k]->journal_len = sizes[k];
  }
  // Live bytes: the old index less what the change replaced, plus the
  // record (laid out as encode_journal_record lays it out).
  const uint64_t end = packs.empty() ? meta : at.back() + sizes.back() - st.journal_end;
  const uint64_t record_len = (end + kJournalAlign - 1) / kJournalAlign * kJournalAlign;
  m.index_bytes = (st.m.index_bytes > replaced ? st.m.index_bytes - replaced : 0) + record_len;
  manifest = m.encode();
  parts.back().bytes = manifest;
  append_journal(st, encode_journal_record(m.generation, st.records + 1, st.journal_end, parts,
                                          unsynced ? &*unsynced : nullptr));
  // st is now what the record made (its manifest as a reader decodes it):
  // the next read of this process needs no look at the journal.
  st.m = Manifest::decode(st.gen_dir + "/" + kJournalFile, manifest);
  for (const JournalPart& p : lists)
    st.lists[p.name] = p.present ? std::make_shared<const std::string>(p.bytes) : nullptr;
  remember_current(st);
  return true;
}

}  // namespace scipis
