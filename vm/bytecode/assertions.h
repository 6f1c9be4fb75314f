// The assertions of unit tests (TEST_PROGRAM, TEST_FUNCTION_BLOCK; `scanback test`): their names
// and the message a failed one gives. The compiler emits an AFAIL with the kind, the VM makes the
// message when the assertion fails, so a test's failure reads the same in `scanback test`, in a
// fault and in a replay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace scanback {

enum class AssertKind : uint8_t { True, False, Equal, NotEqual, Near, Less, Greater };

// "ASSERT_EQUAL".
std::string_view assertName(AssertKind kind);
// The kind of an upper-case name; nullopt for any other name.
std::optional<AssertKind> assertKindNamed(std::string_view upperName);
// The number of operands: 1 (TRUE, FALSE), 2, or 3 (NEAR: expected, actual, tolerance).
int assertOperandCount(AssertKind kind);

// AFAIL's kind operand: the kind, and whether the texts are STRING values (shown in quotes) or
// WSTRING values (shown in double quotes).
inline uint32_t assertWord(AssertKind kind, bool quoted, bool wide = false) {
  return static_cast<uint32_t>(kind) | (quoted ? 0x100u : 0u) | (quoted && wide ? 0x200u : 0u);
}
inline AssertKind assertKindOf(uint32_t word) { return static_cast<AssertKind>(word & 0xFF); }
inline bool assertQuoted(uint32_t word) { return (word & 0x100u) != 0; }
inline char assertQuote(uint32_t word) { return (word & 0x200u) != 0 ? '"' : '\''; }

// "ASSERT_EQUAL failed: expected 3, got 2". `expected`, `actual` and `tolerance` are the texts of
// the operands (unused ones are ignored).
std::string assertionMessage(AssertKind kind, bool quoted, std::string_view expected, std::string_view actual,
                             std::string_view tolerance, char quote = '\'');

}  // namespace scanback
