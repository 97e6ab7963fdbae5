#pragma once

#include <memory>
#include <string>
#include <vector>

#include "am/am_source.h"

namespace scipis::am {

// One segment holding every row of the sources but those in dead
// (ascending); empty when no row is left.
std::string merge_sources(std::vector<std::unique_ptr<Source>>& sources, const uint64_t* dead,
                          size_t ndead, Footer* stats);

}  // namespace scipis::am
