// How large a program's state may be (docs/language.md, "Limits"), and the checked arithmetic the
// compiler lays it out with.
//
// The image is limited to 256 MiB, and so is each call frame and the constant pool:
// - memory operands hold 30-bit offsets (vm/bytecode/opcodes.h) and a frame's operands stay below
//   kCalleeBias (2^29) until they are fixed up, so nothing the code addresses may pass 512 MiB;
// - a keyframe is one Cap'n Proto Data blob of a trace block (traces/trace.capnp), and Cap'n Proto
//   lists hold fewer than 2^29 elements: an image of 512 MiB could run but never be recorded;
// - the VM's memory is the image plus its stack (Program::stackSize), far below the 4 GiB a REF's
//   32 bits reach, and a replay holds the image several times over (checkpoints, keyframes).
// Every size and offset of the layout is computed in 64 bits with saturating operations (a sum or
// product past 2^64 stays UINT64_MAX), and the first declaration that would pass the limit is a
// compile error with the sizes, never a wrap.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace scanback {

inline constexpr uint64_t kMaxImageBytes = uint64_t{256} << 20;

// The most characters (UTF-16 units for a WSTRING) a string holds (docs/language.md, "Limits"): a
// declared capacity, a literal and every length the VM computes stay within it.
inline constexpr size_t kMaxStringUnits = 65535;

// What the compiler holds of initial values: the initial bytes of types and of frames that are
// not all zero (all-zero ones and arrays cost nothing), summed over the program. Each is below
// kMaxImageBytes, but a program (or a trace's sources) declaring many large types with initial
// values would otherwise make the compiler hold gigabytes.
inline constexpr uint64_t kMaxInitialBytes = uint64_t{512} << 20;

// The limit as messages give it: "268435456 bytes (256 MiB)".
inline std::string imageLimitText() { return fmt::format("{} bytes ({} MiB)", kMaxImageBytes, kMaxImageBytes >> 20); }

// A size as messages give it: "4294967312 bytes", or "more than 18446744073709551615 bytes" when the
// computation saturated.
inline std::string layoutSizeText(uint64_t bytes) {
  return bytes == UINT64_MAX ? fmt::format("more than {} bytes", UINT64_MAX) : fmt::format("{} bytes", bytes);
}

// Saturating arithmetic for layouts.
inline constexpr uint64_t addSize(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
inline constexpr uint64_t mulSize(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline constexpr uint64_t alignSize(uint64_t v, uint64_t a) {
  if (a <= 1 || v == UINT64_MAX) return v;
  const uint64_t up = addSize(v, a - 1);
  return up == UINT64_MAX ? UINT64_MAX : up / a * a;
}

}  // namespace scanback
