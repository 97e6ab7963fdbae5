#include "query/path_pattern.h"

namespace scipis {

PathPattern::PathPattern(std::string_view pattern) : pattern_(pattern) {
  glob_ = pattern.find_first_of("*?[") != std::string_view::npos;
  if (!glob_) return;
  const size_t n = pattern.size();
  for (size_t i = 0; i < n;) {
    const auto c = static_cast<unsigned char>(pattern[i]);
    Piece p;
    if (c == '*') {
      // Consecutive stars are one.
      if (pieces_.empty() || pieces_.back().kind != Piece::kStar) add(Piece::kStar);
      i++;
      continue;
    }
    if (c == '?') {
      add(Piece::kAny);
      i++;
      continue;
    }
    if (c == '[') {
      // Find the closing ']': not the first byte of the set (after an
      // optional '!').
      size_t j = i + 1;
      if (j < n && pattern[j] == '!') j++;
      if (j < n && pattern[j] == ']') j++;
      while (j < n && pattern[j] != ']') j++;
      if (j < n) {
        p.kind = Piece::kSet;
        size_t k = i + 1;
        if (pattern[k] == '!') {
          p.negated = true;
          k++;
        }
        while (k < j) {
          const auto lo = static_cast<unsigned char>(pattern[k]);
          // A range 'a-z' (a '-' first or last in the set is a member).
          if (k + 2 < j && pattern[k + 1] == '-') {
            const auto hi = static_cast<unsigned char>(pattern[k + 2]);
            for (unsigned b = lo; b <= hi; b++) p.set.set(b);
            k += 3;
          } else {
            p.set.set(lo);
            k++;
          }
        }
        pieces_.push_back(std::move(p));
        i = j + 1;
        continue;
      }
      // No closing ']': a literal '['.
    }
    p.byte = c;
    pieces_.push_back(std::move(p));
    i++;
  }
}

bool PathPattern::matches(std::string_view path) const {
  if (!glob_) return path.find(pattern_) != std::string_view::npos;
  return glob_match(path);
}

std::vector<std::string> PathPattern::literal_runs() const {
  std::vector<std::string> runs;
  if (!glob_) {
    if (!pattern_.empty()) runs.push_back(pattern_);
    return runs;
  }
  std::string run;
  for (const Piece& p : pieces_) {
    if (p.kind == Piece::kByte) {
      run.push_back(static_cast<char>(p.byte));
    } else if (!run.empty()) {
      runs.push_back(std::move(run));
      run.clear();
    }
  }
  if (!run.empty()) runs.push_back(std::move(run));
  return runs;
}

// The classic linear-time wildcard match: on a mismatch after a star, the
// star takes one more byte and matching resumes after it.
bool PathPattern::glob_match(std::string_view path) const {
  size_t pi = 0, si = 0;
  size_t star = SIZE_MAX, star_si = 0;
  const size_t np = pieces_.size(), ns = path.size();
  auto one = [&](const Piece& p, unsigned char c) {
    switch (p.kind) {
      case Piece::kByte:
        return p.byte == c;
      case Piece::kAny:
        return true;
      case Piece::kSet:
        return p.set[c] != p.negated;
      case Piece::kStar:
        break;
    }
    return false;
  };
  while (si < ns) {
    if (pi < np && pieces_[pi].kind == Piece::kStar) {
      star = pi++;
      star_si = si;
    } else if (pi < np && one(pieces_[pi], static_cast<unsigned char>(path[si]))) {
      pi++;
      si++;
    } else if (star != SIZE_MAX) {
      pi = star + 1;
      si = ++star_si;
    } else {
      return false;
    }
  }
  while (pi < np && pieces_[pi].kind == Piece::kStar) pi++;
  return pi == np;
}

}  // namespace scipis
