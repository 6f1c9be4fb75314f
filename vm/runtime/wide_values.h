// WSTRING and WCHAR values as text: how the debugger, --print-state and the tools show them, and
// how a value typed by a user (setVariable, stimulus) is written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vm/bytecode/types.h"

namespace scanback {

// The characters of a WSTRING (at p, with its declared capacity) or a WCHAR as UTF-8.
std::string wideText(const uint8_t* p, const Type& type);
// As ST writes it: "text" with $ escapes ($" $$ $N $R $T, $XXXX for other control units and lone
// surrogates); a WCHAR in the same quotes.
std::string wideLiteralText(const uint8_t* p, const Type& type);
// The bytes of a WSTRING or WCHAR from `text`: a "..." literal (WSTRING#"..." and WCHAR#"..." too),
// or plain text taken as UTF-8; a WCHAR also from a number (its code unit).
[[nodiscard]] bool encodeWideValue(std::string_view text, const Type& type, std::vector<uint8_t>& bytes,
                                   std::string& error);

}  // namespace scanback
