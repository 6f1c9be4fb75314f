#include "vm/exec/strings.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>

namespace scanback {

void stringAssign(uint8_t* d, uint32_t capacity, std::string_view value) {
  const uint16_t n = static_cast<uint16_t>(std::min<size_t>({value.size(), capacity, 65535}));
  // memmove: the value may overlap the destination (s := MID(s, ...)).
  std::memmove(d + kStringHeaderBytes, value.data(), n);
  std::memcpy(d, &n, 2);
}

namespace {
// Builds the result in scratch first, since operands may alias the destination.
void assignParts(uint8_t* d, uint32_t capacity, char* scratch, std::initializer_list<std::string_view> parts) {
  size_t n = 0;
  for (std::string_view p : parts) {
    const size_t take = std::min(p.size(), kStringScratchBytes - n);
    std::memcpy(scratch + n, p.data(), take);
    n += take;
  }
  stringAssign(d, capacity, std::string_view(scratch, n));
}

size_t clampCount(int64_t n, size_t limit) { return n <= 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), limit); }
}  // namespace

void stringConcat(uint8_t* d, uint32_t capacity, std::string_view a, std::string_view b, char* scratch) {
  assignParts(d, capacity, scratch, {a, b});
}

void stringLeft(uint8_t* d, uint32_t capacity, std::string_view s, int64_t n, char* scratch) {
  assignParts(d, capacity, scratch, {s.substr(0, clampCount(n, s.size()))});
}

void stringRight(uint8_t* d, uint32_t capacity, std::string_view s, int64_t n, char* scratch) {
  const size_t k = clampCount(n, s.size());
  assignParts(d, capacity, scratch, {s.substr(s.size() - k)});
}

void stringMid(uint8_t* d, uint32_t capacity, std::string_view s, int64_t len, int64_t pos, char* scratch) {
  const size_t start = clampCount(pos - 1, s.size());
  assignParts(d, capacity, scratch, {s.substr(start, clampCount(len, s.size() - start))});
}

void stringInsert(uint8_t* d, uint32_t capacity, std::string_view a, std::string_view b, int64_t pos, char* scratch) {
  const size_t at = clampCount(pos, a.size());  // insert after the pos-th character
  assignParts(d, capacity, scratch, {a.substr(0, at), b, a.substr(at)});
}

void stringDelete(uint8_t* d, uint32_t capacity, std::string_view s, int64_t len, int64_t pos, char* scratch) {
  const size_t start = clampCount(pos - 1, s.size());
  const size_t n = clampCount(len, s.size() - start);
  assignParts(d, capacity, scratch, {s.substr(0, start), s.substr(start + n)});
}

void stringReplace(uint8_t* d, uint32_t capacity, std::string_view a, std::string_view b, int64_t len, int64_t pos,
                   char* scratch) {
  const size_t start = clampCount(pos - 1, a.size());
  const size_t n = clampCount(len, a.size() - start);
  assignParts(d, capacity, scratch, {a.substr(0, start), b, a.substr(start + n)});
}

int64_t stringFind(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return 0;
  const size_t at = haystack.find(needle);
  return at == std::string_view::npos ? 0 : static_cast<int64_t>(at) + 1;
}

size_t formatInteger(char* buf, int64_t v) { return static_cast<size_t>(std::to_chars(buf, buf + 64, v).ptr - buf); }
size_t formatUnsigned(char* buf, uint64_t v) { return static_cast<size_t>(std::to_chars(buf, buf + 64, v).ptr - buf); }
size_t copyText(char* buf, std::string_view text) {
  const size_t n = std::min<size_t>(text.size(), 64);
  std::memcpy(buf, text.data(), n);
  return n;
}

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
}  // namespace

int64_t parseStringInteger(std::string_view s) {
  s = trim(s);
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
  std::string text(trim(s));
  std::erase(text, '_');
  if (text.empty()) return 0.0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  return end == text.c_str() ? 0.0 : v;
}

bool parseStringBool(std::string_view s) {
  s = trim(s);
  if (s.size() == 4 && (s[0] == 'T' || s[0] == 't') && (s[1] == 'R' || s[1] == 'r') && (s[2] == 'U' || s[2] == 'u') &&
      (s[3] == 'E' || s[3] == 'e'))
    return true;
  return parseStringReal(s) != 0.0;
}

}  // namespace scanback
