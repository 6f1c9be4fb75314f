#include "vm/source/source.h"

#include <cctype>

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

std::string upperCase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace scanback
