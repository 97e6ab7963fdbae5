// The TF dictionary's groups (format 5): up to kTermGroup terms of one
// split in byte order, each front-coded against the one before it (the
// first coded whole), with its posting reference, Huffman-coded with codes
// made for the whole flush (format 8; its splits are hash ranges of the
// same terms, so one code fits them all, and a reader keeps one set of
// decoding tables per segment in cache instead of one per split).
//
// Every field has its own code: the shared prefix length, the suffix
// length, each suffix byte (by the class of the byte before it: digit,
// hex letter, other letter, '_', high byte, capital, other, or term
// start), and each byte of the code and x varints (by its place in the
// varint, and for x by what it is). Sorted log terms are mostly numbers
// and ids whose fields each take few values, so separate codes take them
// to near their entropy; a whole-group compressor (DEFLATE) stays a third
// larger and costs a table build for every lookup.
//
// Code tables: for each of kContexts contexts, 256 code lengths (0: the
// byte never occurs) as nibbles, 128 bytes. A group: its entries as one
// bit string (least significant bit first, codes bit-reversed as in
// DEFLATE), padded to a byte. Entry: prefix, suffix length, suffix bytes,
// then the varints code and x; code odd: one document, tf = code >> 1,
// x = its seq - the file's base seq; code even: df = code >> 1 >= 2,
// x = the posting region's length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "index/out_buffer.h"
#include "util/mem_account.h"

namespace scipis {

constexpr size_t kTermGroup = 16;
constexpr size_t kMaxTermBytes = 255;
constexpr int kMaxCodeBits = 15;
static_assert(kMaxCodeBits <= 16, "slow_symbol reverses two bytes");

enum DictContext : uint8_t {
  kCtxPrefix = 0,
  kCtxSuffixLen = 1,
  kCtxChar = 2,    // + class of the byte before, 8 classes
  kCtxCode = 10,   // + min(varint byte index, 2)
  kCtxSeq = 13,    // x of a one-document term
  kCtxRegion = 16, // x of a term with a region
  kContexts = 19,
};
constexpr size_t kCodeTableBytes = kContexts * 128;

// Huffman code lengths, at most kMaxCodeBits, of the 256 symbols counted in
// freq (0: unused; a lone symbol gets 1).
void code_lengths(const uint32_t* freq, uint8_t* len);

// Builds a split's codes from its entries, then encodes its groups.
class DictEncoder {
 public:
  // Forgets the last split; the next has these terms and term bytes.
  void reset(size_t terms, size_t term_bytes);
  // Notes one entry of the split, in order, and counts its symbols; a
  // group's first entry has first set. The last term's bytes must stay
  // where they are until the next add (the next entry shares its prefix).
  void add(std::string_view term, bool first, uint64_t code, uint64_t x);
  // Makes the codes from the counts; writes the tables (kCodeTableBytes)
  // at out and returns their end.
  char* finish_counts(char* out);
  // Codes the next group noted, of n entries, at out; returns the end of
  // its bytes. It may write up to 8 bytes past that end (bound counts
  // them), which whatever follows overwrites.
  char* encode_group(char* out, size_t n);
  // The first 8 bytes of the last group's first term, big-endian, zero
  // padded: the key a reader's binary search compares in place.
  uint64_t group_key() const { return group_key_; }
  // The most bytes groups of these terms take: each entry is at most 22
  // codes (lengths, two varints) and one per byte of its term, each code
  // at most kMaxCodeBits; each group pads to a byte; 8 bytes of slack.
  static size_t bound(size_t terms, size_t term_bytes) {
    return (symbols_bound(terms, term_bytes) * kMaxCodeBits + 7) / 8 + terms / kTermGroup + 1 + 8;
  }
  // The most bytes the notes of these terms take: a symbol (two bytes) per
  // code, and a group's start.
  static size_t notes_bound(size_t terms, size_t term_bytes) {
    return symbols_bound(terms, term_bytes) * sizeof(uint16_t) + (terms / kTermGroup + 1) * sizeof(GroupNote);
  }

 private:
  // A group's notes: where its symbols start, its entries, its key.
  struct GroupNote {
    uint64_t key;
    uint32_t entries;
    size_t first_symbol;
  };
  // The most symbols entries of these terms have (as bound counts codes).
  static size_t symbols_bound(size_t terms, size_t term_bytes) { return 22 * terms + term_bytes; }
  uint32_t freq_[kContexts][256] = {};  // 32-bit: they stay in L1
  uint64_t counted_ = 0;  // since the counts were last halved
  // Per symbol (context << 8 | byte): its bit-reversed code, and its
  // length above bit 16.
  uint32_t code_[kContexts * 256] = {};
  // Notes: each entry's symbols (context << 8 | byte) as it will be coded,
  // so that coding a group is one loop of table lookups; per group its
  // first symbol. Written before read, never zero-filled: a flush's notes
  // are tens of MiB, and a vector's growth cleared them on fresh pages
  // every flush.
  OutBuffer notes_;
  size_t symbols_ = 0;  // noted
  std::vector<GroupNote, mem::Accounted<GroupNote>> groups_;
  std::string_view prev_;  // the last term noted
  size_t read_group_ = 0;  // the next group encode_group codes
  uint64_t group_key_ = 0;
};

// One decoded entry.
struct DictEntry {
  size_t len;  // of the term
  uint64_t code;
  uint64_t x;
  size_t shared;  // bytes shared with the entry before it
  // Whether the term sorts after the entry before it (a group's first:
  // true). The writer shares every byte two terms have in common, so the
  // first byte after them decides; a reader compares no strings for it.
  bool after;
};

// A split's codes, read back; decodes entries of its groups.
class DictDecoder {
 public:
  // Reads the tables at p (kCodeTableBytes); false when they are not a
  // valid prefix code.
  bool load(const char* p);
  // Whether the tables at p (kCodeTableBytes) are the ones loaded.
  bool same_tables(const char* p) const { return std::memcmp(raw_, p, kCodeTableBytes) == 0; }
  size_t heap_bytes() const { return sizeof(*this) + tables_.capacity() * sizeof(tables_[0]); }

  // Reads one group's entries in order.
  class Reader {
   public:
    Reader(const DictDecoder& d, const char* p, const char* end);
    // The next entry into term (which holds the previous term; len is 0
    // for a group's first); false when it is malformed.
    bool next(char* term, size_t& len, DictEntry& e);
    // Whether the group's bits ended where they should (all read, within
    // the last byte).
    bool at_end() const;

   private:
    bool symbol(int ctx, unsigned& sym) {
      if (bits_ < kMaxCodeBits) refill();
      const uint16_t f = d_.tables_[ctx].fast[acc_ & ((1u << kFastBits) - 1)];
      if (__builtin_expect(f == 0, 0)) return slow_symbol(ctx, sym);
      sym = f & 0xffu;
      acc_ >>= f >> 8;
      bits_ -= f >> 8;
      // The padding is the last bits_ read; consuming any of it overran.
      return pad_ <= bits_;
    }
    bool slow_symbol(int ctx, unsigned& sym);
    // Most varints of a dictionary are one byte: that case inline.
    bool varint(int ctx, uint64_t& v) {
      unsigned b;
      if (!symbol(ctx, b)) return false;
      if (__builtin_expect(!(b & 0x80), 1)) {
        v = b;
        return true;
      }
      return varint_rest(ctx, b, v);
    }
    bool varint_rest(int ctx, unsigned first, uint64_t& v);
    void refill();
    const DictDecoder& d_;
    const unsigned char* p_;
    const unsigned char* end_;
    uint64_t acc_ = 0;
    unsigned bits_ = 0;
    unsigned pad_ = 0;  // zero bits added past the end
  };

 private:
  static constexpr int kFastBits = 8;
  struct Table {
    // kFastBits-bit prefixes of codes: symbol | length << 8, 0: longer.
    uint16_t fast[1 << kFastBits];
    uint16_t count[kMaxCodeBits + 1];  // codes of each length
    uint16_t first_index[kMaxCodeBits + 1];
    uint16_t first_code[kMaxCodeBits + 1];  // canonical, first bit highest
    uint8_t symbols[256];  // by (length, symbol)
  };
  std::vector<Table> tables_;
  char raw_[kCodeTableBytes] = {};
};

// The class of a byte before a suffix byte, for its context; the term's
// start has class 0.
struct CharClasses {
  uint8_t of[256];
  constexpr CharClasses() : of() {
    for (int c = 0; c < 256; c++)
      of[c] = c >= '0' && c <= '9'   ? 1
              : c >= 'a' && c <= 'f' ? 2
              : c >= 'g' && c <= 'z' ? 3
              : c == '_'             ? 4
              : c >= 0x80            ? 5
              : c >= 'A' && c <= 'Z' ? 6
                                     : 7;
  }
};
inline constexpr CharClasses kCharClass;
inline unsigned char_context(const char* term, size_t i) {
  return kCtxChar + (i ? kCharClass.of[static_cast<unsigned char>(term[i - 1])] : 0u);
}

}  // namespace scipis
