// Errors inside the block engine are the engine's own (util/error.h): they
// travel as exceptions and become a scipis_error at the door.
#pragma once

#include "util/error.h"

namespace scipis::block {

using scipis::Error;
using scipis::fail;

}  // namespace scipis::block
