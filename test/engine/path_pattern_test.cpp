// PathPattern's edge cases, each spelled out with what Python's
// fnmatch.fnmatchcase on bytes answers for it (the oracle of
// test/paths/locate_test.py, which also runs hundreds of random patterns).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "query/path_pattern.h"

namespace {

struct Case {
  std::string pattern, path;
  bool match;
};

void check(const std::vector<Case>& cases) {
  for (const Case& c : cases)
    EXPECT_EQ(scipis::PathPattern(c.pattern).matches(c.path), c.match)
        << "pattern \"" << c.pattern << "\" path \"" << c.path << "\"";
}

}  // namespace

TEST(PathPattern, SubstringsWithoutGlobBytes) {
  check({
      {"job0", "/data/job01/out.log", true},
      {"", "/anything", true},
      {"/", "/a", true},
      {"Job0", "/data/job01/out.log", false},  // case matters
      {"\xc3\xa9", "/d\xc3\xa9j\xc3\xa0", true},
      {"]x", "/a]y", false},
  });
}

TEST(PathPattern, GlobsMatchTheWholePath) {
  check({
      {"*.log", "/a/b.log", true},
      {"*.log", "/a/b.log.1", false},
      {"/a/*", "/a/b/c", true},  // '*' crosses '/'
      {"/a/?", "/a/b", true},
      {"/a/?", "/a/bc", false},
      {"?", "\xc3\xa9", false},  // '?' is one byte
      {"??", "\xc3\xa9", true},
      {"***a**", "a", true},
      {"*", "", true},
      {"?", "", false},
      {"*a*b*c", "xaxbxbxc", true},
      {"*a*b*c", "xaxbxbxcx", false},
  });
}

TEST(PathPattern, Sets) {
  check({
      {"[abc]", "b", true},
      {"[abc]", "d", false},
      {"[!abc]", "d", true},
      {"[!abc]", "a", false},
      {"[a-c]", "b", true},
      {"[]a]", "]", true},   // ']' first is a member
      {"[!]a]", "b", true},
      {"[!]a]", "]", false},
      {"[-a]", "-", true},   // '-' first or last is a member
      {"[a-]", "-", true},
      {"[a-b-c]", "-", true},  // a-b, then '-' and 'c'
      {"[a-b-c]", "c", true},
      {"[z-a]", "m", false},  // a reversed range is empty
      {"[z-a]", "z", false},
      {"[!z-a]", "z", true},
      {"[xz-ab]", "x", true},  // its ends are gone too
      {"[xz-ab]", "z", false},
      {"[*]", "*", true},
      {"[?]", "?", true},
      {"[[]", "[", true},
      {"[\x80-\xff]", "\xc3", true},
      {"[^a]", "^", true},  // '^' is not a negation
  });
}

TEST(PathPattern, UnclosedBracketsAreLiteral) {
  check({
      {"[", "[", true},
      {"*[ab", "x[ab", true},
      {"[]", "[]", true},
      {"[!]", "[!]", true},
      {"*b[1*", "/b[1]/f", true},
  });
}
