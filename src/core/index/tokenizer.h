// The spec's tokenizer: a delimiter table and a lower-case table, applied
// without data-dependent branches per byte; tokens are cut at 255 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scipis {

constexpr size_t kMaxToken = 255;

class Tokenizer {
 public:
  // delimiter[b] != 0 marks byte b as a delimiter.
  explicit Tokenizer(const unsigned char delimiter[256]);

  bool is_token_byte(unsigned char c) const { return is_tok_[c] != 0; }

  // Lower-cases [p, p+n) in place, then calls emit(const char*, size_t) for
  // every token. The block must not start or end inside a token piece.
  template <typename Emit>
  void tokenize_in_place(unsigned char* p, size_t n, Emit&& emit) const {
    for (size_t i = 0; i < n; i++) p[i] = lower_[p[i]];
    size_t i = 0;
    while (i < n) {
      while (i < n && !is_tok_[p[i]]) i++;
      size_t start = i;
      while (i < n && is_tok_[p[i]]) i++;
      size_t len = i - start;
      const char* s = reinterpret_cast<const char*>(p + start);
      while (len > kMaxToken) {
        emit(s, kMaxToken);
        s += kMaxToken;
        len -= kMaxToken;
      }
      if (len) emit(s, len);
    }
  }

  // Where a read block may end: the bytes after the returned offset are a
  // partial token piece (< 255 bytes) to carry into the next block.
  size_t safe_cut(const unsigned char* p, size_t n) const {
    size_t r = n;
    while (r > 0 && is_tok_[p[r - 1]]) r--;
    return r + ((n - r) / kMaxToken) * kMaxToken;
  }

 private:
  unsigned char is_tok_[256];
  unsigned char lower_[256];
};

}  // namespace scipis
