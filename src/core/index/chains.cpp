#include "index/chains.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "index/segment_format.h"
#include "index/tokenizer.h"
#include "util/bytes.h"
#include "util/error.h"

namespace scipis {

std::string encode_chains(const std::vector<ChainLink>& links) {
  std::string body;
  for (const ChainLink& l : links) {
    put_u32(body, l.ext.indexer);
    put_u64(body, l.ext.seq);
    put_u32(body, l.root.indexer);
    put_u64(body, l.root.seq);
    put_u64(body, l.tokens);
    body.push_back(static_cast<char>(l.retract.size()));
    body += l.retract;
  }
  return sealed_file(kMagicChains, links.size(), body);
}

std::vector<ChainLink> decode_chains(const std::string& path, const std::string& bytes,
                                     const std::vector<uint64_t>& docs) {
  const FileHeader h = check_header(path, kMagicChains, bytes.data(), bytes.size());
  const std::string_view body(bytes.data() + kHeaderSize, bytes.size() - kHeaderSize);
  constexpr size_t kLinkBytes = 4 + 8 + 4 + 8 + 8 + 1;
  if (h.count > body.size() / kLinkBytes) fail_corrupt(path, "appended-file list has a bad length");
  check_body(path, h, body);
  Cursor c(body.data(), body.size());
  std::vector<ChainLink> links;
  links.reserve(h.count);
  // Every root is a member too: one bitmap per indexer finds a document
  // named twice (a hash set of them was most of a search handle's open);
  // a set where the bitmap would be far larger than the list (its
  // documents as the manifest counts them, which may lie).
  const uint64_t bitmap_words_max = 8 * h.count + 1024;
  std::vector<std::vector<uint64_t>> seen_bits(docs.size());
  absl::flat_hash_set<DocId> seen_set;
  auto first_time = [&](const DocId& d) {
    if ((docs[d.indexer] + 63) / 64 > bitmap_words_max) return seen_set.insert(d).second;
    auto& bits = seen_bits[d.indexer];
    if (bits.empty()) bits.assign((docs[d.indexer] + 63) / 64, 0);
    uint64_t& w = bits[d.seq >> 6];
    const uint64_t bit = uint64_t{1} << (d.seq & 63);
    if (w & bit) return false;
    w |= bit;
    return true;
  };
  auto known = [&](const DocId& d) { return d.indexer < docs.size() && d.seq < docs[d.indexer]; };
  for (uint64_t i = 0; i < h.count; i++) {
    ChainLink l;
    l.ext.indexer = c.u32();
    l.ext.seq = c.u64();
    l.root.indexer = c.u32();
    l.root.seq = c.u64();
    l.tokens = c.u64();
    const std::string_view len = c.bytes(1);
    const size_t n = len.empty() ? 0 : static_cast<unsigned char>(len[0]);
    const std::string_view t = c.bytes(n);
    if (!c.ok()) fail_corrupt(path, "appended-file list has a bad length");
    if (n > kMaxToken) fail_corrupt(path, "appended-file list names a term too long");
    l.retract.assign(t);
    if (!known(l.ext) || !known(l.root)) fail_corrupt(path, "appended-file list names an unknown document");
    const bool same_chain = !links.empty() && links.back().root == l.root;
    // A root starts one chain, and no document is a member twice.
    if ((!same_chain && !first_time(l.root)) || !first_time(l.ext))
      fail_corrupt(path, "appended-file list names a document twice");
    links.push_back(std::move(l));
  }
  if (c.left() != 0) fail_corrupt(path, "appended-file list has a bad length");
  return links;
}

}  // namespace scipis
