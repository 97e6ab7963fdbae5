// A term's slot in an in-memory index's open-addressing table: the
// collections' TfIdfIndex and the access method's MemTerms.
#pragma once

#include <cstdint>

namespace scipis {

// A term and its append cache. Terms of up to 8 bytes are their first word
// (the tag holds the length, so the zero padding is unambiguous even
// for terms with NUL bytes, which the whitespace tokenizer keeps); longer
// ones keep their bytes in the arena. A lookup of a known term reads this
// slot alone.
struct TermSlot {
  uint64_t prefix;  // token_prefix of the term
  uint32_t tag;     // hash bits above the length (low 8 bits); 0: empty
  uint32_t df;
  // The document being counted (relative seq) and its count so far;
  // moved to the TF arrays when another document starts.
  uint32_t cur_seq;
  uint32_t cur_tf;
  uint32_t tail;   // arena unit of the last TF array (postings chunk), 0: none
  uint32_t bytes;  // arena unit of the term's bytes when longer than 8
  uint32_t len() const { return tag & 0xffu; }
};
static_assert(sizeof(TermSlot) == 32, "two slots per cache line");

}  // namespace scipis
