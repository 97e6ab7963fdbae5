// Errors inside the block engine travel as exceptions and are turned into a
// scipis_error at the door (block_api.cpp); none leaves the engine.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <string>

#include "scipis_engine.h"

namespace scipis::block {

struct Error : std::exception {
	scipis_status code;
	std::string msg;
	Error(scipis_status c, std::string m) : code(c), msg(std::move(m)) {}
	const char *what() const noexcept override { return msg.c_str(); }
};

[[noreturn]] __attribute__((format(printf, 2, 3))) inline void
fail(scipis_status code, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	throw Error(code, buf);
}

}  // namespace scipis::block
