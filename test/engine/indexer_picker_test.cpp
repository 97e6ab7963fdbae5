// The readers' choice of indexer (pipeline/indexer_picker.h): only a free
// indexer whose queue has room is handed out, and a reader waits for one
// instead of for the queue of an indexer busy with a flush. The waits are
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

struct Rooms {
  std::array<std::atomic<bool>, 3> room{};
  std::function<bool(int)> fn() {
    return [this](int ix) { return room[static_cast<size_t>(ix)].load(); };
  }
};

TEST(IndexerPicker, HandsOutTheLongestFreeIndexerWithRoom) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Rooms r;
  p.give(2);
  p.give(0);
  p.give(1);
  r.room[0] = r.room[1] = r.room[2] = true;
  EXPECT_EQ(p.take(r.fn()), 2);
  r.room[0] = false;  // 0 has waited longer than 1, but its queue is full
  EXPECT_EQ(p.take(r.fn()), 1);
  p.give(2);
  EXPECT_EQ(p.take(r.fn()), 2);
}

// The case that left an indexer idle: the only free indexer's queue is full
// (it is flushing) while the other, held by another reader, has room.
TEST(IndexerPicker, WaitsForRoomRatherThanTakingAFullIndexer) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Rooms r;
  p.give(0);
  p.give(1);
  r.room[1] = true;
  EXPECT_EQ(p.take(r.fn()), 1);  // the other reader's
  auto waiting = std::async(std::launch::async, [&] { return p.take(r.fn()); });
  ASSERT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
  p.give(1);  // given back with room: taken, not the full 0
  ASSERT_EQ(waiting.wait_for(kEnds), std::future_status::ready);
  EXPECT_EQ(waiting.get(), 1);
}

TEST(IndexerPicker, AQueueThatMakesRoomEndsTheWait) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Rooms r;
  p.give(0);
  auto waiting = std::async(std::launch::async, [&] { return p.take(r.fn()); });
  ASSERT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
  r.room[0] = true;
  p.room_made();
  ASSERT_EQ(waiting.wait_for(kEnds), std::future_status::ready);
  EXPECT_EQ(waiting.get(), 0);
}

TEST(IndexerPicker, AStopEndsEveryWaitEmptyHanded) {
  std::atomic<bool> stop{false};
  IndexerPicker p(&stop);
  Rooms r;
  p.give(0);
  auto full = std::async(std::launch::async, [&] { return p.take(r.fn()); });
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
