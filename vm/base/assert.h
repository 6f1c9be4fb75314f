// Internal assertions: a broken promise of our own code, never bad input. Bad input (ST source,
// trace bytes, DAP or control messages) gets a clear error with its location instead
// (docs/architecture.md, conventions).
//
// SB_ASSERT(cond, fmt, args...) is checked in every build: it prints the condition, the place and
// the formatted values that matter, then aborts, so a bug shows where it happens and not later
// as a wrong image or a divergence.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace scanback::detail {

[[noreturn]] inline void assertionFailed(const char* condition, const char* file, int line, const std::string& detail) {
  std::fprintf(stderr, "%s:%d: internal error: assertion '%s' failed%s%s\n", file, line, condition,
               detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace scanback::detail

#define SB_ASSERT(cond, ...)                                                                         \
  do {                                                                                               \
    if (!(cond)) [[unlikely]]                                                                        \
      ::scanback::detail::assertionFailed(#cond, __FILE__, __LINE__, ::fmt::format("" __VA_ARGS__)); \
  } while (0)
