#include "pipeline/kept_docs.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace scipis {

namespace {

// A few collections' indexers: a refresh takes in up to kTakeInRun
// segments per indexer.
constexpr size_t kKeptSegments = 64;

struct KeptSegment {
  std::string dir;
  uint64_t home;
  std::shared_ptr<const AbsorbDocs> docs;
};

std::mutex kept_segments_mu;
std::vector<KeptSegment> kept_segments;  // newest last

bool same_segment_place(const SegmentRef& a, uint64_t a_home, const SegmentRef& b, uint64_t b_home) {
  return a_home == b_home && a.indexer == b.indexer && a.seg == b.seg && a.first_seq == b.first_seq &&
         a.docs == b.docs && a.tf_data_bytes == b.tf_data_bytes && a.file_data_bytes == b.file_data_bytes &&
         a.packed == b.packed && a.journal_off == b.journal_off && a.journal_len == b.journal_len &&
         a.run_started_ns == b.run_started_ns;
}

}  // namespace

void keep_docs(const std::string& dir, const Manifest& m, const std::shared_ptr<AbsorbDocs>& docs) {
  auto it = std::find_if(m.segments.begin(), m.segments.end(), [&](const SegmentRef& s) {
    return s.indexer == docs->ref.indexer && s.seg == docs->ref.seg;
  });
  if (it == m.segments.end() || !it->in_journal() || it->docs != docs->count()) return;
  docs->ref = *it;
  std::lock_guard<std::mutex> lk(kept_segments_mu);
  // The indexer's others that m no longer holds (taken in, merged).
  std::erase_if(kept_segments, [&](const KeptSegment& k) {
    return k.dir == dir && k.docs->ref.indexer == it->indexer &&
           std::none_of(m.segments.begin(), m.segments.end(), [&](const SegmentRef& s) {
             return same_segment_place(k.docs->ref, k.home, s, m.home_of(s));
           });
  });
  if (kept_segments.size() >= kKeptSegments) kept_segments.erase(kept_segments.begin());
  kept_segments.push_back({dir, m.home_of(*it), docs});
}

namespace {
// A few collections' segments.
constexpr size_t kKeptFileData = 32;

struct KeptFileData {
  std::string dir;
  uint64_t home;
  SegmentRef ref;
  std::shared_ptr<const MappedFile> bytes;
};

std::mutex kept_file_data_mu;
std::vector<KeptFileData> kept_file_data_list;  // newest last

// Segment s of m's kept entry, or null; kept_file_data_mu held.
const KeptFileData* find_file_data(const std::string& dir, const Manifest& m, const SegmentRef& s) {
  const uint64_t home = m.home_of(s);
  for (const KeptFileData& k : kept_file_data_list)
    if (k.dir == dir && same_segment_place(k.ref, k.home, s, home)) return &k;
  return nullptr;
}
}  // namespace

void keep_file_data(const std::string& dir, const Manifest& m, const SegmentRef& s,
                    const std::shared_ptr<const MappedFile>& bytes) {
  if (!bytes || !bytes->in_memory()) return;
  std::lock_guard<std::mutex> lk(kept_file_data_mu);
  // This collection's that m no longer holds (merged, taken in, rebuilt).
  std::erase_if(kept_file_data_list, [&](const KeptFileData& k) {
    return k.dir == dir && std::none_of(m.segments.begin(), m.segments.end(), [&](const SegmentRef& x) {
             return same_segment_place(k.ref, k.home, x, m.home_of(x));
           });
  });
  if (find_file_data(dir, m, s)) return;
  if (kept_file_data_list.size() >= kKeptFileData) kept_file_data_list.erase(kept_file_data_list.begin());
  kept_file_data_list.push_back({dir, m.home_of(s), s, bytes});
}

std::shared_ptr<const MappedFile> kept_file_data(const std::string& dir, const Manifest& m, const SegmentRef& s) {
  std::lock_guard<std::mutex> lk(kept_file_data_mu);
  const KeptFileData* k = find_file_data(dir, m, s);
  return k ? k->bytes : nullptr;
}

std::shared_ptr<const AbsorbDocs> kept_docs(const std::string& dir, const Manifest& m, const SegmentRef& s) {
  if (!s.in_journal()) return nullptr;
  std::lock_guard<std::mutex> lk(kept_segments_mu);
  for (const KeptSegment& k : kept_segments)
    if (k.dir == dir && same_segment_place(k.docs->ref, k.home, s, m.home_of(s))) return k.docs;
  return nullptr;
}

}  // namespace scipis
