// A small change (a refresh's, a merge's) committed into the journal of the
// generation it changed (index/journal.h): its new packed segments, held
// in memory, and the lists it names, in one record, one file synced.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "index/journal.h"
#include "index/manifest.h"

namespace scipis {

// A packed segment's bytes, not yet written: path is where a generation
// commit puts it.
struct DeferredPack {
  uint32_t indexer, seg;
  std::string path, bytes;
};

// Appends m as record of st's journal (m.generation becomes st's, its
// packed segments of packs get their places in the record); st is then
// the state it made. replaced: the bytes of the segments m no longer
// holds. False, with nothing written, when the journal is off or full, a
// pack is not one of m's own packed segments, or the record would be too
// large: the caller commits a generation instead. may_defer_sync: the
// record may be left unsynced (index/journal.h) when the commit removes
// nothing the state before it holds and the journal's first unsynced
// record is younger than journal_defer_ns().
bool commit_into_journal(CurrentState& st, Manifest& m, const std::vector<DeferredPack>& packs,
                         const std::vector<JournalPart>& lists, uint64_t replaced, bool may_defer_sync = false);

}  // namespace scipis
