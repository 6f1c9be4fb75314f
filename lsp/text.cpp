#include "lsp/text.h"

#include <algorithm>

namespace scanback::lsp {

namespace {

// Bytes of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte, so that
// bad bytes count as one unit each and never make a loop stall).
size_t sequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

bool identifierByte(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

LineMap::LineMap(std::string_view text) : text_(text) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts_.push_back(i + 1);
}

std::string_view LineMap::line(uint32_t line) const {
  if (line >= starts_.size()) return {};
  const size_t start = starts_[line];
  size_t end = line + 1 < starts_.size() ? starts_[line + 1] - 1 : text_.size();
  if (end > start && text_[end - 1] == '\r') --end;
  return text_.substr(start, end - start);
}

size_t LineMap::offset(Position p, PositionEncoding encoding) const {
  if (p.line >= starts_.size()) return text_.size();
  const std::string_view l = line(p.line);
  if (encoding == PositionEncoding::Utf8) return starts_[p.line] + std::min<size_t>(p.character, l.size());
  size_t bytes = 0;
  uint32_t units = 0;
  while (bytes < l.size() && units < p.character) {
    const size_t n = std::min(sequenceLength(static_cast<unsigned char>(l[bytes])), l.size() - bytes);
    units += n == 4 ? 2 : 1;  // a character beyond the BMP is a surrogate pair in UTF-16
    bytes += n;
  }
  return starts_[p.line] + bytes;
}

void LineMap::toSource(Position p, PositionEncoding encoding, uint32_t& line, uint32_t& column) const {
  const size_t at = offset(p, encoding);
  line = std::min<uint32_t>(p.line, static_cast<uint32_t>(starts_.size() - 1)) + 1;
  column = static_cast<uint32_t>(at - starts_[line - 1]) + 1;
}

Position LineMap::position(uint32_t line, uint32_t column, PositionEncoding encoding) const {
  if (line == 0) return {};
  const uint32_t l = line - 1;
  if (l >= starts_.size()) return Position{static_cast<uint32_t>(starts_.size() - 1), 0};
  const std::string_view text = this->line(l);
  const size_t bytes = std::min<size_t>(column == 0 ? 0 : column - 1, text.size());
  if (encoding == PositionEncoding::Utf8) return Position{l, static_cast<uint32_t>(bytes)};
  uint32_t units = 0;
  for (size_t i = 0; i < bytes;) {
    const size_t n = std::min(sequenceLength(static_cast<unsigned char>(text[i])), text.size() - i);
    units += n == 4 ? 2 : 1;
    i += n;
  }
  return Position{l, units};
}

Range LineMap::range(const SourceSpan& span, PositionEncoding encoding) const {
  Range r;
  r.start = position(span.line, span.column, encoding);
  if (span.endLine != 0 && (span.endLine > span.line || span.endColumn > span.column)) {
    r.end = position(span.endLine, span.endColumn, encoding);
    return r;
  }
  // No end: the word at the start, or one character.
  const std::string_view text = span.line ? line(span.line - 1) : std::string_view();
  size_t from = span.column ? span.column - 1 : 0, to = from;
  while (to < text.size() && identifierByte(text[to])) ++to;
  if (to == from && to < text.size()) ++to;
  r.end = position(span.line, static_cast<uint32_t>(to + 1), encoding);
  return r;
}

std::optional<std::string> uriToPath(std::string_view uri) {
  constexpr std::string_view scheme = "file://";
  if (uri.size() < scheme.size() || !equalsIgnoreCase(uri.substr(0, scheme.size()), scheme)) return std::nullopt;
  std::string_view rest = uri.substr(scheme.size());
  // file://host/path: only the local host (empty or "localhost") names a file of this machine.
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view host = rest.substr(0, slash);
  if (!host.empty() && !equalsIgnoreCase(host, "localhost")) return std::nullopt;
  rest = rest.substr(slash);
  std::string path;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%') {
      if (i + 2 >= rest.size()) return std::nullopt;
      const int hi = hexValue(rest[i + 1]), lo = hexValue(rest[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      path += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (rest[i] == '?' || rest[i] == '#') {
      break;
    } else {
      path += rest[i];
    }
  }
  if (path.find('\0') != std::string::npos) return std::nullopt;
  return path;
}

std::string pathToUri(std::string_view path) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string uri = "file://";
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    const bool plain = identifierByte(ch) || c == '/' || c == '-' || c == '.' || c == '~';
    if (plain) {
      uri += ch;
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    }
  }
  return uri;
}

}  // namespace scanback::lsp
