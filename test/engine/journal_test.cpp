// The generation's journal (index/journal.h): records read back as
// written, a torn last record is unseen (the state before it), damage in
// an earlier record's metadata is an error, small refreshes commit into it with answers equal to the
// brute-force oracle's, a crash's torn tail is written over by the next
// refresh (which leaves a zero header after its record), and a full journal or a merge moves on to a new generation
// whose live packs stay where they are.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "index/deletes.h"
#include "index/chains.h"
#include "index/journal.h"
#include "index/manifest.h"
#include "index/segment_format.h"
#include "query/collection.h"
#include "refresh_util.h"
#include "util/bytes.h"
#include "util/error.h"
#include "util/fileio.h"

using namespace refresh_util;
using scipis::CurrentState;
using scipis::JournalKind;
using scipis::JournalPart;
using scipis::Manifest;

namespace {

// Writes bytes over the file's at off (a crash's torn record).
void write_at(const std::string& path, uint64_t off, const std::string& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(off));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Whether the file holds only zeros from off on (as written ahead of records).
bool zeros_from(const std::string& path, uint64_t off) {
  const std::string all = testutil::read(path);
  return off <= all.size() && std::all_of(all.begin() + static_cast<std::ptrdiff_t>(off), all.end(),
                                          [](char c) { return c == 0; });
}

Manifest manifest_with(uint64_t generation, uint64_t files) {
  Manifest m;
  m.generation = generation;
  m.indexers = 1;
  m.files = files;
  return m;
}

CurrentState state_of(uint64_t generation) {
  CurrentState st;
  st.m = manifest_with(generation, 0);
  return st;
}

// Record n of generation 5: the manifest (files = n), a list that changes
// each time, one that is gone from record 2 on, one only record 2 names,
// and a pack.
std::string record(uint64_t n, uint64_t start) {
  const std::string manifest = manifest_with(5, n).encode();
  const std::string dead = "tombstones " + std::to_string(n), pack(5000 + n, 'p');
  std::vector<JournalPart> parts{{JournalKind::kPack, "", true, pack},
                                 {JournalKind::kList, scipis::kDeletesFile, true, dead},
                                 {JournalKind::kList, scipis::kChainsFile, n < 2, n < 2 ? "chains" : ""},
                                 {JournalKind::kManifest, "", true, manifest}};
  if (n == 2) parts.push_back({JournalKind::kList, scipis::kTermsFile, true, "terms 2"});
  return scipis::encode_journal_record(5, n, start, parts);
}

std::string journal_of(int records) {
  std::string j;
  for (int n = 1; n <= records; n++) j += record(static_cast<uint64_t>(n), j.size());
  return j;
}

}  // namespace

TEST(Journal, RecordsReadBackAndATornLastOneIsUnseen) {
  const std::string j = journal_of(3);
  ASSERT_EQ(j.size() % scipis::kJournalAlign, 0u);
  CurrentState st = state_of(5);
  scipis::apply_journal(st, "JOURNAL", j);
  EXPECT_EQ(st.records, 3u);
  EXPECT_EQ(st.journal_end, j.size());
  EXPECT_EQ(st.m.files, 3u);
  std::string bytes;
  ASSERT_TRUE(st.read_list(scipis::kDeletesFile, bytes));
  EXPECT_EQ(bytes, "tombstones 3");
  EXPECT_FALSE(st.read_list(scipis::kChainsFile, bytes));  // gone since record 2
  // A pack lies at an aligned offset, as the writer was told it would.
  const size_t pack = j.find(std::string(5001, 'p'));
  ASSERT_NE(pack, std::string::npos);
  EXPECT_EQ(pack % scipis::kJournalAlign, 0u);

  ASSERT_TRUE(st.read_list(scipis::kTermsFile, bytes));
  EXPECT_EQ(bytes, "terms 2");  // from record 2, which only it names

  const size_t two = journal_of(2).size();
  // A crash tears only the last record (each is synced before the next is
  // written): every cut of it and every flipped byte of it (a sample,
  // header, lists, pack and padding) leave the state of the first two,
  // never an error.
  auto expect_two = [&](const std::string& d, const std::string& why) {
    CurrentState t = state_of(5);
    scipis::apply_journal(t, "JOURNAL", d);
    EXPECT_EQ(t.records, 2u) << why;
    EXPECT_EQ(t.m.files, 2u) << why;
    EXPECT_EQ(t.journal_end, two) << why;
    ASSERT_TRUE(t.read_list(scipis::kDeletesFile, bytes));
    EXPECT_EQ(bytes, "tombstones 2");
  };
  for (size_t cut = two; cut < j.size(); cut += 97) expect_two(j.substr(0, cut), "cut " + std::to_string(cut));
  std::string zeroed = j;
  std::fill(zeroed.begin() + static_cast<long>(two), zeroed.begin() + static_cast<long>(two + scipis::kJournalHead), '\0');
  expect_two(zeroed, "zeroed header");
  for (size_t at = two; at < j.size(); at += at < two + 400 ? 1 : 131) {
    std::string d = j;
    d[at] = static_cast<char>(d[at] ^ 0x20);
    expect_two(d, "byte " + std::to_string(at));
  }
  // An earlier record's metadata a reader still needs (record 2 names
  // TERMS): a flipped byte is damage, named; in a pack it is found where
  // the pack is read (its parts' own checksums), not here.
  const size_t one = journal_of(1).size();
  for (size_t at = one + scipis::kJournalHead; at < one + 300; at += 7) {
    std::string d = j;
    d[at] = static_cast<char>(d[at] ^ 0x20);
    CurrentState t = state_of(5);
    try {
      scipis::apply_journal(t, "JOURNAL", d);
      ADD_FAILURE() << "damage at " << at << " was taken";
    } catch (const scipis::Error& e) {
      EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT);
      EXPECT_NE(std::string(e.what()).find("JOURNAL (record 2)"), std::string::npos) << e.what();
    }
  }
  std::string in_pack = j;
  in_pack[one + scipis::kJournalAlign + 10] ^= 0x20;
  CurrentState t3 = state_of(5);
  scipis::apply_journal(t3, "JOURNAL", in_pack);
  EXPECT_EQ(t3.records, 3u);
  // Another generation's records, or records out of order, are not this journal's.
  CurrentState other = state_of(6);
  scipis::apply_journal(other, "JOURNAL", j);
  EXPECT_EQ(other.records, 0u);
  CurrentState skipped = state_of(5);
  scipis::apply_journal(skipped, "JOURNAL", std::string_view(j).substr(two));
  EXPECT_EQ(skipped.records, 0u);
  // A whole record whose manifest is damaged (checksums recomputed) is
  // damage too.
  std::vector<JournalPart> parts{{JournalKind::kManifest, "", true, "not a manifest"}};
  const std::string bad = scipis::encode_journal_record(5, 1, 0, parts);
  CurrentState t = state_of(5);
  EXPECT_THROW(scipis::apply_journal(t, "JOURNAL", bad), scipis::Error);
}

// Small refreshes commit into the journal (no new generation), answer as
// the oracle after each, a crash's torn tail is ignored and then written over,
// a full journal moves on to a new generation, and a full compaction
// leaves no journal behind.
TEST(Journal, SmallRefreshesCommitIntoItExactly) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(17);
  std::vector<std::string> files;
  for (int i = 0; i < 6; i++) {
    files.push_back(root + "/f" + std::to_string(i) + ".log");
    testutil::write(files.back(), lines(rng, 20000) + "\n");
  }
  scipis_options o = tiny_options();
  o.tfidf_index_size = 4 << 20;
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const uint64_t gen = scipis::read_current(dir).m.generation;
  const std::string journal = dir + "/g" + std::to_string(gen) + "/" + scipis::kJournalFile;
  for (int step = 0; step < 6; step++) {
    std::ofstream(files[static_cast<size_t>(step) % files.size()], std::ios::app)
        << lines(rng, 300) << " step" << step << "\n";
    if (step == 3) testutil::write(root + "/new.log", "brand new words step3\n");
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    const CurrentState now = scipis::read_current(dir);
    EXPECT_EQ(now.m.generation, gen) << step;
    EXPECT_EQ(now.records, static_cast<uint64_t>(step) + 1);
    EXPECT_FALSE(fs::exists(dir + "/g" + std::to_string(gen + 1))) << step;
    check(dir, root, "journal step " + std::to_string(step), {"step" + std::to_string(step), "w1 w7"});
  }
  // A crash while appending the next record: its first bytes are there.
  const uint64_t whole = scipis::read_current(dir).journal_end;
  EXPECT_GE(fs::file_size(journal), whole + scipis::kJournalHead);
  EXPECT_TRUE(zeros_from(journal, whole));
  write_at(journal, whole, std::string(5000, 'x'));
  scipis_index* ix = scipis_index_open(dir.c_str(), &err);
  ASSERT_NE(ix, nullptr) << err.message;
  check(dir, root, "torn tail", {"step5", "w1 w7"});
  std::ofstream(files[0], std::ios::app) << "after the crash\n";
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  EXPECT_EQ(scipis_index_is_current(ix), 0);
  scipis_index_close(ix);
  EXPECT_GT(scipis::read_current(dir).journal_end, whole);
  EXPECT_EQ(scipis::read_current(dir).records, 7u);
  check(dir, root, "after the torn tail", {"crash", "step5"});
  // A record lost in a crash (cut back to the records before it): the
  // refresh after reads the change again.
  ASSERT_EQ(::truncate(journal.c_str(), static_cast<off_t>(whole)), 0);
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  EXPECT_EQ(st.files_appended, 1u);
  check(dir, root, "record lost", {"crash", "step5"});
  // Until the journal is full; then a new generation, which keeps the
  // journal's packs where they are.
  int steps = 0;
  while (scipis::read_current(dir).m.generation == gen && steps < 2000) {
    std::ofstream(files[static_cast<size_t>(steps) % files.size()], std::ios::app)
        << lines(rng, 2000) << " more" << steps << "\n";
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    steps++;
  }
  const CurrentState next = scipis::read_current(dir);
  ASSERT_GT(next.m.generation, gen) << steps;
  bool packs_in_old = false;
  for (const scipis::SegmentRef& s : next.m.segments) packs_in_old |= s.in_journal() && s.home == gen;
  EXPECT_TRUE(packs_in_old);
  EXPECT_TRUE(fs::exists(journal));
  check(dir, root, "after the journal filled", {"more0", "crash"});
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_FALSE(fs::exists(journal));
  check(dir, root, "compacted", {"more0", "crash", "step3"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// An indexer whose only segment is a refresh's pack in the journal: a
// full compaction still leaves no journal behind (it was left be as an
// indexer of one segment, and its generation kept the journal).
TEST(Journal, AFullCompactionMovesALonePackOutOfTheJournal) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;  // no files
  testutil::write(root + "/only.log", "a lone pack of words\n");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  const CurrentState before = scipis::read_current(dir);
  ASSERT_EQ(before.m.segments.size(), 1u);
  ASSERT_TRUE(before.m.segments[0].in_journal());
  const std::string journal = dir + "/g" + std::to_string(before.m.generation) + "/" + scipis::kJournalFile;
  ASSERT_TRUE(fs::exists(journal));
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  const CurrentState after = scipis::read_current(dir);
  EXPECT_FALSE(fs::exists(journal));
  ASSERT_EQ(after.m.segments.size(), 1u);
  EXPECT_FALSE(after.m.segments[0].in_journal());
  check(dir, root, "compacted", {"lone", "words pack"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A merge of the small segments refreshes left commits into the journal
// too (pipeline/journal_commit.h): the same generation, one more record,
// every answer the oracle's; a merge too large for a record, or of every
// segment, writes a generation.
// A merge that drops a segment whose documents are all gone writes none
// in its place. The next refresh's segment must not take its number: the
// generation's PATHS file still names the build's segments by number,
// and read the new one as the old one, changed (an index called damaged).
TEST(Journal, ANewSegmentNeverTakesTheNumberOfOneDropped) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(7);
  scipis_options o = tiny_options();
  o.indexer_threads = 1;  // every file in one indexer's segments, whatever the timing
  // Terms of their own: the small table fills, several segments.
  for (int i = 0; i < 4; i++) {
    std::string text = lines(rng, 200);
    for (int j = 0; j < 400; j++) text += " u" + std::to_string(i) + "x" + std::to_string(j);
    testutil::write(root + "/f" + std::to_string(i) + ".log", text + "\n");
  }
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const CurrentState built = scipis::read_current(dir);
  ASSERT_GE(built.m.segments.size(), 2u);
  ASSERT_TRUE(fs::exists(built.gen_dir + "/PATHS"));
  for (int i = 0; i < 4; i++) fs::remove(root + "/f" + std::to_string(i) + ".log");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
  const CurrentState merged = scipis::read_current(dir);
  ASSERT_EQ(merged.m.generation, built.m.generation);  // PATHS still the build's
  ASSERT_TRUE(merged.m.segments.empty());
  testutil::write(root + "/g.txt", lines(rng, 200) + " after\n");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  const CurrentState now = scipis::read_current(dir);
  ASSERT_EQ(now.m.generation, built.m.generation);
  ASSERT_EQ(now.m.segments.size(), 1u);
  EXPECT_EQ(now.m.segments[0].seg, built.m.segments.back().seg + 1);
  check(dir, root, "a file after every segment was dropped", {"after"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

TEST(Journal, SmallMergesCommitIntoIt) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(23);
  std::vector<std::string> files;
  for (int i = 0; i < 4; i++) {
    files.push_back(root + "/f" + std::to_string(i) + ".log");
    testutil::write(files.back(), lines(rng, 20000) + "\n");
  }
  scipis_options o = tiny_options();
  o.tfidf_index_size = 4 << 20;
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const uint64_t gen = scipis::read_current(dir).m.generation;
  int merges = 0;
  for (int step = 0; step < 12; step++) {
    std::ofstream(files[static_cast<size_t>(step) % files.size()], std::ios::app)
        << lines(rng, 300) << " step" << step << "\n";
    if (step % 4 == 1) fs::remove(files[static_cast<size_t>(step) % files.size()]);
    if (step % 4 == 2) testutil::write(files[static_cast<size_t>(step - 1) % files.size()], lines(rng, 500));
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
    if (!scipis_compact_needed(dir.c_str(), 0)) continue;
    const CurrentState before = scipis::read_current(dir);
    ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
    const CurrentState after = scipis::read_current(dir);
    if (st.segments_merged == 0) continue;
    merges++;
    EXPECT_EQ(after.m.generation, gen) << step;
    EXPECT_EQ(after.records, before.records + 1) << step;
    // Fewer segments, or one rewritten without its garbage.
    EXPECT_TRUE(after.m.segments.size() < before.m.segments.size() ||
                (st.segments_merged == 1 && st.docs_dropped + st.chains_folded > 0))
        << step << ": " << after.m.segments.size() << " segments, " << st.segments_merged << " merged";
    EXPECT_FALSE(fs::exists(dir + "/g" + std::to_string(gen + 1))) << step;
    check(dir, root, "merged at step " + std::to_string(step), {"step" + std::to_string(step), "w1 w7"});
  }
  EXPECT_GT(merges, 0);
  check(dir, root, "after the steps", {"step11", "step3"});
  // A full journal: the merge's packs, kept for the record, go into a
  // generation of their own.
  int steps = 0;
  for (; scipis::read_current(dir).records < scipis::kJournalMaxRecords && steps < 100; steps++) {
    std::ofstream(files[static_cast<size_t>(steps) % files.size()], std::ios::app) << " full" << steps << "\n";
    settle();
    ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  }
  ASSERT_EQ(scipis::read_current(dir).m.generation, gen);
  ASSERT_TRUE(scipis_compact_needed(dir.c_str(), 0));
  ASSERT_EQ(compact(dir, o, false, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  EXPECT_GT(scipis::read_current(dir).m.generation, gen);
  check(dir, root, "merged past a full journal", {"full0", "step11"});
  // Every segment merged: a generation.
  std::ofstream(files[0], std::ios::app) << "last words\n";
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  EXPECT_GT(st.segments_merged, 0u);
  check(dir, root, "compacted", {"step11", "step0"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// The state a process keeps (remember_current) is the one read_current
// returns only while the files say the same: a manifest put back, a
// journal cut back or grown by another writer are read anew.
TEST(Journal, KeptStateFollowsTheFiles) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(31);
  const std::string log = root + "/a.log";
  testutil::write(log, lines(rng, 20000) + "\n");
  testutil::write(root + "/b.log", lines(rng, 20000) + "\n");
  scipis_options o = tiny_options();
  o.tfidf_index_size = 4 << 20;
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const std::string manifest = testutil::read(scipis::manifest_path(dir));
  const CurrentState built = scipis::read_current(dir);
  const std::string journal = built.gen_dir + "/" + scipis::kJournalFile;
  std::vector<uint64_t> ends;
  for (int step = 0; step < 3; step++) {
    std::ofstream(log, std::ios::app) << " kept" << step << "\n";
    settle();
    ASSERT_EQ(refresh(dir, root, o, {log}, &st, &err), 0) << err.message;
    const CurrentState now = scipis::read_current(dir);
    EXPECT_EQ(now.records, static_cast<uint64_t>(step) + 1);
    // Written ahead with zeros, which records overwrite.
    EXPECT_TRUE(zeros_from(journal, now.journal_end)) << step;
    EXPECT_GE(fs::file_size(journal), now.journal_end + scipis::kJournalHead);
    ends.push_back(now.journal_end);
  }
  const std::string whole = testutil::read(journal);
  // Cut back a record (as a lost write would): the state before it.
  ASSERT_EQ(::truncate(journal.c_str(), static_cast<off_t>(ends[1])), 0);
  CurrentState now = scipis::read_current(dir);
  EXPECT_EQ(now.records, 2u);
  EXPECT_EQ(testutil::search(dir, "kept2").size(), 0u);
  EXPECT_EQ(testutil::search(dir, "kept1").size(), 1u);
  // Grown again by another writer (the record put back).
  testutil::write(journal, whole);
  now = scipis::read_current(dir);
  EXPECT_EQ(now.records, 3u);
  EXPECT_EQ(testutil::search(dir, "kept2").size(), 1u);
  // A torn record (its header whole, its body not, and more of it beyond):
  // the whole records still; the next refresh writes over it and leaves a
  // zero header after its own record.
  std::ofstream(log, std::ios::app) << " kept3\n";
  settle();
  ASSERT_EQ(refresh(dir, root, o, {log}, &st, &err), 0) << err.message;
  const std::string four = testutil::read(journal);
  std::string torn = four.substr(ends[2], scipis::read_current(dir).journal_end - ends[2]);
  torn.back() ^= 1;
  testutil::write(journal, whole);
  write_at(journal, ends[2], torn + std::string(64 << 10, 'z'));
  // As another process sees it (this one wrote the record whole).
  scipis::forget_current(dir);
  now = scipis::read_current(dir);
  EXPECT_EQ(now.records, 3u);
  EXPECT_EQ(testutil::search(dir, "kept3").size(), 0u);
  // Its whole header is a next record's: read again until written over.
  EXPECT_TRUE(scipis::journal_moved(now));
  ASSERT_EQ(refresh(dir, root, o, {log}, &st, &err), 0) << err.message;
  now = scipis::read_current(dir);
  EXPECT_EQ(now.records, 4u);
  EXPECT_EQ(testutil::read(journal).substr(now.journal_end, scipis::kJournalHead),
            std::string(scipis::kJournalHead, '\0'));
  EXPECT_EQ(testutil::search(dir, "kept3").size(), 1u);
  // A compaction writes a generation: the new manifest is read.
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  now = scipis::read_current(dir);
  EXPECT_GT(now.m.generation, built.m.generation);
  EXPECT_EQ(now.records, 0u);
  check(dir, root, "compacted", {"kept2", "kept0"});
  EXPECT_NE(testutil::read(scipis::manifest_path(dir)), manifest);
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A state read before a new generation was published, opened after it
// (as a search handle opened while a refresh commits): it is stale, and
// must say so, or its searches fail on the files the publish removed.
TEST(Journal, AStateReadBeforeAPublishIsNotCurrent) {
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(32);
  for (int i = 0; i < 4; i++) testutil::write(root + "/f" + std::to_string(i) + ".log", lines(rng, 4000) + "\n");
  const scipis_options o = tiny_options();
  scipis_build_stats st;
  scipis_error err;
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  CurrentState before = scipis::read_current(dir);
  EXPECT_TRUE(scipis::Collection(dir, before).is_current());
  fs::remove(root + "/f0.log");
  settle();
  ASSERT_EQ(refresh(dir, root, o, {}, &st, &err), 0) << err.message;
  ASSERT_EQ(compact(dir, o, true, &st, &err), 0) << err.message;
  ASSERT_GT(scipis::read_current(dir).m.generation, before.m.generation);
  EXPECT_FALSE(before.manifest_unmoved());
  EXPECT_FALSE(scipis::Collection(dir, before).is_current());
  EXPECT_TRUE(scipis::Collection(dir).is_current());
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

namespace {

// A tombstone file of the given encoding and body, sealed (checksums
// right: only what the body says can be wrong).
std::string sealed_deletes(uint64_t count, const std::string& body, uint32_t aux) {
  return scipis::sealed_file(scipis::kMagicDeletes, count, body, aux);
}

std::string varints(std::initializer_list<uint64_t> v) {
  std::string out;
  for (uint64_t x : v) scipis::put_varint(out, x);
  return out;
}

}  // namespace

// Tombstone lists round-trip at their edges (none, one, seqs 0 and the
// last, gaps past 2^32, every indexer or one of many); the old fixed-width
// encoding still reads; a sealed body that lies is refused as damage.
TEST(Journal, TombstoneListsRoundTripAndLiesAreRefused) {
  const std::vector<uint64_t> docs{10, uint64_t{1} << 40, 1, 300};
  std::mt19937_64 rng(5);
  std::vector<scipis::DeadSeqs> cases = {
      {{}, {}, {}, {}},
      {{0}, {}, {}, {}},
      {{9}, {0, (uint64_t{1} << 33) + 7, (uint64_t{1} << 40) - 1}, {0}, {}},
      {{}, {}, {}, {299}},
  };
  scipis::DeadSeqs dense(4);
  for (uint64_t q = 0; q < 300; q++)
    if (rng() % 3) dense[3].push_back(q);
  for (uint64_t q = 0; q < 5000; q++) dense[1].push_back(q * (rng() % 1000 + 1) + q);
  std::sort(dense[1].begin(), dense[1].end());
  dense[1].erase(std::unique(dense[1].begin(), dense[1].end()), dense[1].end());
  cases.push_back(dense);
  for (size_t k = 0; k < cases.size(); k++) {
    const std::string bytes = scipis::encode_deletes(cases[k]);
    EXPECT_EQ(scipis::decode_deletes("t", bytes, docs), cases[k]) << k;
    // The fixed-width encoding of the same list.
    std::string fixed;
    for (uint32_t i = 0; i < cases[k].size(); i++)
      for (uint64_t q : cases[k][i]) {
        scipis::put_u32(fixed, i);
        scipis::put_u64(fixed, q);
      }
    EXPECT_EQ(scipis::decode_deletes("t", sealed_deletes(scipis::count_dead(cases[k]), fixed, scipis::kDeletesFixed),
                                     docs),
              cases[k])
        << k;
  }
  // Dense tombstones take about a byte each.
  EXPECT_LT(scipis::encode_deletes(dense).size(), 32 + 2 * scipis::count_dead(dense) + 16);
  const std::vector<std::pair<std::string, std::string>> lies = {
      {"unknown encoding", sealed_deletes(1, varints({0, 1, 3}), 7)},
      {"seq past the indexer's documents", sealed_deletes(1, varints({0, 1, 10}), 1)},
      {"gap past the documents", sealed_deletes(2, varints({0, 2, 5, uint64_t{1} << 63}), 1)},
      {"a repeat (zero gap)", sealed_deletes(2, varints({0, 2, 5, 0}), 1)},
      {"unknown indexer", sealed_deletes(1, varints({4, 1, 0}), 1)},
      {"indexer twice", sealed_deletes(2, varints({0, 1, 1, 0, 1, 2}), 1)},
      {"indexers out of order", sealed_deletes(2, varints({3, 1, 1, 0, 1, 2}), 1)},
      {"count above the header's", sealed_deletes(1, varints({0, 2, 1, 1}), 1)},
      {"count below the header's", sealed_deletes(3, varints({0, 2, 1, 1}), 1)},
      {"an empty indexer entry", sealed_deletes(1, varints({0, 0, 3, 1, 0}), 1)},
      {"a varint cut short", sealed_deletes(1, std::string{"\x00\x01\x80", 3}, 1)},
      {"count past the body", sealed_deletes(uint64_t{1} << 62, varints({0, 1, 3}), 1)},
      {"fixed width, out of order", sealed_deletes(2, [] {
         std::string f;
         scipis::put_u32(f, 0), scipis::put_u64(f, 5), scipis::put_u32(f, 0), scipis::put_u64(f, 5);
         return f;
       }(), 0)},
  };
  for (const auto& [what, bytes] : lies) {
    try {
      scipis::decode_deletes("t", bytes, docs);
      ADD_FAILURE() << what << ": accepted";
    } catch (const scipis::Error& e) {
      EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << what << ": " << e.what();
    }
  }
}

// Appended-file lists round-trip; one that names a document twice (a root
// starting a second chain, a member of two chains, a chain's root as
// another's member) or one past its indexer's documents is damage.
TEST(Journal, ChainListsNamingADocumentTwiceAreRefused) {
  const std::vector<uint64_t> docs{100, uint64_t{1} << 40};
  using scipis::ChainLink;
  using scipis::DocId;
  auto link = [](DocId ext, DocId root, const char* retract = "") {
    ChainLink l;
    l.ext = ext;
    l.root = root;
    l.tokens = 5;
    l.retract = retract;
    return l;
  };
  const std::vector<ChainLink> good = {link({0, 7}, {0, 3}), link({1, 9}, {0, 3}, "w1"),
                                       link({0, 99}, {1, (uint64_t{1} << 40) - 1}), link({0, 0}, {1, 4})};
  const auto back = scipis::decode_chains("t", scipis::encode_chains(good), docs);
  ASSERT_EQ(back.size(), good.size());
  for (size_t i = 0; i < good.size(); i++) {
    EXPECT_EQ(back[i].ext, good[i].ext);
    EXPECT_EQ(back[i].root, good[i].root);
    EXPECT_EQ(back[i].retract, good[i].retract);
  }
  const std::vector<std::pair<std::string, std::vector<ChainLink>>> lies = {
      {"a root starting two chains", {link({0, 7}, {0, 3}), link({0, 8}, {1, 3}), link({0, 9}, {0, 3})}},
      {"a member of two chains", {link({0, 7}, {0, 3}), link({0, 7}, {0, 4})}},
      {"a member twice in one chain", {link({0, 7}, {0, 3}), link({0, 7}, {0, 3})}},
      {"a root that is another chain's member", {link({0, 7}, {0, 3}), link({0, 8}, {0, 7})}},
      {"a member that is another chain's root", {link({0, 7}, {0, 3}), link({0, 3}, {0, 4})}},
      {"its own root", {link({0, 3}, {0, 3})}},
      {"a seq past the documents", {link({0, 100}, {0, 3})}},
      {"an unknown indexer", {link({2, 1}, {0, 3})}},
  };
  for (const auto& [what, links] : lies) {
    try {
      scipis::decode_chains("t", scipis::encode_chains(links), docs);
      ADD_FAILURE() << what << ": accepted";
    } catch (const scipis::Error& e) {
      EXPECT_EQ(e.code(), SCIPIS_E_CORRUPT) << what << ": " << e.what();
    }
  }
}
