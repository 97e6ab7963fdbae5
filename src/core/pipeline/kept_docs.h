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

namespace scipis {

// docs: the documents of indexer docs->ref.indexer's segment docs->ref.seg,
// which m (just committed) holds in its journal; their ref becomes m's.
void keep_docs(const std::string& dir, const Manifest& m, const std::shared_ptr<AbsorbDocs>& docs);
// The documents kept for segment s of m, or null.
std::shared_ptr<const AbsorbDocs> kept_docs(const std::string& dir, const Manifest& m, const SegmentRef& s);

}  // namespace scipis
