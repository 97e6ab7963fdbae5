#include "query/collection.h"

#include <sys/stat.h>

#include <cerrno>
#include <tuple>

#include <algorithm>

#include "index/deletes.h"
#include "index/segment_format.h"
#include "util/error.h"

namespace scipis {

Collection::Collection(std::string dir) : Collection(dir, read_current(dir)) {}

Collection::Collection(std::string dir, CurrentState state, Collection* prev, bool updatable)
    : dir_(std::move(dir)) {
  lists_ = std::move(state);
  m_ = std::move(lists_.m);
  tokenizer_ = std::make_unique<Tokenizer>(m_.delimiter);
  gen_dir_ = m_.gen_dir(dir_);
  segs_.resize(m_.segments.size());
  ix_.resize(m_.indexers);
  for (size_t i = 0; i < segs_.size(); i++) {
    SegmentState& s = segs_[i];
    s.ref = m_.segments[i];
    const std::string home = m_.home_dir(dir_, s.ref);
    s.tf_dir = home + "/" + tf_dir(s.ref.indexer) + "/";
    s.parts = std::make_unique<PartOpener>(home, s.ref, m_.split_factor);
    s.tf_data_path = s.parts->name(Part::kTfData, 0);
    s.tf_meta.resize(m_.split_factor);
    s.file_meta.resize(m_.split_factor);
  }
  for (auto& s : segs_) ix_[s.ref.indexer].segs.push_back(&s);
  for (IndexerState& ix : ix_) {
    ix.first.push_back(0);
    for (SegmentState* s : ix.segs) {
      s->seq0 = ix.first.back();
      ix.first.push_back(ix.first.back() + s->ref.docs);
    }
  }
  if (m_.deleted > 0) load_deletes();
  if (m_.chain_links > 0) load_chains();
  for (const SegmentState& s : segs_) {
    if (!updatable && !prev) break;  // a refresh's or a merge's: never adopted from
    const uint64_t h = m_.home_of(s.ref);
    if (home_ids_.contains(h)) continue;
    struct stat st;
    const std::string p = dir_ + "/g" + std::to_string(h);
    home_ids_[h] = ::stat(p.c_str(), &st) == 0 ? std::pair<uint64_t, uint64_t>(st.st_dev, st.st_ino)
                                               : std::pair<uint64_t, uint64_t>(0, 0);
  }
  // Last: nothing after it may fail, so that a failed open leaves prev whole.
  if (prev) adopt(*prev);
}

namespace {

bool same_files(const Manifest& a, const SegmentRef& x, const Manifest& b, const SegmentRef& y) {
  return x.indexer == y.indexer && x.seg == y.seg && x.first_seq == y.first_seq && x.docs == y.docs &&
         x.tf_data_bytes == y.tf_data_bytes && x.file_data_bytes == y.file_data_bytes &&
         a.home_of(x) == b.home_of(y) && file_seg_of(x) == file_seg_of(y) && x.packed == y.packed &&
         x.pack_root == y.pack_root && x.journal_off == y.journal_off && x.journal_len == y.journal_len;
}

}  // namespace

void Collection::adopt(Collection& prev) {
  if (prev.dir_ != dir_ || prev.m_.split_factor != m_.split_factor || prev.m_.indexers != m_.indexers) return;
  // A segment's files never change once a manifest names them; a home
  // removed and made again (the collection dropped and built anew) may
  // hold others under the same names.
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, SegmentState*> old;  // by indexer, first seq
  for (SegmentState& s : prev.segs_) old[{s.ref.indexer, s.seq0}] = &s;
  for (SegmentState& s : segs_) {
    const auto it = old.find({s.ref.indexer, s.seq0});
    if (it == old.end()) continue;
    SegmentState& o = *it->second;
    const uint64_t h = m_.home_of(s.ref);
    const auto mine = home_ids_.find(h), theirs = prev.home_ids_.find(h);
    if (!o.parts || !same_files(m_, s.ref, prev.m_, o.ref) || mine->second.second == 0 ||
        theirs == prev.home_ids_.end() || theirs->second != mine->second)
      continue;
    s.parts = std::move(o.parts);
    s.tf_map = std::move(o.tf_map);
    s.tf_meta = std::move(o.tf_meta);
    s.file_map = std::move(o.file_map);
    s.files = std::move(o.files);
    s.file_meta = std::move(o.file_meta);
    s.trigram_map = std::move(o.trigram_map);
    s.trigrams = std::move(o.trigrams);
  }
}

void Collection::load_chains() {
  const std::string p = gen_dir_ + "/" + kChainsFile;
  std::string bytes;
  if (!lists_.read_list(kChainsFile, bytes)) fail_corrupt(p, "appended-file list is missing");
  std::vector<uint64_t> docs;
  for (const IndexerState& ix : ix_) docs.push_back(ix.docs());
  links_ = decode_chains(p, bytes, docs);
  if (links_.size() != m_.chain_links)
    fail_corrupt(p, "appended-file count differs from the manifest");
  for (const ChainLink& l : links_) {
    if (chains_.empty() || chains_.back().members.front() != l.root) {
      chains_.emplace_back();
      chains_.back().members.push_back(l.root);
    }
    Chain& ch = chains_.back();
    ch.members.push_back(l.ext);
    if (!l.retract.empty()) ch.retract.push_back(l.retract);
    ch.tokens = l.tokens;
  }
  chain_of_.reserve(links_.size() + chains_.size());
  for (size_t c = 0; c < chains_.size(); c++) {
    for (const DocId& d : chains_[c].members) {
      chain_of_[d] = static_cast<uint32_t>(c);
      IndexerState& ix = ix_[d.indexer];
      if (ix.is_dead(d.seq)) fail_corrupt(p, "appended-file list names a tombstoned document");
      if (ix.chained_bits.empty()) ix.chained_bits.assign((ix.docs() + 63) / 64, 0);
      ix.chained_bits[d.seq >> 6] |= uint64_t{1} << (d.seq & 63);
    }
  }
  // In order from the bitmap: cheaper than sorting the members.
  for (IndexerState& ix : ix_) {
    for (size_t w = 0; w < ix.chained_bits.size(); w++)
      for (uint64_t b = ix.chained_bits[w]; b != 0; b &= b - 1)
        ix.chained.push_back(w * 64 + static_cast<uint64_t>(__builtin_ctzll(b)));
  }
}

void Collection::load_deletes() {
  const std::string p = gen_dir_ + "/" + kDeletesFile;
  std::string bytes;
  if (!lists_.read_list(kDeletesFile, bytes)) fail_corrupt(p, "tombstone file is missing");
  std::vector<uint64_t> docs;
  for (const IndexerState& ix : ix_) docs.push_back(ix.docs());
  DeadSeqs dead = decode_deletes(p, bytes, docs);
  if (count_dead(dead) != m_.deleted) fail_corrupt(p, "tombstone count differs from the manifest");
  for (size_t i = 0; i < ix_.size(); i++) {
    IndexerState& ix = ix_[i];
    ix.dead = std::move(dead[i]);
    if (ix.dead.empty()) continue;
    ix.dead_bits.assign((ix.docs() + 63) / 64, 0);
    for (uint64_t seq : ix.dead) ix.dead_bits[seq >> 6] |= uint64_t{1} << (seq & 63);
  }
}

bool Collection::is_current() const {
  // A record after the last one read holds a newer state.
  return lists_.manifest_unmoved() && !journal_moved(lists_);
}

const TfMeta& Collection::tf_meta(SegmentState& s, uint32_t split) {
  auto& slot = s.tf_meta[split];
  if (!slot) {
    // Any split of the segment already open may share its code tables.
    const TfMeta* like = nullptr;
    for (const auto& other : s.tf_meta) {
      if (other) {
        like = other.get();
        break;
      }
    }
    SegmentPart part = s.parts->open(Part::kTfMeta, split);
    slot = std::make_unique<TfMeta>(std::move(part.name), std::move(part.map), like);
  }
  return *slot;
}

std::string Collection::tf_data_file(SegmentState& s) {
  uint64_t off, len;
  return s.parts->file_of(Part::kTfData, 0, &off, &len);
}

void Collection::read_tf_data(SegmentState& s, std::string& out) {
  const std::string& p = tf_data_name(s);
  if (s.ref.packed) {
    SegmentPart part = s.parts->open(Part::kTfData, 0, &s.ref.tf_data_bytes);
    out.assign(part.map->bytes());
    return;
  }
  if (!read_file(p, out)) fail_io(ENOENT, "read", p);
  if (out.size() != s.ref.tf_data_bytes)
    fail_corrupt(p, "file size differs from the manifest (truncated or overwritten)");
}

std::string_view Collection::region_bytes(SegmentState& s, const TermRef& r) {
  const uint64_t at = r.read_offset(), len = r.read_len();
  if (at < kHeaderSize || len > s.ref.tf_data_bytes || at > s.ref.tf_data_bytes - len)
    fail_corrupt(tf_data_name(s), "dictionary points outside the data file");
  // Mapped as the dictionaries and records are: a hot region is read with
  // no call into the kernel and no copy (a pread per term and segment was
  // a tenth of a frequent term's top-10 once).
  if (!s.tf_map) {
    SegmentPart part = s.parts->open(Part::kTfData, 0, &s.ref.tf_data_bytes);
    check_header(tf_data_name(s), kMagicTfData, part.map->bytes().data(), part.map->bytes().size());
    s.tf_map = std::move(part.map);
  }
  return s.tf_map->bytes().substr(at, len);
}

const FileBlocks& Collection::files(SegmentState& s, std::shared_ptr<const MappedFile> known) {
  if (!s.files) {
    SegmentPart part;
    if (known && known->bytes().size() == s.ref.file_data_bytes) {
      part.name = known->path();
      part.map = std::move(known);
    } else {
      part = s.parts->open(Part::kFileData, 0, &s.ref.file_data_bytes);
    }
    auto fb = std::make_unique<FileBlocks>(part.name, part.map->bytes());
    if (fb->records() != s.ref.docs) fail_corrupt(part.name, "document count differs from the manifest");
    s.file_map = std::move(part.map);
    s.files = std::move(fb);
  }
  return *s.files;
}

const FileMeta& Collection::file_meta(SegmentState& s, uint32_t split) {
  auto& slot = s.file_meta[split];
  if (!slot.meta) {
    SegmentPart part = s.parts->open(Part::kFileMeta, split);
    slot.meta = std::make_unique<FileMeta>(part.name, part.map->bytes(), s.ref.docs);
    slot.map = std::move(part.map);
  }
  return *slot.meta;
}

const PathTrigrams& Collection::trigrams(SegmentState& s) {
  if (!s.trigrams) {
    SegmentPart part = s.parts->open(Part::kPaths, 0);
    auto t = std::make_unique<PathTrigrams>(part.name, part.map->bytes());
    if (t->records() != s.ref.docs) fail_corrupt(part.name, "record count differs from the manifest");
    s.trigram_map = std::move(part.map);
    s.trigrams = std::move(t);
  }
  return *s.trigrams;
}

const GenPaths* Collection::gen_paths() {
  if (gen_paths_tried_) return gen_paths_.get();
  const std::string p = gen_dir_ + "/" + kGenPathsFile;
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) {
    if (errno != ENOENT) fail_io(errno, "stat", p);
    gen_paths_tried_ = true;
    return nullptr;
  }
  auto map = MappedFile::open_any(p);
  auto g = std::make_unique<GenPaths>(p, map->bytes());
  // Segments are named by where they were written; one merged away since
  // is not in the manifest, and its records are not asked for.
  absl::flat_hash_map<std::tuple<uint64_t, uint32_t, uint32_t>, size_t> by_name;
  for (size_t i = 0; i < segs_.size(); i++)
    by_name[{m_.home_of(segs_[i].ref), segs_[i].ref.indexer, file_seg_of(segs_[i].ref)}] = i;
  std::vector<int64_t> covered(segs_.size(), -1);
  for (size_t c = 0; c < g->covered().size(); c++) {
    const CoveredSegment& cs = g->covered()[c];
    auto it = by_name.find({cs.home, cs.indexer, cs.file_seg});
    if (it == by_name.end()) continue;
    const SegmentRef& r = segs_[it->second].ref;
    if (r.docs != cs.docs || r.file_data_bytes != cs.file_bytes || covered[it->second] >= 0)
      fail_corrupt(p, "names a segment unlike the manifest's");
    covered[it->second] = static_cast<int64_t>(c);
  }
  for (size_t i = 0; i < segs_.size(); i++) segs_[i].covered = covered[i];
  gen_paths_map_ = std::move(map);
  gen_paths_ = std::move(g);
  gen_paths_tried_ = true;
  return gen_paths_.get();
}

size_t Collection::heap_bytes() const {
  size_t n = sizeof(*this) + dir_.capacity() + gen_dir_.capacity() + sizeof(Tokenizer) +
             segs_.capacity() * sizeof(SegmentState) + ix_.capacity() * sizeof(IndexerState);
  for (const SegmentState& s : segs_) {
    n += s.tf_dir.capacity() + s.tf_data_path.capacity() +
         s.tf_meta.capacity() * sizeof(s.tf_meta[0]) + s.file_meta.capacity() * sizeof(s.file_meta[0]);
    const TfMeta* first = nullptr;
    for (const auto& m : s.tf_meta) {
      if (!m) continue;
      n += m->heap_bytes(first);
      if (!first) first = m.get();
    }
    if (s.files) n += s.files->heap_bytes();
    if (s.trigrams) n += s.trigrams->heap_bytes();
    for (const auto& m : s.file_meta)
      if (m.meta) n += m.meta->heap_bytes();
  }
  for (const IndexerState& ix : ix_)
    n += ix.segs.capacity() * sizeof(SegmentState*) +
         (ix.first.capacity() + ix.dead.capacity() + ix.dead_bits.capacity() +
          ix.chained.capacity() + ix.chained_bits.capacity()) * sizeof(uint64_t);
  if (gen_paths_) n += sizeof(GenPaths) + gen_paths_->covered().capacity() * sizeof(CoveredSegment);
  n += links_.capacity() * sizeof(ChainLink) + chains_.capacity() * sizeof(Chain) +
       chain_of_.capacity() * (sizeof(DocId) + sizeof(uint32_t) + 1);
  for (const Chain& ch : chains_)
    n += ch.members.capacity() * sizeof(DocId) + ch.retract.capacity() * sizeof(std::string);
  return n;
}

size_t Collection::mapped_bytes() const {
  size_t n = gen_paths_map_ ? gen_paths_map_->bytes().size() : 0;
  for (const SegmentState& s : segs_) {
    if (s.file_map) n += s.file_map->bytes().size();
    if (s.trigram_map) n += s.trigram_map->bytes().size();
    if (s.tf_map) n += s.tf_map->bytes().size();
    for (const auto& m : s.file_meta)
      if (m.map) n += m.map->bytes().size();
    for (const auto& m : s.tf_meta)
      if (m) n += m->mapped_bytes();
  }
  return n;
}

}  // namespace scipis
