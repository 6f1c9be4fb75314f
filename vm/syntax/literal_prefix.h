// The type prefix of a typed literal ("INT" in INT#5), as the lexer normalises it: one of a few
// spellings, held as a pointer to the static one, so that a token or an AST node carries it in
// eight bytes.
#pragma once

#include <string_view>

#include "vm/base/assert.h"

namespace scanback {

// Upper-case and normalised (T# -> "TIME", D# -> "DATE", ...); empty: none.
class LiteralPrefix {
 public:
  LiteralPrefix() = default;
  explicit LiteralPrefix(std::string_view text) : text_(intern(text)) {}
  bool empty() const { return text_ == nullptr; }
  std::string_view str() const { return text_ ? std::string_view(text_) : std::string_view(); }
  operator std::string_view() const { return str(); }  // NOLINT: reads as its text
  friend bool operator==(const LiteralPrefix& a, std::string_view b) { return a.str() == b; }

 private:
  static const char* intern(std::string_view text) {
    static constexpr const char* kKnown[] = {"SINT",  "INT",  "DINT",  "LINT",  "USINT",  "UINT",    "UDINT", "ULINT",
                                             "BYTE",  "WORD", "DWORD", "LWORD", "REAL",   "LREAL",   "BOOL",  "TIME",
                                             "LTIME", "DATE", "TOD",   "DT",    "STRING", "WSTRING", "WCHAR"};
    if (text.empty()) return nullptr;
    for (const char* known : kKnown)
      if (text == known) return known;
    SB_ASSERT(false, "a literal prefix the lexer does not make");
    return nullptr;
  }
  const char* text_ = nullptr;
};

}  // namespace scanback
