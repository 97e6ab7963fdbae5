// Journal records written without a sync (SCIPIS_REFRESH_DEFER_SYNC,
// index/journal.h): read back in the boot that wrote them, cut in another
// unless a synced record after them vouches for them, a torn synced record
// leaves those before it to their boot; refreshes that defer answer as the
// oracle, a machine crash (another boot id) takes the collection back to
// its last synced state and the next refresh finds the change again; a
// commit that removes files, the journal's first record and one after the
// first unsynced is older than the window (a second; tests set it) are synced.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "index/deletes.h"
#include "index/journal.h"
#include "index/manifest.h"
#include "refresh_util.h"
#include "util/boot_id.h"
#include "util/bytes.h"
#include "util/fileio.h"
#include "util/time_ns.h"

using namespace refresh_util;
using scipis::BootId;
using scipis::CurrentState;
using scipis::JournalKind;
using scipis::JournalPart;
using scipis::JournalUnsynced;

namespace {

const BootId kBootA{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
const BootId kBootB{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};

// Runs as if in the given boot while it lives.
struct InBoot {
  explicit InBoot(const BootId& id) { scipis::set_boot_id_for_tests(id); }
  ~InBoot() { scipis::set_boot_id_for_tests(std::nullopt); }
};

// Records stay unsynced while their first is younger than ns (the test's
// pace then decides nothing).
struct DeferFor {
  explicit DeferFor(int64_t ns) { scipis::set_journal_defer_ns(ns); }
  ~DeferFor() { scipis::set_journal_defer_ns(scipis::kJournalDeferNs); }
};
constexpr int64_t kAnHour = 3600'000'000'000;

// Record n of generation 7 (its manifest's files = n), unsynced in boot
// `boot` when given.
std::string unsynced_record(uint64_t n, uint64_t start, const BootId* boot) {
  scipis::Manifest m;
  m.generation = 7;
  m.indexers = 1;
  m.files = n;
  const std::string manifest = m.encode(), pack(3000 + n, 'q'), dead = "dead " + std::to_string(n);
  const std::vector<JournalPart> parts{{JournalKind::kPack, "", true, pack},
                                       {JournalKind::kList, scipis::kDeletesFile, true, dead},
                                       {JournalKind::kManifest, "", true, manifest}};
  const JournalUnsynced u{boot ? *boot : BootId{}, 1000 + static_cast<int64_t>(n)};
  return scipis::encode_journal_record(7, n, start, parts, boot ? &u : nullptr);
}

// Records 1.. of generation 7; boots[i] null: record i + 1 synced.
std::string journal_with(const std::vector<const BootId*>& boots, std::vector<uint64_t>* starts = nullptr) {
  std::string j;
  for (size_t i = 0; i < boots.size(); i++) {
    if (starts) starts->push_back(j.size());
    j += unsynced_record(i + 1, j.size(), boots[i]);
  }
  return j;
}

CurrentState read_back(std::string_view j) {
  CurrentState st;
  st.m.generation = 7;
  scipis::apply_journal(st, "JOURNAL", j);
  return st;
}

// Whether each record of a journal file says it was written unsynced.
std::vector<bool> unsynced_flags(const std::string& path) {
  const std::string j = testutil::read(path);
  std::vector<bool> out;
  uint64_t pos = 0;
  while (pos + scipis::kJournalHead <= j.size() && j.compare(pos, 8, scipis::kMagicJournal, 8) == 0) {
    const auto* h = reinterpret_cast<const unsigned char*>(j.data() + pos);
    out.push_back((scipis::get_u32(h + 48) >> 31) != 0);
    const uint64_t len = scipis::get_u64(h + 32);
    if (len == 0) break;
    pos += len;
  }
  return out;
}

int refresh_deferred(const std::string& dir, const std::string& root, const scipis_options& o,
                     const std::vector<std::string>& paths, scipis_build_stats* st, scipis_error* err) {
  std::vector<const char*> p;
  for (const auto& s : paths) p.push_back(s.c_str());
  scipis_build* b = scipis_refresh_start(dir.c_str(), root.c_str(), &o, p.data(), static_cast<int>(p.size()),
                                         SCIPIS_REFRESH_DEFER_SYNC, err);
  if (!b) return -1;
  while (!scipis_build_wait(b, 100)) {
  }
  return scipis_build_finish(b, st, err);
}

}  // namespace

TEST(JournalUnsynced, RecordsOfAnotherBootCountOnlyWhenASyncedOneFollows) {
  const std::string tail = journal_with({nullptr, &kBootA, &kBootA});
  {
    InBoot a(kBootA);
    const CurrentState st = read_back(tail);
    EXPECT_EQ(st.records, 3u);
    EXPECT_EQ(st.m.files, 3u);
    EXPECT_EQ(st.journal_end, tail.size());
    EXPECT_EQ(st.unsynced_since_ns, 1002);
    EXPECT_EQ(*st.lists.find(scipis::kDeletesFile)->second, "dead 3");
  }
  std::vector<uint64_t> starts;
  journal_with({nullptr, &kBootA, &kBootA}, &starts);
  {
    InBoot b(kBootB);
    const CurrentState st = read_back(tail);
    EXPECT_EQ(st.records, 1u);
    EXPECT_EQ(st.m.files, 1u);
    EXPECT_EQ(st.journal_end, starts[1]);
    EXPECT_EQ(st.unsynced_since_ns, 0);
    EXPECT_EQ(*st.lists.find(scipis::kDeletesFile)->second, "dead 1");
    // Only unsynced records: none counts.
    EXPECT_EQ(read_back(journal_with({&kBootA, &kBootA})).records, 0u);
  }
  // A synced record after them vouches for them in any boot.
  const std::string vouched = journal_with({nullptr, &kBootA, &kBootA, nullptr});
  for (const BootId* id : {&kBootA, &kBootB}) {
    InBoot in(*id);
    const CurrentState st = read_back(vouched);
    EXPECT_EQ(st.records, 4u);
    EXPECT_EQ(st.unsynced_since_ns, 0);
  }
  // Unsynced ones of this boot after a synced one: counted, the time of the
  // first after it kept.
  {
    InBoot b(kBootB);
    const CurrentState st = read_back(journal_with({&kBootA, nullptr, &kBootB, &kBootB}));
    EXPECT_EQ(st.records, 4u);
    EXPECT_EQ(st.unsynced_since_ns, 1003);
  }
}

TEST(JournalUnsynced, ATornSyncedRecordLeavesThoseBeforeItToTheirBoot) {
  std::vector<uint64_t> starts;
  std::string j = journal_with({nullptr, &kBootA, nullptr}, &starts);
  j[j.size() - 1] ^= 1;  // the synced last record torn: its sync never ended
  {
    InBoot a(kBootA);
    EXPECT_EQ(read_back(j).records, 2u);
  }
  {
    InBoot b(kBootB);
    const CurrentState st = read_back(j);
    EXPECT_EQ(st.records, 1u);
    EXPECT_EQ(st.journal_end, starts[1]);
  }
  // A torn unsynced record of this boot (a killed writer): the ones before.
  std::string k = journal_with({nullptr, &kBootA, &kBootA});
  k[k.size() - 1] ^= 1;
  InBoot a(kBootA);
  EXPECT_EQ(read_back(k).records, 2u);
}

TEST(JournalUnsynced, RefreshesDeferAndAnotherBootSeesTheLastSyncedState) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(45);
  const std::string log = root + "/a.log";
  testutil::write(log, lines(rng, 20000) + "\n");
  testutil::write(root + "/b.log", lines(rng, 20000) + "\n");
  scipis_options o = tiny_options();
  o.tfidf_index_size = 4 << 20;
  scipis_build_stats st;
  scipis_error err;
  InBoot a(kBootA);
  DeferFor long_enough(kAnHour);
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  const std::string journal = scipis::read_current(dir).gen_dir + "/" + scipis::kJournalFile;
  // The journal's first record makes the file: synced all the same.
  append(log, " first0\n");
  settle();
  ASSERT_EQ(refresh_deferred(dir, root, o, {log}, &st, &err), 0) << err.message;
  EXPECT_EQ(unsynced_flags(journal), std::vector<bool>({false}));
  const int64_t before = scipis::realtime_ns();
  for (int step = 0; step < 3; step++) {
    append(log, " deferred" + std::to_string(step) + "\n");
    settle();
    ASSERT_EQ(refresh_deferred(dir, root, o, {log}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_appended, 1u);
    check(dir, root, "deferred " + std::to_string(step), {"deferred" + std::to_string(step), "first0"});
  }
  EXPECT_EQ(unsynced_flags(journal), std::vector<bool>({false, true, true, true}));
  const CurrentState deferred = scipis::read_current(dir);
  EXPECT_EQ(deferred.records, 4u);
  EXPECT_GE(deferred.unsynced_since_ns, before);
  {
    // The machine crashed and came back: the last synced state.
    InBoot b(kBootB);
    scipis::forget_current(dir);
    const CurrentState back = scipis::read_current(dir);
    EXPECT_EQ(back.records, 1u);
    EXPECT_EQ(testutil::search(dir, "deferred0").size(), 0u);
    EXPECT_EQ(testutil::search(dir, "first0").size(), 1u);
    // Not a change to read again for each search.
    EXPECT_FALSE(scipis::journal_moved(back));
    // The next refresh reads the appended lines again, over the cut records.
    settle();
    ASSERT_EQ(refresh_deferred(dir, root, o, {log}, &st, &err), 0) << err.message;
    EXPECT_EQ(st.files_appended, 1u);
    EXPECT_EQ(scipis::read_current(dir).records, 2u);
    EXPECT_EQ(unsynced_flags(journal), std::vector<bool>({false, true}));
    check(dir, root, "after the crash", {"deferred0", "deferred2", "first0"});
    // A first unsynced record older than the window (1 ms; settle() waits
    // 0.15 s): the next one is synced.
    DeferFor short_window(1'000'000);
    append(log, " late\n");
    settle();
    ASSERT_EQ(refresh_deferred(dir, root, o, {log}, &st, &err), 0) << err.message;
    EXPECT_EQ(unsynced_flags(journal), std::vector<bool>({false, true, false}));
    EXPECT_EQ(scipis::read_current(dir).unsynced_since_ns, 0);
  }
  // Back in boot A, the synced record vouches for the one of boot B.
  scipis::forget_current(dir);
  EXPECT_EQ(scipis::read_current(dir).records, 3u);
  check(dir, root, "vouched", {"late", "deferred1"});
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}

// A commit whose record replaces segments held in files (a generation's
// own, written by a refresh that committed a generation) removes them
// after it: synced first, whatever its caller allowed.
TEST(JournalUnsynced, ACommitThatRemovesFilesIsSynced) {
  AppendMin every_size(0);
  const std::string root = testutil::scratch_dir(), dir = testutil::scratch_dir();
  std::mt19937 rng(46);
  const std::string log = root + "/a.log";
  testutil::write(log, lines(rng, 20000) + "\n");
  other_files(root, rng);
  scipis_options o = one_segment_options();
  scipis_build_stats st;
  scipis_error err;
  InBoot a(kBootA);
  DeferFor long_enough(kAnHour);
  settle();
  ASSERT_EQ(testutil::build(dir, root, o, &st, &err), 0) << err.message;
  {
    // Small segments in files of a generation of their own.
    NoJournal files_only;
    append(log, " infile\n");
    settle();
    ASSERT_EQ(refresh(dir, root, o, {log}, &st, &err), 0) << err.message;
  }
  const CurrentState filed = scipis::read_current(dir);
  ASSERT_EQ(filed.records, 0u);
  const std::string journal = filed.gen_dir + "/" + scipis::kJournalFile;
  // Records until one takes in a segment that lies in files.
  bool removed = false;
  for (int step = 0; step < 8 && !removed; step++) {
    const CurrentState now = scipis::read_current(dir);
    append(log, " step" + std::to_string(step) + "\n");
    settle();
    ASSERT_EQ(refresh_deferred(dir, root, o, {log}, &st, &err), 0) << err.message;
    const CurrentState after = scipis::read_current(dir);
    ASSERT_EQ(after.m.generation, now.m.generation) << step;
    bool gone = false;
    for (const scipis::SegmentRef& s : now.m.segments)
      gone |= !s.in_journal() && std::none_of(after.m.segments.begin(), after.m.segments.end(),
                                              [&](const scipis::SegmentRef& t) {
                                                return after.m.home_of(t) == now.m.home_of(s) &&
                                                       t.indexer == s.indexer && t.seg == s.seg;
                                              });
    const std::vector<bool> flags = unsynced_flags(journal);
    ASSERT_EQ(flags.size(), after.records);
    check(dir, root, "step " + std::to_string(step), {"step" + std::to_string(step), "infile"});
    // The journal's first record is synced in any case.
    if (step == 0) {
      EXPECT_FALSE(flags.back());
      continue;
    }
    EXPECT_EQ(flags.back(), !gone) << step;
    removed = gone;
  }
  EXPECT_TRUE(removed) << "no refresh took in a segment held in files";
  testutil::rm_rf(dir);
  testutil::rm_rf(root);
}
