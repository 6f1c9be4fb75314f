// Source files, locations and diagnostics shared by every stage of the compiler.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scanback {

using FileId = uint32_t;

// A range in one file, 1-based, inclusive of the start, exclusive of (endLine, endColumn).
struct SourceSpan {
  FileId file = 0;
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t endLine = 0;
  uint32_t endColumn = 0;

  bool valid() const { return line != 0; }
  // The span from the start of `a` to the end of `b`.
  static SourceSpan cover(const SourceSpan& a, const SourceSpan& b) {
    return SourceSpan{a.file, a.line, a.column, b.endLine, b.endColumn};
  }
};

struct SourceFile {
  std::string path;  // as given by the user (or recorded in a trace)
  std::string text;
};

// All files of one project; a FileId indexes `files`.
class SourceSet {
 public:
  FileId add(std::string path, std::string text) {
    files_.push_back(SourceFile{std::move(path), std::move(text)});
    return static_cast<FileId>(files_.size() - 1);
  }
  const SourceFile& file(FileId id) const { return files_.at(id); }
  const std::vector<SourceFile>& files() const { return files_; }
  size_t size() const { return files_.size(); }

 private:
  std::vector<SourceFile> files_;
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceSpan span;
  std::string message;
};

// Collects diagnostics so that one run reports many errors.
class Diagnostics {
 public:
  void error(const SourceSpan& span, std::string message) {
    items_.push_back({Severity::Error, span, std::move(message)});
    ++errorCount_;
  }
  void warning(const SourceSpan& span, std::string message) {
    items_.push_back({Severity::Warning, span, std::move(message)});
  }
  bool hasErrors() const { return errorCount_ > 0; }
  size_t errorCount() const { return errorCount_; }
  const std::vector<Diagnostic>& items() const { return items_; }
  // "file:line:col: error: message" lines, one per diagnostic, in report order.
  std::string format(const SourceSet& sources) const;

 private:
  std::vector<Diagnostic> items_;
  size_t errorCount_ = 0;
};

// Upper-cased copy: IEC identifiers and keywords are case-insensitive.
std::string upperCase(std::string_view text);
bool equalsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace scanback
