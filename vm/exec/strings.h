// STRING operations on CODESYS's layout: STRING(n) is n + 1 bytes, the characters then a 0 byte;
// WSTRING(n) is n + 1 UTF-16 code units, the text then a 0 unit (docs/language.md, "Types and their
// storage"). A string's length is where its first 0 is. Results are truncated to the destination's
// capacity, which always leaves room for the 0; positions are 1-based as in IEC 61131-3 and
// clamped to the string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "vm/bytecode/limits.h"
#include "vm/bytecode/opcodes.h"

namespace scanback {

// Big enough for the longest result: 65535 units of 2 bytes (a result is built no longer than the
// capacity it is truncated to).
inline constexpr size_t kStringScratchBytes = 2 * 65536 + 64;

// Bytes of a STRING(capacity) (wide: WSTRING(capacity)): the characters and the terminating 0.
inline constexpr uint32_t stringBytes(uint32_t capacity, bool wide) { return (wide ? 2 : 1) * (capacity + 1); }

// The characters of a STRING (bytes) or a WSTRING (UTF-16 code units) at s: up to the first 0, as
// the PLC reads them. A string whose 0 was overwritten (through a pointer) reads on into the bytes
// after it as on the PLC; the VM's memory and constant pool end in 0 bytes no program can write,
// so the search never leaves them (Vm::Vm). Each function below is one template over the
// character type, instantiated for both, so STRING and WSTRING behave alike.
inline std::string_view stringView(const uint8_t* s) {
  const char* c = reinterpret_cast<const char*>(s);
  return {c, strnlen(c, kMaxStringUnits)};
}
inline std::u16string_view wideStringView(const uint8_t* s) {
  // A WSTRING is 2-aligned wherever it is stored (image, frame, constant pool).
  const char16_t* u = reinterpret_cast<const char16_t*>(s);
  size_t n = 0;
  while (n < kMaxStringUnits && u[n] != 0) ++n;
  return {u, n};
}
// The same within the variable: at most `capacity` units (how the debugger's views and the state
// files show a string, whose declared type they know; the bytes after its 0 are not shown).
inline size_t stringLengthWithin(const uint8_t* s, uint32_t capacity, bool wide) {
  if (!wide) return strnlen(reinterpret_cast<const char*>(s), capacity);
  size_t n = 0;
  for (char16_t u; n < capacity; ++n) {
    std::memcpy(&u, s + 2 * n, 2);
    if (u == 0) break;
  }
  return n;
}
template <class C>
std::basic_string_view<C> unitsView(const uint8_t* s) {
  if constexpr (sizeof(C) == 1)
    return stringView(s);
  else
    return wideStringView(s);
}

template <class C>
void stringAssign(uint8_t* d, uint32_t capacity, std::basic_string_view<C> value);
template <class C>
void stringConcat(uint8_t* d, uint32_t capacity, std::basic_string_view<C> a, std::basic_string_view<C> b,
                  char* scratch);
template <class C>
void stringLeft(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t n, char* scratch);
template <class C>
void stringRight(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t n, char* scratch);
template <class C>
void stringMid(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t len, int64_t pos, char* scratch);
template <class C>
void stringInsert(uint8_t* d, uint32_t capacity, std::basic_string_view<C> a, std::basic_string_view<C> b, int64_t pos,
                  char* scratch);
template <class C>
void stringDelete(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t len, int64_t pos, char* scratch);
template <class C>
void stringReplace(uint8_t* d, uint32_t capacity, std::basic_string_view<C> a, std::basic_string_view<C> b, int64_t len,
                   int64_t pos, char* scratch);
template <class C>
int64_t stringFind(std::basic_string_view<C> haystack, std::basic_string_view<C> needle);  // 1-based, 0 when absent

// STRING (UTF-8 bytes) to WSTRING: each UTF-8 character becomes its UTF-16 units; a byte that is
// not valid UTF-8 becomes '?'.
void wideFromString(uint8_t* d, uint32_t capacity, std::string_view s, char* scratch);
// WSTRING to STRING. Ascii: every character outside ASCII becomes '?' (WSTRING_TO_STRING); Utf8:
// UTF-8 (how scanback shows a WSTRING: messages, the debugger; a lone surrogate becomes U+FFFD).
void stringFromWide(uint8_t* d, uint32_t capacity, std::u16string_view s, Narrowing how, char* scratch);
std::string utf8FromWide(std::u16string_view s);  // as Narrowing::Utf8
std::u16string wideFromUtf8(std::string_view s);  // as wideFromString

size_t formatInteger(char* buf, int64_t v);
size_t formatUnsigned(char* buf, uint64_t v);
size_t copyText(char* buf, std::string_view text);  // buf holds 64 bytes
int64_t parseStringInteger(std::string_view s);     // 0 when not a number
double parseStringReal(std::string_view s);
bool parseStringBool(std::string_view s);

}  // namespace scanback
