// The comment that documents a declaration, as the language server's hover and the debug
// adapter's Variables show it: one reading of declaration comments for both (the lexer skips
// comments; they are read from the source text around the declaration the front end located).
// Defined in vm/source/source.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "vm/source/source.h"

namespace scanback {

// The comment that documents the declaration starting at `span`: on its line after it (the first
// `(* *)`, `/* */` or `//` outside a string), else the comment lines right above it (joined by line
// breaks), without the comment markers; "" when there is none. `lineAt(n)` is 0-based line n of
// the span's file without its line break ("" past the end).
std::string declarationComment(const std::function<std::string_view(uint32_t)>& lineAt, const SourceSpan& span);

}  // namespace scanback
