// The readers' choice of indexer (pipeline/indexer_picker.h): only a free
// indexer whose queue has room is handed out, a reader keeps to the one it
// last used, and leaves it, when its queue is full, only for one whose
// queue ran dry. The waits are
// checked in the direction that cannot fail by chance: a take that must
// wait is seen still waiting after a while, and one that must end is given
// seconds to.
#include "pipeline/indexer_picker.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>

namespace {

using scipis::IndexerPicker;
using namespace std::chrono_literals;

// Long enough for a wrong take to have happened; a right one never does.
constexpr auto kStillWaiting = 150ms;
// Far longer than a woken take needs on a loaded machine.
constexpr auto kEnds = 20s;

// Each indexer's queue as the picker sees it: room for a message, and
// nothing queued.
struct Queues {
  std::array<std::atomic<bool>, 3> room{}, idle{};
  std::function<bool(int)> room_fn() {
    return [this](int ix) { return room[static_cast<size_t>(ix)].load(); };
  }
  std::function<bool(int)> idle_fn() {
    return [this](int ix) { return idle[static_cast<size_t>(ix)].load(); };
  }
};

std::optional<int> take(IndexerPicker& p, int prefer, Queues& q) {
  return p.take(prefer, q.room_fn(), q.idle_fn());
}

TEST(IndexerPicker, WithoutAPreferenceTheLongestFreeWithRoom) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Queues q;
  p.give(2);
  p.give(0);
  p.give(1);
  q.room[0] = q.room[1] = q.room[2] = true;
  EXPECT_EQ(take(p, -1, q), 2);
  q.room[0] = false;  // 0 has waited longer than 1, but its queue is full
  EXPECT_EQ(take(p, -1, q), 1);
}

TEST(IndexerPicker, AReaderKeepsToItsIndexerWhileItHasRoom) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Queues q;
  p.give(0);
  p.give(1);
  p.give(2);
  q.room[0] = q.room[1] = q.room[2] = true;  // each with work queued
  EXPECT_EQ(take(p, 1, q), 1);                 // not 0, free longer
  p.give(1);
  EXPECT_EQ(take(p, 1, q), 1);
}

// An indexer with nothing queued is fed first (the reader's own if it is
// one of them): at the start of a build, or of a small one, every indexer
// gets work.
TEST(IndexerPicker, AnIndexerWithNothingQueuedComesFirst) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Queues q;
  p.give(0);
  p.give(1);
  p.give(2);
  q.room[0] = q.room[1] = q.room[2] = true;
  q.idle[0] = q.idle[2] = true;
  EXPECT_EQ(take(p, 1, q), 0);
  p.give(0);
  EXPECT_EQ(take(p, 2, q), 2);  // its own, though 0 and 1 were free longer
}

// The case that left an indexer idle: the reader's indexer is flushing,
// its queue full, while another's runs dry. Until it has, the reader waits
// (its files stay together); once it has, the reader moves to it.
TEST(IndexerPicker, AFullIndexerIsLeftOnlyForOneThatRanDry) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Queues q;
  p.give(0);
  p.give(1);
  q.room[1] = true;  // 1 has room but work queued
  auto waiting = std::async(std::launch::async, [&] { return take(p, 0, q); });
  ASSERT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
  q.idle[1] = true;
  p.room_made();
  ASSERT_EQ(waiting.wait_for(kEnds), std::future_status::ready);
  EXPECT_EQ(waiting.get(), 1);
}

TEST(IndexerPicker, RoomInTheReadersIndexerEndsTheWait) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Queues q;
  p.give(0);
  p.give(1);
  q.room[1] = true;
  auto waiting = std::async(std::launch::async, [&] { return take(p, 0, q); });
  ASSERT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
  q.room[0] = true;
  p.room_made();
  ASSERT_EQ(waiting.wait_for(kEnds), std::future_status::ready);
  EXPECT_EQ(waiting.get(), 0);
}

// Held by another reader (a large file's blocks), the reader's indexer is
// waited for, or another that runs dry.
TEST(IndexerPicker, AHeldIndexerIsWaitedForUntilGivenBack) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Queues q;
  p.give(0);
  p.give(1);
  q.room[0] = q.room[1] = true;
  EXPECT_EQ(take(p, 1, q), 1);  // the other reader's
  auto waiting = std::async(std::launch::async, [&] { return take(p, 1, q); });
  ASSERT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
  p.give(1);
  ASSERT_EQ(waiting.wait_for(kEnds), std::future_status::ready);
  EXPECT_EQ(waiting.get(), 1);
}

TEST(IndexerPicker, AStopEndsEveryWaitEmptyHanded) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Queues q;
  p.give(0);
  auto full = std::async(std::launch::async, [&] { return take(p, -1, q); });
  IndexerPicker none(&stop);
  auto taken = std::async(std::launch::async, [&] { return none.take_any(); });
  ASSERT_EQ(full.wait_for(kStillWaiting), std::future_status::timeout);
  ASSERT_EQ(taken.wait_for(0ms), std::future_status::timeout);
  stop = true;  // no notify: the waits see it on their own
  ASSERT_EQ(full.wait_for(kEnds), std::future_status::ready);
  ASSERT_EQ(taken.wait_for(kEnds), std::future_status::ready);
  EXPECT_FALSE(full.get().has_value());
  EXPECT_FALSE(taken.get().has_value());
}

// A thread that runs every stage itself delivers at once: room does not
// matter, only that the indexer is free.
TEST(IndexerPicker, TakeAnyIgnoresRoomAndWaitsForAGiveBack) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  p.give(1);
  p.give(0);
  EXPECT_EQ(p.take_any(), 1);
  EXPECT_EQ(p.take_any(), 0);
  auto waiting = std::async(std::launch::async, [&] { return p.take_any(); });
  ASSERT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
  p.give(0);
  ASSERT_EQ(waiting.wait_for(kEnds), std::future_status::ready);
  EXPECT_EQ(waiting.get(), 0);
}

}  // namespace
