// Trimming text, in the two senses the code base needs: the blanks the IEC conversions skip
// (STRING_TO_INT(' 42 ')), and any white space around what a user wrote (stimulus cells, values
// and variable paths typed into the debugger).
#pragma once

#include <cctype>
#include <string_view>

namespace scanback {

// `s` without spaces and tabs at either end: what STRING_TO_* and WSTRING_TO_* ignore.
constexpr std::string_view trimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// `s` without white space (std::isspace: also line ends, form feeds) at either end.
inline std::string_view trimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace scanback
