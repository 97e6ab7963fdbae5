// An opened collection index as a query sees it: the manifest, and the
// segments' metadata and document tables read on first use and kept.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/chains.h"
#include "index/gen_paths.h"
#include "index/journal.h"
#include "index/manifest.h"
#include "index/path_trigrams.h"
#include "index/segment_pack.h"
#include "index/segment_reader.h"
#include "index/tokenizer.h"
#include "util/fileio.h"

namespace scipis {

struct SegmentState {
  SegmentRef ref;
  uint64_t seq0 = 0;  // the seq of its first record
  std::string tf_dir;
  std::unique_ptr<PartOpener> parts;  // its files, packed or not
  std::string tf_data_path;  // the name errors give its TF data
  // Its TF data, mapped (a packed segment's: a slice of its pack's
  // mapping) when first read, header checked.
  std::shared_ptr<const MappedFile> tf_map;
  // Spans and blocks of tf_map whose crc a search checked (verified()).
  std::unique_ptr<VerifiedBytes> tf_verified;
  std::vector<std::unique_ptr<TfMeta>> tf_meta;  // by split, lazily
  // The file data, mapped and read in place.
  std::shared_ptr<const MappedFile> file_map;
  std::unique_ptr<FileBlocks> files;
  struct Meta {
    std::shared_ptr<const MappedFile> map;
    std::unique_ptr<FileMeta> meta;
  };
  std::vector<Meta> file_meta;  // by split, lazily
  std::shared_ptr<const MappedFile> trigram_map;
  std::unique_ptr<PathTrigrams> trigrams;
  // Its entry in the generation's PATHS (gen_paths()), or -1.
  int64_t covered = -1;
};

// One indexer's segments; its documents are numbered (seq) across them in
// flush order, segment s holding [first[s], first[s + 1]).
struct IndexerState {
  std::vector<SegmentState*> segs;
  std::vector<uint64_t> first;
  uint64_t docs() const { return first.back(); }
  // Tombstoned seqs, ascending, and the same as a bitmap over docs().
  std::vector<uint64_t> dead;
  std::vector<uint64_t> dead_bits;
  bool is_dead(uint64_t seq) const {
    return !dead_bits.empty() && (dead_bits[seq >> 6] >> (seq & 63) & 1);
  }
  // Members of appended files' chains (index/chains.h), ascending, and
  // the same as a bitmap: a search scores them apart, as their chains.
  std::vector<uint64_t> chained;
  std::vector<uint64_t> chained_bits;
  bool is_chained(uint64_t seq) const {
    return !chained_bits.empty() && (chained_bits[seq >> 6] >> (seq & 63) & 1);
  }
  // Not scored on its own: tombstoned, or part of a chain.
  bool excluded(uint64_t seq) const { return is_dead(seq) || is_chained(seq); }
};

// An appended file's documents, one document to every query.
struct Chain {
  std::vector<DocId> members;  // the root first; the last holds the file's record
  std::vector<std::string> retract;  // a term per link that counts one again
  uint64_t tokens = 0;  // its length: the members' less the retracted
  const DocId& last() const { return members.back(); }
};

class Collection {
 public:
  explicit Collection(std::string dir);
  // Opened on a state already read (read_current): a refresh's or a
  // compaction's, whose manifest it must be. With prev (an older state of
  // the same directory, given up to this one): the segments both name,
  // in the same files, keep what prev had read of them (dictionary
  // tables, document tables, mappings, descriptors), so that a handle
  // reopened after a refresh reads only the refresh's segments afresh.
  // updatable: it may be prev to a later state (a search handle): the
  // identities adoption checks are recorded (a stat per home directory).
  Collection(std::string dir, CurrentState state, Collection* prev = nullptr, bool updatable = false);
  const Manifest& manifest() const { return m_; }
  const std::string& dir() const { return dir_; }
  const std::string& gen_dir() const { return gen_dir_; }
  // The journal's records applied on top of the generation's manifest.
  uint64_t journal_records() const { return lists_.records; }
  // A list of the generation as its journal left it (CurrentState::read_list).
  bool read_list(const char* name, std::string& out) const { return lists_.read_list(name, out); }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  bool is_current() const;

  const TfMeta& tf_meta(SegmentState& s, uint32_t split);
  // The segment's file data, mapped on first use; with known, those bytes
  // (read before, of the same segment) instead of its file's.
  const FileBlocks& files(SegmentState& s, std::shared_ptr<const MappedFile> known = nullptr);
  const FileMeta& file_meta(SegmentState& s, uint32_t split);
  // The segment's path trigram index, mapped on first use.
  const PathTrigrams& trigrams(SegmentState& s);
  // The generation's one index over many segments' paths, mapped on
  // first use (segments' covered set then), or null: none written.
  const GenPaths* gen_paths();
  // One term's posting region in a segment's TF data, in place (valid
  // while the collection is).
  std::string_view region_bytes(SegmentState& s, const TermRef& r);
  // What of s's TF data searches have checked, made when first asked.
  VerifiedBytes* verified(SegmentState& s) {
    if (!s.tf_verified) s.tf_verified = std::make_unique<VerifiedBytes>();
    return s.tf_verified.get();
  }
  // The whole of a segment's TF data, and the name its errors give.
  void read_tf_data(SegmentState& s, std::string& out);
  const std::string& tf_data_name(const SegmentState& s) const { return s.tf_data_path; }
  std::string tf_meta_name(const SegmentState& s, uint32_t split) const {
    return s.parts->name(Part::kTfMeta, split);
  }
  // The file that holds a segment's TF data (its pack, when packed).
  std::string tf_data_file(SegmentState& s);
  IndexerState& indexer(uint32_t i) { return ix_[i]; }
  // Record rec of segment s is tombstoned.
  bool dead(const SegmentState& s, uint64_t rec) const {
    return ix_[s.ref.indexer].is_dead(s.seq0 + rec);
  }
  const std::vector<Chain>& chains() const { return chains_; }
  // As the generation's file holds them, for a refresh to carry over.
  const std::vector<ChainLink>& chain_links() const { return links_; }
  // The chain a document is a member of, or -1.
  int64_t chain_of(uint32_t indexer, uint64_t seq) const {
    if (!ix_[indexer].is_chained(seq)) return -1;
    auto it = chain_of_.find(DocId{indexer, seq});
    return it == chain_of_.end() ? -1 : static_cast<int64_t>(it->second);
  }
  // Record rec of segment s is not a file to list: tombstoned, or a chain
  // member other than its last (which lists the file).
  bool hidden(const SegmentState& s, uint64_t rec) const {
    const uint64_t seq = s.seq0 + rec;
    if (dead(s, rec)) return true;
    const int64_t c = chain_of(s.ref.indexer, seq);
    return c >= 0 && !(chains_[static_cast<size_t>(c)].last() == DocId{s.ref.indexer, seq});
  }
  // A listed record's length: its chain's when it ends one.
  uint64_t tokens_of(uint32_t indexer, uint64_t seq, uint64_t own) const {
    const int64_t c = chain_of(indexer, seq);
    return c < 0 ? own : chains_[static_cast<size_t>(c)].tokens;
  }
  // What this holds on the backend's heap; the segment files it maps are
  // shared through the page cache and counted apart.
  size_t heap_bytes() const;
  size_t mapped_bytes() const;
  std::vector<SegmentState>& segments() { return segs_; }
  size_t indexer_count() const { return ix_.size(); }

 private:
  std::string dir_, gen_dir_;
  Manifest m_;
  std::unique_ptr<Tokenizer> tokenizer_;
  // Its lists (its manifest moved to m_), and the journal's size when read.
  CurrentState lists_;
  void load_deletes();
  void load_chains();
  void adopt(Collection& prev);
  // Each home generation directory's identity when this was opened: a
  // directory removed and made again under the same name is not the one
  // whose files an older state read.
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, uint64_t>> home_ids_;
  std::vector<ChainLink> links_;
  std::vector<Chain> chains_;
  absl::flat_hash_map<DocId, uint32_t> chain_of_;
  std::vector<SegmentState> segs_;
  std::vector<IndexerState> ix_;
  bool gen_paths_tried_ = false;
  std::shared_ptr<const MappedFile> gen_paths_map_;
  std::unique_ptr<GenPaths> gen_paths_;
};

}  // namespace scipis
