#include "vm/exec/strings.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>

#include "vm/base/text.h"

namespace scanback {

template <class C>
void stringAssign(uint8_t* d, uint32_t capacity, std::basic_string_view<C> value) {
  const size_t n = std::min<size_t>({value.size(), capacity, kMaxStringUnits});
  // memmove: the value may overlap the destination (s := MID(s, ...)). The units after the 0 keep
  // what they held, as on the PLC (docs/language.md, "Types and their storage").
  std::memmove(d, value.data(), n * sizeof(C));
  std::memset(d + n * sizeof(C), 0, sizeof(C));
}

namespace {
// Builds the result in scratch first, since operands may alias the destination; no longer than
// the capacity it is truncated to.
template <class C>
void assignParts(uint8_t* d, uint32_t capacity, char* scratch, std::initializer_list<std::basic_string_view<C>> parts) {
  C* units = reinterpret_cast<C*>(scratch);
  const size_t room = std::min<size_t>({kStringScratchBytes / sizeof(C), capacity, kMaxStringUnits});
  size_t n = 0;
  for (std::basic_string_view<C> p : parts) {
    const size_t take = std::min(p.size(), room - n);
    std::memcpy(units + n, p.data(), take * sizeof(C));
    n += take;
  }
  stringAssign(d, capacity, std::basic_string_view<C>(units, n));
}

size_t clampCount(int64_t n, size_t limit) { return n <= 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), limit); }
}  // namespace

template <class C>
void stringConcat(uint8_t* d, uint32_t capacity, std::basic_string_view<C> a, std::basic_string_view<C> b,
                  char* scratch) {
  assignParts<C>(d, capacity, scratch, {a, b});
}

template <class C>
void stringLeft(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t n, char* scratch) {
  assignParts<C>(d, capacity, scratch, {s.substr(0, clampCount(n, s.size()))});
}

template <class C>
void stringRight(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t n, char* scratch) {
  const size_t k = clampCount(n, s.size());
  assignParts<C>(d, capacity, scratch, {s.substr(s.size() - k)});
}

template <class C>
void stringMid(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t len, int64_t pos, char* scratch) {
  const size_t start = clampCount(pos - 1, s.size());
  assignParts<C>(d, capacity, scratch, {s.substr(start, clampCount(len, s.size() - start))});
}

template <class C>
void stringInsert(uint8_t* d, uint32_t capacity, std::basic_string_view<C> a, std::basic_string_view<C> b, int64_t pos,
                  char* scratch) {
  const size_t at = clampCount(pos, a.size());  // insert after the pos-th character
  assignParts<C>(d, capacity, scratch, {a.substr(0, at), b, a.substr(at)});
}

template <class C>
void stringDelete(uint8_t* d, uint32_t capacity, std::basic_string_view<C> s, int64_t len, int64_t pos, char* scratch) {
  const size_t start = clampCount(pos - 1, s.size());
  const size_t n = clampCount(len, s.size() - start);
  assignParts<C>(d, capacity, scratch, {s.substr(0, start), s.substr(start + n)});
}

template <class C>
void stringReplace(uint8_t* d, uint32_t capacity, std::basic_string_view<C> a, std::basic_string_view<C> b, int64_t len,
                   int64_t pos, char* scratch) {
  const size_t start = clampCount(pos - 1, a.size());
  const size_t n = clampCount(len, a.size() - start);
  assignParts<C>(d, capacity, scratch, {a.substr(0, start), b, a.substr(start + n)});
}

template <class C>
int64_t stringFind(std::basic_string_view<C> haystack, std::basic_string_view<C> needle) {
  if (needle.empty()) return 0;
  const size_t at = haystack.find(needle);
  return at == std::basic_string_view<C>::npos ? 0 : static_cast<int64_t>(at) + 1;
}

#define SB_STRING_FUNCTIONS(C)                                                                                      \
  template void stringAssign<C>(uint8_t*, uint32_t, std::basic_string_view<C>);                                     \
  template void stringConcat<C>(uint8_t*, uint32_t, std::basic_string_view<C>, std::basic_string_view<C>, char*);   \
  template void stringLeft<C>(uint8_t*, uint32_t, std::basic_string_view<C>, int64_t, char*);                       \
  template void stringRight<C>(uint8_t*, uint32_t, std::basic_string_view<C>, int64_t, char*);                      \
  template void stringMid<C>(uint8_t*, uint32_t, std::basic_string_view<C>, int64_t, int64_t, char*);               \
  template void stringInsert<C>(uint8_t*, uint32_t, std::basic_string_view<C>, std::basic_string_view<C>, int64_t,  \
                                char*);                                                                             \
  template void stringDelete<C>(uint8_t*, uint32_t, std::basic_string_view<C>, int64_t, int64_t, char*);            \
  template void stringReplace<C>(uint8_t*, uint32_t, std::basic_string_view<C>, std::basic_string_view<C>, int64_t, \
                                 int64_t, char*);                                                                   \
  template int64_t stringFind<C>(std::basic_string_view<C>, std::basic_string_view<C>);
SB_STRING_FUNCTIONS(char)
SB_STRING_FUNCTIONS(char16_t)
#undef SB_STRING_FUNCTIONS

namespace {
// One code point of UTF-8 at s[i], advancing i; nullopt (one byte consumed) when malformed.
std::optional<uint32_t> nextUtf8(std::string_view s, size_t& i) {
  const auto lead = static_cast<unsigned char>(s[i++]);
  if (lead < 0x80) return lead;
  const int more = lead >= 0xF0 && lead < 0xF5   ? 3
                   : lead >= 0xE0 && lead < 0xF0 ? 2
                   : lead >= 0xC2 && lead < 0xE0 ? 1
                                                 : -1;
  if (more < 0 || i + more > s.size()) return std::nullopt;
  uint32_t cp = lead & (0x3F >> more);
  for (int k = 0; k < more; ++k) {
    const auto next = static_cast<unsigned char>(s[i + k]);
    if ((next & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (next & 0x3F);
  }
  constexpr uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return std::nullopt;
  i += static_cast<size_t>(more);
  return cp;
}

// One code point of UTF-16 at s[i], advancing i; nullopt for a lone surrogate.
std::optional<uint32_t> nextUtf16(std::u16string_view s, size_t& i) {
  const uint32_t u = s[i++];
  if (u < 0xD800 || u >= 0xE000) return u;
  if (u < 0xDC00 && i < s.size() && s[i] >= 0xDC00 && s[i] < 0xE000)
    return 0x10000 + ((u - 0xD800) << 10) + (s[i++] - 0xDC00u);
  return std::nullopt;
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}
}  // namespace

std::u16string wideFromUtf8(std::string_view s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) {
    const std::optional<uint32_t> cp = nextUtf8(s, i);
    if (!cp) {
      out += u'?';
    } else if (*cp >= 0x10000) {
      out += static_cast<char16_t>(0xD800 + ((*cp - 0x10000) >> 10));
      out += static_cast<char16_t>(0xDC00 + ((*cp - 0x10000) & 0x3FF));
    } else {
      out += static_cast<char16_t>(*cp);
    }
  }
  return out;
}

std::string utf8FromWide(std::u16string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) appendUtf8(out, nextUtf16(s, i).value_or(0xFFFD));
  return out;
}

void wideFromString(uint8_t* d, uint32_t capacity, std::string_view s, char* scratch) {
  const std::u16string w = wideFromUtf8(s.substr(0, std::min<size_t>(s.size(), kMaxStringUnits)));
  assignParts<char16_t>(d, capacity, scratch, {std::u16string_view(w)});
}

void stringFromWide(uint8_t* d, uint32_t capacity, std::u16string_view s, Narrowing how, char* scratch) {
  std::string out;
  if (how == Narrowing::Utf8) {
    out = utf8FromWide(s);
  } else {
    for (size_t i = 0; i < s.size();) {
      const std::optional<uint32_t> cp = nextUtf16(s, i);
      out += cp && *cp < 0x80 ? static_cast<char>(*cp) : '?';
    }
  }
  assignParts<char>(d, capacity, scratch, {std::string_view(out)});
}

size_t formatInteger(char* buf, int64_t v) { return static_cast<size_t>(std::to_chars(buf, buf + 64, v).ptr - buf); }
size_t formatUnsigned(char* buf, uint64_t v) { return static_cast<size_t>(std::to_chars(buf, buf + 64, v).ptr - buf); }
size_t copyText(char* buf, std::string_view text) {
  const size_t n = std::min<size_t>(text.size(), 64);
  std::memcpy(buf, text.data(), n);
  return n;
}

int64_t parseStringInteger(std::string_view s) {
  s = trimBlanks(s);
  std::string digits;
  for (char c : s)
    if (c != '_') digits += c;
  int64_t v = 0;
  const char* begin = digits.data();
  if (!digits.empty() && digits[0] == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, digits.data() + digits.size(), v);
  if (ec != std::errc()) {
    double r = parseStringReal(s);  // '12.7' converts like REAL_TO_DINT would truncate
    return static_cast<int64_t>(r);
  }
  return v;
}

double parseStringReal(std::string_view s) {
  std::string text(trimBlanks(s));
  std::erase(text, '_');
  if (text.empty()) return 0.0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  return end == text.c_str() ? 0.0 : v;
}

bool parseStringBool(std::string_view s) {
  s = trimBlanks(s);
  if (s.size() == 4 && (s[0] == 'T' || s[0] == 't') && (s[1] == 'R' || s[1] == 'r') && (s[2] == 'U' || s[2] == 'u') &&
      (s[3] == 'E' || s[3] == 'e'))
    return true;
  return parseStringReal(s) != 0.0;
}

}  // namespace scanback
