// Finding variables by name or address and converting values between text and image bytes:
// shared by the stimulus reader, the printed state and the debugger.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/bytecode/program.h"

namespace scanback {

// Where a variable lives in the image.
struct VariableLocation {
  uint32_t offset = 0;
  int8_t bit = -1;  // a single bit at `offset`
  const Type* type = nullptr;
  bool constant = false;
  std::string path;  // canonical spelling, e.g. "Line.filler.count"
};

// "Main.fb.x", "Main.a[3].b", "gVar": program instances, globals, members and constant indexes.
[[nodiscard]] std::optional<VariableLocation> findVariable(const Program& program, std::string_view path,
                                                           std::string& error);
// Every scalar inside `root` (a variable findVariable or findAddress found), flattened: struct
// fields, array elements and function block members in declaration order (hidden members,
// VAR_TEMP, VAR_EXTERNAL and in-out references left out); `root` itself when it is a scalar.
// Paths are spelt as findVariable spells them ("Line.filler.count", "Main.a[3].b", "M.g[1,2]").
std::vector<VariableLocation> scalarsOf(const Program& program, const VariableLocation& root);
// Every scalar of the image: scalarsOf each program instance, then each global.
std::vector<VariableLocation> allScalars(const Program& program);
// A comma-separated list of paths (as findVariable), addresses (as findAddress) and globs (`*`
// any characters, `?` one, matched case-insensitively against the paths of allScalars, e.g.
// "Line.*", "Main.a[*]"), as scalars: a structured variable stands for all of its scalars. Each
// scalar once, in the order first named. Empty with `error` when an item matches nothing.
[[nodiscard]] std::vector<VariableLocation> selectScalars(const Program& program, std::string_view list,
                                                          std::string& error);

// How a value is drawn over time (a waveform lane, a VCD variable): a 1-bit signal, a number
// (integers, bit strings, TIME and dates as their nanoseconds), a real, an enumeration or a string.
enum class SignalKind { Bool, Integer, Real, Enum, String };
SignalKind signalKind(const Type& type);
const char* signalKindName(SignalKind kind);  // "bool", "integer", "real", "enum", "string"
// The value as a number: BOOL 0/1, integers, reals, TIME in ns, an enumeration's ordinal; nullopt
// for strings.
std::optional<double> numericValue(const uint8_t* memory, uint32_t offset, int bit, const Type& type);

// "%IX0.3", "%QW2", "%MD1": located addresses inside the program's I/O areas.
[[nodiscard]] std::optional<VariableLocation> findAddress(const Program& program, std::string_view address,
                                                          std::string& error);

// The bytes of `type` for a value written as text: TRUE/FALSE/1/0, numbers (16#FF, 1_000, -3.5),
// IEC literals (T#2s, D#2024-01-15, INT#5), enumeration names, 'strings'.
[[nodiscard]] bool encodeValue(const Program& program, std::string_view text, const Type& type,
                               std::vector<uint8_t>& bytes, std::string& error);

// Reads a scalar at `offset` (bit >= 0: one bit) as a display string, e.g. "42", "TRUE", "T#1s".
std::string formatValue(const Program& program, const uint8_t* memory, uint32_t offset, int bit, const Type& type);

}  // namespace scanback
