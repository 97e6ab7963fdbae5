// Engine-internal failures travel as exceptions up to the door, where
// door.h turns them into a scipis_error; none leaves the engine.
#pragma once

#include <stdexcept>
#include <string>

#include "scipis_engine.h"

namespace scipis {

class Error : public std::runtime_error {
 public:
  Error(scipis_status code, const std::string& msg)
      : std::runtime_error(msg), code_(code) {}
  scipis_status code() const { return code_; }

 private:
  scipis_status code_;
};

[[noreturn]] void fail(scipis_status code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
// An I/O failure on path, with strerror(errno_value) appended.
[[noreturn]] void fail_io(int errno_value, const std::string& what,
                          const std::string& path);
[[noreturn]] void fail_corrupt(const std::string& path, const std::string& why);

void set_error(scipis_error* err, scipis_status code, const char* msg);

}  // namespace scipis
