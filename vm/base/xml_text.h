// Text for XML reports (JUnit XML of `scanback test` and `scanback trace diff`): valid UTF-8 and
// XML 1.0 whatever it holds, since a STRING may hold any byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace scanback {

// The length of the UTF-8 sequence at text[i] when it encodes a character XML 1.0 may hold
// (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]), else 0.
inline size_t xmlCharLength(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return lead >= 0x20 || lead == 0x9 || lead == 0xA || lead == 0xD ? 1 : 0;
  const size_t more = lead >= 0xC2 && lead < 0xE0   ? 1
                      : lead >= 0xE0 && lead < 0xF0 ? 2
                      : lead >= 0xF0 && lead < 0xF5 ? 3
                                                    : 0;
  if (more == 0 || i + more >= text.size()) return 0;
  uint32_t cp = lead & (0x3Fu >> more);
  for (size_t k = 1; k <= more; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (next & 0x3Fu);
  }
  constexpr uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000) || cp == 0xFFFE || cp == 0xFFFF) return 0;
  return more + 1;
}

// Text as XML character data or an attribute value: a byte that is not part of a UTF-8 character
// XML 1.0 allows — not UTF-8 at all, or a control character — is written as the IEC escape $XX,
// two hex digits, as an ST string literal writes it ('$81', '$01'). Tab, line feed and carriage
// return stay characters.
inline std::string xmlEscaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default: {
        const size_t n = xmlCharLength(text, i);
        if (n == 0) {
          const auto byte = static_cast<unsigned char>(c);
          out += '$';
          out += kHex[byte >> 4];
          out += kHex[byte & 0xF];
          ++i;
        } else {
          out.append(text.substr(i, n));
          i += n;
        }
        continue;
      }
    }
    ++i;
  }
  return out;
}

}  // namespace scanback
