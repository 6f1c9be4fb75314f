#include "vm/runtime/wide_values.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "vm/base/text.h"
#include "vm/exec/strings.h"
#include "vm/source/source.h"
#include "vm/syntax/parser.h"

namespace scanback {

namespace {

std::u16string unitsOf(const uint8_t* p, const Type& type) {
  if (type.kind == TypeKind::WChar) {
    char16_t u;
    std::memcpy(&u, p, 2);
    return std::u16string(1, u);
  }
  std::u16string units(stringLengthWithin(p, type.capacity, true), u'\0');
  std::memcpy(units.data(), p, units.size() * 2);
  return units;
}

}  // namespace

std::string wideText(const uint8_t* p, const Type& type) { return utf8FromWide(unitsOf(p, type)); }

std::string wideLiteralText(const uint8_t* p, const Type& type) {
  const std::u16string units = unitsOf(p, type);
  std::string out = "\"";
  for (size_t i = 0; i < units.size(); ++i) {
    const char16_t u = units[i];
    const bool pair =
        u >= 0xD800 && u < 0xDC00 && i + 1 < units.size() && units[i + 1] >= 0xDC00 && units[i + 1] < 0xE000;
    if (pair) {
      out += utf8FromWide(std::u16string_view(units).substr(i, 2));
      ++i;
    } else if (u == u'"') {
      out += "$\"";
    } else if (u == u'$') {
      out += "$$";
    } else if (u == u'\n') {
      out += "$N";
    } else if (u == u'\t') {
      out += "$T";
    } else if (u == u'\r') {
      out += "$R";
    } else if (u < 0x20 || u == 0x7F || (u >= 0xD800 && u < 0xE000)) {
      out += fmt::format("${:04X}", static_cast<unsigned>(u));
    } else {
      out += utf8FromWide(std::u16string_view(&u, 1));
    }
  }
  return out + "\"";
}

bool encodeWideValue(std::string_view text, const Type& type, std::vector<uint8_t>& bytes, std::string& error) {
  const std::string_view t = trimBlanks(text);
  std::u16string units;
  // "...", WSTRING#"..." or WCHAR#"...": parsed as ST; anything else is the text itself.
  const size_t quote = t.find('"');
  const bool quoted = t.size() >= 2 && t.back() == '"' && quote != t.size() - 1 &&
                      (quote == 0 || t.substr(0, quote).find('#') == quote - 1);
  if (t.size() >= 2 && t.front() == '\'' && t.back() == '\'') {
    error = fmt::format("{} is a STRING literal; a {} is written \"...\"", t, type.name);
    return false;
  }
  if (quoted) {
    SourceSet src;
    src.add("<value>", std::string(t));
    Diagnostics d;
    ast::ExprPtr e = parseExpression(src, 0, d);
    if (d.hasErrors() || !e || e->kind != ast::ExprKind::StringLiteral || e->typePrefix.empty() ||
        e->typePrefix == "STRING") {
      error = fmt::format("{} is not a WSTRING literal", t);
      return false;
    }
    units.resize(e->text.size() / 2);
    std::memcpy(units.data(), e->text.data(), units.size() * 2);
  } else if (type.kind == TypeKind::WChar && !t.empty() && t.front() >= '0' && t.front() <= '9') {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || v > 0xFFFF) {
      error = fmt::format("'{}' is not a WCHAR (\"x\" or a code unit 0..65535)", t);
      return false;
    }
    units.assign(1, static_cast<char16_t>(v));
  } else {
    units = wideFromUtf8(t);
  }
  if (type.kind == TypeKind::WChar) {
    if (units.size() != 1) {
      error = fmt::format("a WCHAR holds one UTF-16 code unit, not {}", units.size());
      return false;
    }
    bytes.assign(2, 0);
    std::memcpy(bytes.data(), units.data(), 2);
    return true;
  }
  if (units.size() > type.capacity) {
    error = fmt::format("the string is longer than {} ({} UTF-16 units)", type.name, units.size());
    return false;
  }
  bytes.assign(type.size, 0);  // the units, then 0 units (as a STRING, encodeValue)
  std::memcpy(bytes.data(), units.data(), units.size() * 2);
  return true;
}

}  // namespace scanback
