// Running out of memory is reported, never a crash (docs/architecture.md: conventions). Where
// large blocks are allocated (the VM's memory, a compile, a trace block), a failed allocation
// becomes an OutOfMemory that says what the memory was for; a command's top level
// (cli/main.cpp), a debug session's request dispatch and each thread's entry point turn it, or
// any other std::bad_alloc, into a message — "out of memory while allocating the VM's memory
// (...)" — and the exit code kExitOutOfMemory.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace scanback {

// The exit code of a command (and of a debug session's program) that ran out of memory.
inline constexpr int kExitOutOfMemory = 6;

class OutOfMemory : public std::bad_alloc {
 public:
  // `doing`: "allocating the VM's memory (...)"; `bytes`: the allocation that failed (0: unknown).
  OutOfMemory(std::string_view doing, uint64_t bytes)
      : text_(bytes ? fmt::format("out of memory while {}: {} bytes could not be allocated", doing, bytes)
                    : fmt::format("out of memory while {}", doing)) {}
  const char* what() const noexcept override { return text_.c_str(); }

 private:
  std::string text_;
};

// The message for any std::bad_alloc: an OutOfMemory's own, else "out of memory while {doing}".
inline std::string outOfMemoryText(const std::bad_alloc& e, std::string_view doing) {
  if (const auto* known = dynamic_cast<const OutOfMemory*>(&e)) return known->what();
  return fmt::format("out of memory while {}", doing);
}

// Runs `allocate`; a std::bad_alloc from it that says nothing yet becomes an OutOfMemory. `doing`
// is called only then.
template <typename Allocate, typename Doing>
decltype(auto) allocating(Allocate&& allocate, uint64_t bytes, Doing&& doing) {
  try {
    return std::forward<Allocate>(allocate)();
  } catch (const OutOfMemory&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(doing(), bytes);
  }
}

}  // namespace scanback
