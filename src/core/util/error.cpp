#include "util/error.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace scipis {

void fail(scipis_status code, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  throw Error(code, buf);
}

void fail_io(int errno_value, const std::string& what, const std::string& path) {
  throw Error(SCIPIS_E_IO, "could not " + what + " \"" + path +
                               "\": " + std::strerror(errno_value));
}

void fail_corrupt(const std::string& path, const std::string& why) {
  throw Error(SCIPIS_E_CORRUPT,
              "scipis index file \"" + path + "\" is damaged: " + why);
}

void set_error(scipis_error* err, scipis_status code, const char* msg) {
  if (!err) return;
  err->code = code;
  snprintf(err->message, sizeof err->message, "%s", msg);
}

}  // namespace scipis
