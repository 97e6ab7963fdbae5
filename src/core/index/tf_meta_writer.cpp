#include "index/tf_meta_writer.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "index/postings_codec.h"
#include "index/segment_format.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis {

size_t hot_bound(size_t terms) { return terms / kHotShare; }

size_t hot_bytes_bound(size_t terms, size_t term_bytes) {
  return std::min(term_bytes, hot_bound(terms) * kMaxTermBytes) + hot_dir_bytes(hot_bound(terms));
}

size_t meta_reserve(size_t terms, size_t term_bytes) {
  // Head, code tables; per group its index entry and a share of a chunk
  // crc; the hot terms, each with a share of a chunk crc, and their bytes.
  const size_t groups = (terms + kTermGroup - 1) / kTermGroup;
  return kHeaderSize + kTfMetaHead + kCodeTableBytes + groups * (kTermGroupEntry + 4) +
         DictEncoder::bound(terms, term_bytes) + hot_bound(terms) * (kHotEntry + 4) +
         hot_bytes_bound(terms, term_bytes);
}

size_t data_reserve(size_t terms, size_t postings) {
  // max_region_bytes summed over the terms: each term's blocks round up
  // by one (49 bytes of skip entry, widths and crc), its df and crc take 14.
  return kHeaderSize + terms * (14 + 49) + postings * (8 + 4) + postings / kBlockPostings * 49;
}

void seal_tf_data(OutBuffer& data, size_t bytes, uint64_t regions) {
  data.trim(bytes);
  FileHeader h;
  h.count = regions;
  std::string header;
  put_header(header, kMagicTfData, h);
  std::memcpy(data.data(), header.data(), kHeaderSize);
}

size_t TfMetaWriter::held_bound(size_t terms, size_t term_bytes, size_t splits) {
  // Groups (three words each, as the index held before this writer: two
  // for the group, one for the splits' bookkeeping; a split's last group
  // may be short) and hot terms, each vector at most twice what it holds,
  // and the notes.
  return 2 * (terms / kTermGroup + splits) * 3 * sizeof(uint64_t) + 2 * hot_bound(terms) * sizeof(HotTerm) +
         2 * hot_bytes_bound(terms, term_bytes) + 2 * DictEncoder::notes_bound(terms, term_bytes);
}

void TfMetaWriter::reset(size_t terms, size_t term_bytes) {
  dict_.reset(terms, term_bytes);
  group_data_.clear();
  hot_.clear();
  hot_bytes_.clear();
  split_group0_.clear();
  split_hot0_.clear();
}

void TfMetaWriter::begin_split() {
  split_group0_.push_back(group_data_.size() / 2);
  split_hot0_.push_back(hot_.size());
}

void TfMetaWriter::add_group(uint64_t data_offset) {
  group_data_.push_back(data_offset);
  group_data_.push_back(0);
}

void TfMetaWriter::set_small_bytes(uint64_t bytes) { group_data_.back() = bytes; }

void TfMetaWriter::add_hot(std::string_view term, uint64_t offset, uint32_t len, uint32_t df, uint32_t group) {
  const size_t at = hot_bytes_.size();
  hot_bytes_.insert(hot_bytes_.end(), term.begin(), term.end());
  hot_.push_back(HotTerm{offset,
                         static_cast<uint32_t>(dict_hash(std::string_view(hot_bytes_.data() + at, term.size())) >> 32),
                         len, df, group, static_cast<uint32_t>(at), static_cast<uint8_t>(term.size())});
}

void TfMetaWriter::finish(size_t splits, const size_t* counts, const size_t* term_bytes, uint64_t base_seq,
                          std::vector<OutBuffer>& metas) {
  if (split_group0_.size() != splits) fail(SCIPIS_E_INTERNAL, "TF meta writer saw %zu splits of %zu",
                                           split_group0_.size(), splits);
  // One code for every split of the segment (they are hash ranges of the
  // same terms, alike in their statistics): a query's lookups in any split
  // of a segment then decode with one set of tables, which stays in cache.
  char tables[kCodeTableBytes];
  if (dict_.finish_counts(tables) != tables + kCodeTableBytes)
    fail(SCIPIS_E_INTERNAL, "TF-IDF dictionary code tables have the wrong size");
  split_group0_.push_back(group_data_.size() / 2);
  split_hot0_.push_back(hot_.size());
  metas.resize(splits);  // buffers handed in are reused
  for (size_t s = 0; s < splits; s++) {
    const size_t count = counts[s];
    const size_t gbase = split_group0_[s], groups = split_group0_[s + 1] - gbase;
    if (groups != (count + kTermGroup - 1) / kTermGroup)
      fail(SCIPIS_E_INTERNAL, "TF meta writer: %zu groups for %zu terms", groups, count);
    OutBuffer& m = metas[s];
    m.reset(meta_reserve(count, term_bytes[s]));
    char* const body = m.data() + kHeaderSize;
    // Head and tables, the group index (filled as the groups are coded),
    // its chunks' crcs, the coded groups.
    char* const head = write_u32(write_u64(body, base_seq), static_cast<uint32_t>(groups));
    std::memcpy(head + 16, tables, kCodeTableBytes);
    char* const index = head + 16 + kCodeTableBytes;
    const size_t chunks = (groups + kIndexChunk - 1) / kIndexChunk;
    char* const entries = index + groups * kTermGroupEntry + 4 * chunks;
    char* w = entries;
    for (size_t g = 0; g < groups; g++) {
      char* const end = dict_.encode_group(w, std::min(kTermGroup, count - g * kTermGroup));
      if (static_cast<size_t>(w - entries) > UINT32_MAX)
        fail(SCIPIS_E_INTERNAL, "TF-IDF index split exceeds 4 GiB of dictionary");
      char* e = index + g * kTermGroupEntry;
      e = write_u64(e, dict_.group_key());
      e = write_u32(e, static_cast<uint32_t>(w - entries));
      e = write_u32(e, crc32c(w, static_cast<size_t>(end - w)));
      e = write_u64(e, group_data_[2 * (gbase + g)]);
      write_u32(e, static_cast<uint32_t>(group_data_[2 * (gbase + g) + 1]));
      w = end;
    }
    for (size_t c = 0; c < chunks; c++) {
      const size_t n = std::min(kIndexChunk, groups - c * kIndexChunk);
      write_u32(index + groups * kTermGroupEntry + 4 * c,
                crc32c(index + c * kIndexChunk * kTermGroupEntry, n * kTermGroupEntry));
    }
    write_u64(head, static_cast<uint64_t>(w - entries));
    w = write_hot(w, split_hot0_[s], split_hot0_[s + 1], head + 8);
    m.trim(static_cast<size_t>(w - m.data()));
    FileHeader mh;
    mh.aux = static_cast<uint32_t>(s);
    mh.count = count;
    mh.body_crc = crc32c(body, kTfMetaHead + kCodeTableBytes);
    std::string header;
    put_header(header, kMagicTfMeta, mh);
    std::memcpy(m.data(), header.data(), kHeaderSize);
  }
}

char* TfMetaWriter::write_hot(char* out, size_t from, size_t to, char* head) {
  auto term = [&](const HotTerm& h) { return std::string_view(hot_bytes_.data() + h.bytes_at, h.term_len); };
  std::sort(hot_.begin() + static_cast<ptrdiff_t>(from), hot_.begin() + static_cast<ptrdiff_t>(to),
            [&](const HotTerm& a, const HotTerm& b) {
              return a.hash != b.hash ? a.hash < b.hash : term(a) < term(b);
            });
  const size_t n = to - from, chunks = (n + kIndexChunk - 1) / kIndexChunk;
  char* const entries = out;
  char* const crcs = entries + n * kHotEntry;
  char* const bytes = crcs + 4 * chunks;
  char* b = bytes;
  for (size_t i = 0; i < n; i++) {
    const HotTerm& h = hot_[from + i];
    char* e = write_u64(write_u32(entries + i * kHotEntry, h.hash), h.offset);
    write_u32(write_u32(write_u32(write_u32(e, h.len), h.df), h.group), static_cast<uint32_t>(b - bytes));
    const std::string_view t = term(h);
    std::memcpy(b, t.data(), t.size());
    b += t.size();
  }
  for (size_t c = 0; c < chunks; c++) {
    const size_t i = c * kIndexChunk, k = std::min(kIndexChunk, n - i);
    const size_t at = get_u32(reinterpret_cast<const unsigned char*>(entries) + i * kHotEntry + 24);
    const size_t end = i + k < n ? get_u32(reinterpret_cast<const unsigned char*>(entries) + (i + k) * kHotEntry + 24)
                                 : static_cast<size_t>(b - bytes);
    write_u32(crcs + 4 * c, crc32c(bytes + at, end - at, crc32c(entries + i * kHotEntry, k * kHotEntry)));
  }
  write_u32(write_u32(head, static_cast<uint32_t>(n)), static_cast<uint32_t>(b - bytes));
  if (n == 0) return b;
  // The directory: each bucket's first entry (entries ascend by hash, so
  // a bucket's are consecutive).
  const size_t buckets = hot_buckets(n);
  const unsigned bits = hot_bucket_bits(buckets);
  char* const dir = b;
  size_t i = 0;
  for (size_t k = 0; k < buckets; k++) {
    while (i < n && (bits ? hot_[from + i].hash >> (32 - bits) : 0) < k) i++;
    b = write_u32(b, static_cast<uint32_t>(i));
  }
  b = write_u32(b, static_cast<uint32_t>(n));
  return write_u32(b, crc32c(dir, static_cast<size_t>(b - dir)));
}

}  // namespace scipis
