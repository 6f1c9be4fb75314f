#include "vm/source/source.h"

#include <vector>

#include "vm/source/declaration_comment.h"

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

// ------------------------------------------------------------- declaration comments

std::string declarationComment(const std::function<std::string_view(uint32_t)>& lineAt, const SourceSpan& span) {
  if (!span.valid()) return "";
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
  };
  // On the declaration's line, after its name: the first comment outside a string.
  const std::string_view line = lineAt(span.line - 1);
  char quote = 0;
  for (size_t i = span.column ? span.column - 1 : 0; i + 1 < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '/' && line[i + 1] == '/') {
      return std::string(trim(line.substr(i + 2)));
    } else if ((c == '(' || c == '/') && line[i + 1] == '*') {
      const char close = c == '(' ? ')' : '/';
      std::string_view rest = line.substr(i + 2);
      for (size_t j = 0; j + 1 < rest.size(); ++j)
        if (rest[j] == '*' && rest[j + 1] == close) return std::string(trim(rest.substr(0, j)));
      return std::string(trim(rest));
    }
  }
  // Else the comment lines right above it.
  std::vector<std::string_view> above;
  uint32_t l = span.line - 1;  // 0-based line of the declaration
  if (l == 0) return "";
  std::string_view prev = trim(lineAt(l - 1));
  if (prev.size() >= 2 && prev.substr(0, 2) == "//") {
    while (l > 0) {
      prev = trim(lineAt(l - 1));
      if (prev.size() < 2 || prev.substr(0, 2) != "//") break;
      above.push_back(trim(prev.substr(2)));
      --l;
    }
  } else if (prev.size() >= 2 && prev.substr(prev.size() - 2) == "*)") {
    for (int n = 0; l > 0 && n < 40; ++n, --l) {
      std::string_view text = trim(lineAt(l - 1));
      const size_t open = text.find("(*");
      if (n == 0) text.remove_suffix(2);
      if (open != std::string_view::npos) {
        if (open != 0) break;  // code before the comment: it documents that code
        above.push_back(trim(text.substr(2)));
        break;
      }
      above.push_back(trim(text));
    }
  }
  std::string out;
  for (size_t i = above.size(); i-- > 0;) {
    if (!out.empty()) out += '\n';
    out += above[i];
  }
  return out;
}

}  // namespace scanback
