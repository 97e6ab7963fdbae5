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

// A picker with the given indexers free, in that order.
class Picking : public ::testing::Test {
 protected:
  void give(std::initializer_list<int> ixs) {
    for (int ix : ixs) p.give(ix);
  }
  // A take that must wait until change(), then end with want. A take
  // that never ends is stopped, so that the test fails instead of hanging.
  void waits_until(const std::function<std::optional<int>()>& taking,
                   const std::function<void()>& change, int want) {
    auto waiting = std::async(std::launch::async, taking);
    EXPECT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
    change();
    const bool ended = waiting.wait_for(kEnds) == std::future_status::ready;
    EXPECT_TRUE(ended);
    if (!ended) stop = true;
    EXPECT_EQ(waiting.get(), want);
  }
  std::atomic<bool> stop{false};
  IndexerPicker p{&stop};
  Queues q;
};

TEST_F(Picking, WithoutAPreferenceTheLongestFreeWithRoom) {
  give({2, 0, 1});
  q.room[0] = q.room[1] = q.room[2] = true;
  EXPECT_EQ(take(p, -1, q), 2);
  q.room[0] = false;  // 0 has waited longer than 1, but its queue is full
  EXPECT_EQ(take(p, -1, q), 1);
}

TEST_F(Picking, AReaderKeepsToItsIndexerWhileItHasRoom) {
  give({0, 1, 2});
  q.room[0] = q.room[1] = q.room[2] = true;  // each with work queued
  EXPECT_EQ(take(p, 1, q), 1);                 // not 0, free longer
  p.give(1);
  EXPECT_EQ(take(p, 1, q), 1);
}

// An indexer with nothing queued is fed first (the reader's own if it is
// one of them): at the start of a build, or of a small one, every indexer
// gets work.
TEST_F(Picking, AnIndexerWithNothingQueuedComesFirst) {
  give({0, 1, 2});
  q.room[0] = q.room[1] = q.room[2] = true;
  q.idle[0] = q.idle[2] = true;
  EXPECT_EQ(take(p, 1, q), 0);
  p.give(0);
  EXPECT_EQ(take(p, 2, q), 2);  // its own, though 0 and 1 were free longer
}

// The case that left an indexer idle: the reader's indexer is flushing,
// its queue full, while another's runs dry. Until it has, the reader waits
// (its files stay together); once it has, the reader moves to it.
TEST_F(Picking, AFullIndexerIsLeftOnlyForOneThatRanDry) {
  give({0, 1});
  q.room[1] = true;  // 1 has room but work queued
  waits_until([&] { return take(p, 0, q); }, [&] { q.idle[1] = true; p.room_made(); }, 1);
}

TEST_F(Picking, RoomInTheReadersIndexerEndsTheWait) {
  give({0, 1});
  q.room[1] = true;
  waits_until([&] { return take(p, 0, q); }, [&] { q.room[0] = true; p.room_made(); }, 0);
}

// Held by another reader (a large file's blocks), the reader's indexer is
// waited for, or another that runs dry.
TEST_F(Picking, AHeldIndexerIsWaitedForUntilGivenBack) {
  give({0, 1});
  q.room[0] = q.room[1] = true;
  EXPECT_EQ(take(p, 1, q), 1);  // the other reader's
  waits_until([&] { return take(p, 1, q); }, [&] { p.give(1); }, 1);
}

TEST_F(Picking, AStopEndsEveryWaitEmptyHanded) {
  p.give(0);
  auto full = std::async(std::launch::async, [&] { return take(p, -1, q); });
  IndexerPicker none(&stop);
  auto taken = std::async(std::launch::async, [&] { return none.take_any(); });
  EXPECT_EQ(full.wait_for(kStillWaiting), std::future_status::timeout);
  EXPECT_EQ(taken.wait_for(0ms), std::future_status::timeout);
  stop = true;  // no notify: the waits see it on their own
  EXPECT_EQ(full.wait_for(kEnds), std::future_status::ready);
  EXPECT_EQ(taken.wait_for(kEnds), std::future_status::ready);
  EXPECT_FALSE(full.get().has_value());
  EXPECT_FALSE(taken.get().has_value());
}

// A thread that runs every stage itself delivers at once: room does not
// matter, only that the indexer is free.
TEST_F(Picking, TakeAnyIgnoresRoomAndWaitsForAGiveBack) {
  give({1, 0});
  EXPECT_EQ(p.take_any(), 1);
  EXPECT_EQ(p.take_any(), 0);
  waits_until([&] { return p.take_any(); }, [&] { p.give(0); }, 0);
}

}  // namespace
