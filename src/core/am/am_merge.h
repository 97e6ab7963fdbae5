#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "am/am_source.h"

namespace scipis::am {

// One segment holding every row of the sources but those in dead
// (ascending); empty when no row is left. Once *stop is set (when given)
// it fails with SCIPIS_E_CANCELED within a few hundred terms.
std::string merge_sources(std::vector<std::unique_ptr<Source>>& sources, const uint64_t* dead,
                          size_t ndead, Footer* stats, const std::atomic<bool>* stop = nullptr,
                          size_t expect_bytes = 0);

// Whole segments held in memory (a build's flushes) merged into one, their
// rows in the order given, then tail's (spent afterwards) when there is one.
std::string merge_segments(const std::vector<std::string>& segs, std::unique_ptr<MemIndex> tail,
                           const std::atomic<bool>* stop = nullptr);

}  // namespace scipis::am
