// The documents of the small segments this process's refreshes committed
// into a journal, kept for the next refresh of the collection: it takes
// such a segment in (ResumeState::Indexer::absorb) without decoding it.
// A journal only grows, so a segment's place in it (with its numbers,
// sizes and the start of the refresh that wrote it, in ns) names its
// bytes: a collection dropped and made again in the same directory has
// other start times.
#pragma once

#include <memory>
#include <string>

#include "index/manifest.h"
#include "pipeline/resume.h"
#include "util/mapped_file.h"

namespace scipis {

// docs: the documents of indexer docs->ref.indexer's segment docs->ref.seg,
// which m (just committed) holds in its journal; their ref becomes m's.
void keep_docs(const std::string& dir, const Manifest& m, const std::shared_ptr<AbsorbDocs>& docs);
// The documents kept for segment s of m, or null.
std::shared_ptr<const AbsorbDocs> kept_docs(const std::string& dir, const Manifest& m, const SegmentRef& s);

// The file data (records of paths and stats) of segment s of m as a
// refresh's catalog read it, kept when it was small enough to be read into
// memory (nothing stays mapped, no deleted file is held): a watcher's next
// refresh of a few paths looks in the same segments, and opening and
// reading each again was a few percent of an append's refresh. A
// segment's bytes never change once published; its place names them.
void keep_file_data(const std::string& dir, const Manifest& m, const SegmentRef& s,
                    const std::shared_ptr<const MappedFile>& bytes);
std::shared_ptr<const MappedFile> kept_file_data(const std::string& dir, const Manifest& m, const SegmentRef& s);

}  // namespace scipis
