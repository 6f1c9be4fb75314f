#include "dap/session/sources.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

// The files named `name` in `folders` (recursively), hidden folders, node_modules and build
// folders left out; at most kMaxSearched entries are looked at, so a huge folder costs a bounded time.
constexpr size_t kMaxSearched = 20000;
std::vector<std::string> filesNamed(const std::string& name, const std::vector<std::string>& folders) {
  std::vector<std::string> out;
  size_t seen = 0;
  for (const std::string& folder : folders) {
    std::error_code ec;
    fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator() && seen < kMaxSearched; it.increment(ec), ++seen) {
      const std::string entry = it->path().filename().string();
      if (it->is_directory(ec)) {
        if (entry.starts_with('.') || entry == "node_modules" || entry == "build" || entry.starts_with("build-"))
          it.disable_recursion_pending();
        continue;
      }
      if (entry == name) out.push_back(it->path().lexically_normal().string());
    }
  }
  return out;
}

std::string hexOf(const std::string& text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : text) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// A URI's %XX escapes decoded (a client sends the URIs of its own scheme encoded).
std::string percentDecoded(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

SourceMap::SourceMap(const Program& program, const std::string& baseDirectory, const SourceOptions& options)
    : program_(program), baseDirectory_(baseDirectory), uriScheme_(options.uriScheme) {
  for (FileId id = 0; id < program.sources.size(); ++id) {
    const SourceFile& f = program.sources.file(id);
    File file;
    file.normalPath = normal(f.path, baseDirectory);
    file.source.name = fs::path(f.path).filename().string();
    if (sameFileOnDisk(file.normalPath, f.text)) {
      file.source.path = file.normalPath;
    } else if (const std::vector<std::string> named = filesNamed(file.source.name, options.searchFolders);
               std::ranges::any_of(named, [&](const std::string& p) { return sameFileOnDisk(p, f.text); })) {
      // Moved (a trace recorded in another checkout): the file with the same text is this one, so
      // the client shows and edits the workspace's file, and its breakpoints apply.
      file.source.path = *std::ranges::find_if(named, [&](const std::string& p) { return sameFileOnDisk(p, f.text); });
    } else if (!options.uriScheme.empty() && !options.tracePath.empty()) {
      // Nowhere on this machine: named by a URI of the client's scheme, which shows it from the trace.
      file.source.path = fmt::format("{}://{}{}", options.uriScheme, hexOf(options.tracePath), file.normalPath);
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
    for (FileId id = 0; id < files_.size(); ++id)
      if (files_[id].source.path == *path) return id;  // as this map named it (a mapped file, a URI)
    // A URI of the client's scheme (encoded by the client): its path is the recorded one.
    if (const std::string prefix = uriScheme_ + "://"; !uriScheme_.empty() && path->starts_with(prefix)) {
      const size_t slash = path->find('/', prefix.size());
      if (slash == std::string::npos) return std::nullopt;
      const std::string recorded = percentDecoded(path->substr(slash));
      for (FileId id = 0; id < files_.size(); ++id)
        if (files_[id].normalPath == recorded) return id;
      return std::nullopt;
    }
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
