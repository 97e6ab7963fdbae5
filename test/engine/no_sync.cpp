// The engine's unit tests never lose power (a killed process keeps the
// page cache), so their fsyncs would only cost time; crash recovery with
// real syncs is the TAP tests' (test/tap).
#include "util/fileio.h"

namespace {
const bool kSyncOff = (scipis::set_sync_enabled(false), true);
}  // namespace
