#include "vm/source/source.h"

namespace scanback {

std::string Diagnostics::format(const SourceSet& sources) const {
  std::string out;
  for (const Diagnostic& d : items_) {
    if (d.span.valid() && d.span.file < sources.size()) {
      out += sources.file(d.span.file).path;
      out += ':' + std::to_string(d.span.line) + ':' + std::to_string(d.span.column) + ": ";
    }
    out += d.severity == Severity::Error ? "error: " : d.severity == Severity::Warning ? "warning: " : "note: ";
    out += d.message;
    out += '\n';
  }
  return out;
}

namespace {
// ASCII only, as std::toupper in the "C" locale scanback runs in (it never calls setlocale), without
// a call per character: names are upper-cased for every lookup.
char upperAscii(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }
}  // namespace

std::string upperCase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = upperAscii(c);
  return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (upperAscii(a[i]) != upperAscii(b[i])) return false;
  return true;
}

}  // namespace scanback
