#include "dap/session/sources.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace scanback::dap {

namespace fs = std::filesystem;

namespace {
std::string normal(const std::string& path, const std::string& base) {
  std::error_code ec;
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base) / p;
  return p.lexically_normal().string();
}
// Whether `path` is a file holding exactly `text`.
bool sameFileOnDisk(const std::string& path, const std::string& text) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != text.size() || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::string content(text.size(), '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  return in.gcount() == static_cast<std::streamsize>(text.size()) && content == text;
}

}  // namespace

SourceMap::SourceMap(const Program& program, const std::string& baseDirectory)
    : program_(program), baseDirectory_(baseDirectory) {
  for (FileId id = 0; id < program.sources.size(); ++id) {
    const SourceFile& f = program.sources.file(id);
    File file;
    file.normalPath = normal(f.path, baseDirectory);
    file.source.name = fs::path(f.path).filename().string();
    if (sameFileOnDisk(file.normalPath, f.text)) {
      file.source.path = file.normalPath;
    } else {
      // Not on this machine, or changed since (a trace recorded elsewhere or earlier): the client
      // gets the text the program was compiled from.
      file.source.sourceReference = static_cast<int64_t>(id) + 1;  // served by `source`
    }
    file.lineStarts.push_back(0);
    for (size_t i = 0; i < f.text.size(); ++i)
      if (f.text[i] == '\n') file.lineStarts.push_back(i + 1);
    files_.push_back(std::move(file));
  }
  for (uint32_t s = 0; s < program.statements.size(); ++s) {
    const SourceSpan& span = program.statements[s].span;
    if (span.valid() && span.file < files_.size()) files_[span.file].statements.push_back(s);
  }
  for (File& f : files_) {
    std::sort(f.statements.begin(), f.statements.end(), [&](uint32_t a, uint32_t b) {
      const SourceSpan &x = program.statements[a].span, &y = program.statements[b].span;
      return std::tie(x.line, x.column, a) < std::tie(y.line, y.column, b);
    });
  }
}

std::optional<FileId> SourceMap::find(const json& source) const {
  if (!source.is_object()) return std::nullopt;
  if (auto ref = optionalMember<int64_t>(source, "sourceReference"); ref && *ref > 0) {
    if (static_cast<uint64_t>(*ref) <= files_.size()) return static_cast<FileId>(*ref - 1);
    return std::nullopt;
  }
  if (auto path = optionalMember<std::string>(source, "path"); path && !path->empty()) {
    const std::string wanted = normal(*path, fs::current_path().string());
    for (FileId id = 0; id < files_.size(); ++id)
      if (files_[id].normalPath == wanted) return id;
    // A path recorded elsewhere (another machine's checkout): the file name, when unambiguous.
    const std::string name = fs::path(*path).filename().string();
    std::optional<FileId> match;
    for (FileId id = 0; id < files_.size(); ++id) {
      if (files_[id].source.name != name) continue;
      if (match) return std::nullopt;
      match = id;
    }
    return match;
  }
  return std::nullopt;
}

Source SourceMap::sourceOf(const Program& program, FileId file) const {
  if (&program == &program_) return source(file);
  if (file >= program.sources.size()) return Source{"?", "", 0};
  const std::string& path = program.sources.file(file).path;
  const std::string wanted = normal(path, baseDirectory_);
  for (const File& f : files_)
    if (f.normalPath == wanted) return f.source;
  // A file the new version no longer has: named by its path when it is on this machine.
  Source gone;
  gone.name = fs::path(path).filename().string();
  std::error_code ec;
  if (fs::is_regular_file(wanted, ec)) gone.path = wanted;
  return gone;
}

const std::string& SourceMap::text(FileId file) const { return program_.sources.file(file).text; }

std::optional<uint32_t> SourceMap::firstNonBlankColumn(FileId file, uint32_t line) const {
  const File& f = files_.at(file);
  if (line == 0 || line > f.lineStarts.size()) return std::nullopt;
  const std::string& text = program_.sources.file(file).text;
  size_t i = f.lineStarts[line - 1];
  uint32_t column = 1;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
    ++i;
    ++column;
  }
  return column;
}

std::optional<uint32_t> SourceMap::resolve(FileId file, uint32_t line, std::optional<uint32_t> column) const {
  const std::optional<uint32_t> first = firstNonBlankColumn(file, line);
  uint32_t col = column.value_or(0);
  if (!column || (first && col < *first)) col = first.value_or(1);
  for (uint32_t s : files_.at(file).statements) {
    const SourceSpan& span = program_.statements[s].span;
    if (std::tie(span.line, span.column) >= std::tie(line, col)) return s;
  }
  return std::nullopt;
}

}  // namespace scanback::dap
