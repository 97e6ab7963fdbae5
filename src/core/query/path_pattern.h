// Path patterns as the spec's "Paths" section defines them (locate's):
// a pattern with no '*', '?' or '[' matches every path containing it;
// any other is a shell glob matched against the whole path, byte by byte,
// as Python's fnmatch.fnmatchcase on bytes does: '*' any bytes ('/'
// included), '?' one byte, '[...]' one byte of a set ('[!...]' not of it;
// a ']' first in the set is a member; 'a-z' a range of byte values, empty
// when reversed; a '[' with no closing ']' is a literal '['). There is no
// escape character: '[*]' matches a '*'.
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace scipis {

class PathPattern {
 public:
  explicit PathPattern(std::string_view pattern);
  bool matches(std::string_view path) const;
  bool is_glob() const { return glob_; }
  // The maximal runs of literal bytes (the whole pattern for a substring
  // pattern; for a glob the bytes between its '*', '?' and sets), in
  // pattern order, none empty: every matching path contains each of them,
  // which is what an index over substrings of paths can look up.
  std::vector<std::string> literal_runs() const;

 private:
  // A glob's pieces: a literal byte, any one byte, a set, or a star.
  struct Piece {
    enum Kind { kByte, kAny, kSet, kStar };
    Kind kind = kByte;
    unsigned char byte = 0;
    bool negated = false;
    std::bitset<256> set;  // kSet's bytes
  };
  void add(Piece::Kind kind) {
    pieces_.emplace_back();
    pieces_.back().kind = kind;
  }
  bool glob_match(std::string_view path) const;
  std::string pattern_;
  bool glob_ = false;
  std::vector<Piece> pieces_;
};

}  // namespace scipis
