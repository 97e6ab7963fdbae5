// A generation's appended files. A file that only grew since it was
// indexed has just its new bytes indexed, as a further document (a link)
// of a chain whose first document (the root) is the file's first indexed
// version; the chain is one document to every query: its term frequencies
// and length are its members' summed, less what a link counts again (the
// token piece the old end cut, which the link reads whole). The chain's
// last member carries the file's current record. Compaction folds chains
// into single documents.
// File `appended` in the generation: a header (count: links), then per
// link u32 ext indexer, u64 ext seq, u32 root indexer, u64 root seq, u64
// the chain's tokens with this link, u8 length and the bytes of the term
// the link retracts (none: 0). A chain's links follow one another, oldest
// first; no document is in two chains.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace scipis {

inline const char* kChainsFile = "appended";
inline constexpr char kMagicChains[] = "SCIPISAP";

struct DocId {
  uint32_t indexer = 0;
  uint64_t seq = 0;
  bool operator==(const DocId&) const = default;
  auto operator<=>(const DocId&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const DocId& d) {
    return H::combine(std::move(h), d.indexer, d.seq);
  }
};

struct ChainLink {
  DocId ext, root;
  uint64_t tokens = 0;  // the chain's length with this link
  std::string retract;  // a term the link counts again (at most one piece)
};

// links: grouped by root, each chain's oldest first.
std::string encode_chains(const std::vector<ChainLink>& links);
// Checks the file whole: header, checksum, bounds (every seq below its
// indexer's documents, docs[i]), grouping, and that no document is in two
// chains; a corruption error naming path otherwise.
std::vector<ChainLink> decode_chains(const std::string& path, const std::string& bytes,
                                     const std::vector<uint64_t>& docs);

}  // namespace scipis
