// PathPattern's edge cases, each spelled out with what Python's
// fnmatch.fnmatchcase on bytes answers for it (the oracle of
// test/paths/locate_test.py, which also runs hundreds of random patterns).
#include <gtest/gtest.h>

#include <string>

#include "query/path_pattern.h"

namespace {

bool m(const std::string& pattern, const std::string& path) {
  return scipis::PathPattern(pattern).matches(path);
}

}  // namespace

TEST(PathPattern, SubstringsWithoutGlobBytes) {
  EXPECT_TRUE(m("job0", "/data/job01/out.log"));
  EXPECT_TRUE(m("", "/anything"));
  EXPECT_TRUE(m("/", "/a"));
  EXPECT_FALSE(m("Job0", "/data/job01/out.log"));  // case matters
  EXPECT_TRUE(m("\xc3\xa9", "/d\xc3\xa9j\xc3\xa0"));
  EXPECT_FALSE(m("]x", "/a]y"));
}

TEST(PathPattern, GlobsMatchTheWholePath) {
  EXPECT_TRUE(m("*.log", "/a/b.log"));
  EXPECT_FALSE(m("*.log", "/a/b.log.1"));
  EXPECT_TRUE(m("/a/*", "/a/b/c"));  // '*' crosses '/'
  EXPECT_TRUE(m("/a/?", "/a/b"));
  EXPECT_FALSE(m("/a/?", "/a/bc"));
  EXPECT_FALSE(m("?", "\xc3\xa9"));  // '?' is one byte
  EXPECT_TRUE(m("??", "\xc3\xa9"));
  EXPECT_TRUE(m("***a**", "a"));
  EXPECT_TRUE(m("*", ""));
  EXPECT_FALSE(m("?", ""));
  EXPECT_TRUE(m("*a*b*c", "xaxbxbxc"));
  EXPECT_FALSE(m("*a*b*c", "xaxbxbxcx"));
}

TEST(PathPattern, Sets) {
  EXPECT_TRUE(m("[abc]", "b"));
  EXPECT_FALSE(m("[abc]", "d"));
  EXPECT_TRUE(m("[!abc]", "d"));
  EXPECT_FALSE(m("[!abc]", "a"));
  EXPECT_TRUE(m("[a-c]", "b"));
  EXPECT_TRUE(m("[]a]", "]"));   // ']' first is a member
  EXPECT_TRUE(m("[!]a]", "b"));
  EXPECT_FALSE(m("[!]a]", "]"));
  EXPECT_TRUE(m("[-a]", "-"));   // '-' first or last is a member
  EXPECT_TRUE(m("[a-]", "-"));
  EXPECT_TRUE(m("[a-b-c]", "-"));  // a-b, then '-' and 'c'
  EXPECT_TRUE(m("[a-b-c]", "c"));
  EXPECT_FALSE(m("[z-a]", "m"));  // a reversed range is empty
  EXPECT_FALSE(m("[z-a]", "z"));
  EXPECT_TRUE(m("[!z-a]", "z"));
  EXPECT_TRUE(m("[xz-ab]", "x"));  // its ends are gone too
  EXPECT_FALSE(m("[xz-ab]", "z"));
  EXPECT_TRUE(m("[*]", "*"));
  EXPECT_TRUE(m("[?]", "?"));
  EXPECT_TRUE(m("[[]", "["));
  EXPECT_TRUE(m("[\x80-\xff]", "\xc3"));
  EXPECT_TRUE(m("[^a]", "^"));  // '^' is not a negation
}

TEST(PathPattern, UnclosedBracketsAreLiteral) {
  EXPECT_TRUE(m("[", "["));
  EXPECT_TRUE(m("*[ab", "x[ab"));
  EXPECT_TRUE(m("[]", "[]"));
  EXPECT_TRUE(m("[!]", "[!]"));
  EXPECT_TRUE(m("*b[1*", "/b[1]/f"));
}
