// The running kernel's boot id: a record written without a sync is
// trusted only in the boot that wrote it (the page cache that holds it
// survives a killed process, not a crash of the machine).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace scipis {

using BootId = std::array<uint8_t, 16>;

// The boot id (/proc/sys/kernel/random/boot_id), read once; nullopt where
// the kernel has none to give: nothing is then written unsynced.
std::optional<BootId> current_boot_id();
// Tests: pretend to run in another boot (nullopt: the kernel's again).
void set_boot_id_for_tests(std::optional<BootId> id);

}  // namespace scipis
