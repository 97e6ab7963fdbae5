#include "util/boot_id.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <mutex>

#include "util/fileio.h"

namespace scipis {

namespace {

std::mutex boot_mu;
bool boot_read = false, boot_overridden = false;
std::optional<BootId> boot_kernel, boot_test;

// The 32 hex digits of the file's UUID, dashes skipped.
std::optional<BootId> read_boot_id() {
  Fd fd(::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  char text[64];
  const ssize_t n = ::read(fd.get(), text, sizeof text);
  if (n <= 0) return std::nullopt;
  BootId id{};
  size_t digits = 0;
  for (ssize_t i = 0; i < n && digits < 32; i++) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '-') continue;
    if (!std::isxdigit(c)) break;
    const uint8_t v = static_cast<uint8_t>(std::isdigit(c) ? c - '0' : std::tolower(c) - 'a' + 10);
    id[digits / 2] = static_cast<uint8_t>(id[digits / 2] << 4 | v);
    digits++;
  }
  if (digits != 32) return std::nullopt;
  return id;
}

}  // namespace

std::optional<BootId> current_boot_id() {
  std::lock_guard<std::mutex> lk(boot_mu);
  if (boot_overridden) return boot_test;
  if (!boot_read) {
    boot_kernel = read_boot_id();
    boot_read = true;
  }
  return boot_kernel;
}

void set_boot_id_for_tests(std::optional<BootId> id) {
  std::lock_guard<std::mutex> lk(boot_mu);
  boot_overridden = id.has_value();
  boot_test = id;
}

}  // namespace scipis
