// Runs an engine entry point so that nothing unwinds through the door:
// every exception becomes a status code and a message.
#pragma once

#include <new>

#include "util/error.h"

namespace scipis {

template <typename F>
int guarded(scipis_error* err, F&& body) {
  try {
    body();
    if (err) {
      err->code = SCIPIS_OK;
      err->message[0] = '\0';
    }
    return 0;
  } catch (const Error& e) {
    set_error(err, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    set_error(err, SCIPIS_E_NOMEM, "scipis engine ran out of memory");
  } catch (const std::exception& e) {
    set_error(err, SCIPIS_E_INTERNAL, e.what());
  } catch (...) {
    set_error(err, SCIPIS_E_INTERNAL, "unknown failure in the scipis engine");
  }
  return -1;
}

}  // namespace scipis
