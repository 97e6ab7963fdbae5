// Which indexer a reader hands its next message to. A reader holds the
// indexer it took until it gives it back (a large file's blocks must all
// reach one indexer), and takes only one whose queue has room: an indexer
// serialising a flush takes nothing for a tenth of a second, and a reader
// that waited on its full queue while another indexer's was empty left
// that indexer idle, at the end of a build most of all, when the others
// could not make their last flush until every reader was done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

namespace scipis {

class IndexerPicker {
 public:
  explicit IndexerPicker(const std::atomic<bool>* stop) : stop_(stop) {}

  // Free from the start, or again after a take.
  void give(int indexer);
  // An indexer took a message off its queue: a reader waiting for room
  // looks again.
  void room_made();
  // A free indexer with room in its queue (has_room), waiting until there
  // is one; empty when the build stopped first. prefer: the indexer the
  // reader gave its last message to (-1: none). An indexer whose queue is
  // empty (idle) comes first, the reader's own before others; then the
  // reader's own while it has room, else the reader waits. So no indexer
  // idles while a reader has work for it (a build of a few packs is
  // shared out too), yet while the queues hold work a reader's files keep
  // going to one indexer, whose segments then hold neighbouring files
  // (smaller gaps, shared path prefixes: the Linux tree's merged index is
  // 3% smaller than when readers took any indexer with room). Without a
  // preference, the longest free with room. The
  // queries are made with the picker's lock held.
  std::optional<int> take(int prefer, const std::function<bool(int)>& has_room,
                          const std::function<bool(int)>& idle);
  // The longest free indexer whatever its queue holds, waiting for one to
  // be given back: a thread that runs every stage itself never waits on a
  // queue.
  std::optional<int> take_any();

 private:
  const std::atomic<bool>* stop_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<int> free_;
};

}  // namespace scipis
