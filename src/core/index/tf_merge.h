// A merge of consecutive segments' TF parts into one segment's, without an
// in-memory table: each split's dictionaries are read in step, a group at
// a time (they are sorted by bytes), and a term's postings are its
// segments' in order, a document that a flush cut (in two segments, under
// one seq) summed; one pass. Memory: the dictionary's notes and a df per
// term of the output (and the split's regions that may be hot), not a
// table slot per term, so that a merge is not cut into as
// many segments as it reads (a table holds a quarter of the log corpus's
// 4.6 million terms). The bytes are those TfIdfIndex::serialise writes
// for the same postings (both write through TfMetaWriter).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "index/out_buffer.h"
#include "index/path_index.h"
#include "index/segment_reader.h"
#include "index/tf_meta_writer.h"

namespace scipis {

// One input segment: its splits' dictionaries and where its regions are.
struct TfMergeInput {
  std::vector<const TfMeta*> splits;
  std::string data_path;  // named in errors
  uint64_t data_bytes = 0;  // of its TF data file: the merged one's first size
  // The bytes a term's TermRef names (read_offset, read_len) checked and
  // cut to its region (region_in).
  std::function<std::string_view(const TermRef&)> region;
};

// Writes the merged TF data into data and the splits into metas (through
// meta, whose memory is reused). Seqs lie below seq_limit; docs, when
// given, knows the merged documents' lengths (block bounds).
void merge_tf(const std::vector<TfMergeInput>& in, size_t splits, uint64_t seq_limit, const PathIndex* docs,
              OutBuffer& data, std::vector<OutBuffer>& metas, TfMetaWriter& meta);

}  // namespace scipis
