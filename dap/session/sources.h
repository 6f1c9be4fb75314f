// The program's source files as the client sees them: a stable identity per file (its absolute
// path when that file on this machine holds the text the program was compiled from, else a
// sourceReference served by `source`), and the
// statement starts of each file in source order, for resolving breakpoints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dap/protocol/protocol.h"
#include "vm/bytecode/program.h"

namespace scanback::dap {

// Where the sources of a program (a replayed trace's) are looked for when they are not at their
// recorded path, and how one found nowhere is named (launch arguments `sourceFolders` and
// `sourceScheme`, docs/dap.md).
struct SourceOptions {
  // A file of the same name holding the same text in one of these folders (searched recursively,
  // hidden folders, node_modules and build* left out) stands for the recorded one.
  std::vector<std::string> searchFolders;
  // Not empty: a file found nowhere is named by the URI `<scheme>://<trace path in hex>/<its
  // absolute recorded path>` as its `path`, without a sourceReference: a client that knows the
  // scheme shows it from the trace (the VS Code extension's `scanback-trace`), also after the
  // session ended. Empty: it gets a sourceReference, served by `source`.
  std::string uriScheme;
  std::string tracePath;  // the replayed trace, absolute (for uriScheme)
};

class SourceMap {
 public:
  // `baseDirectory` resolves relative paths (the launch's cwd).
  SourceMap(const Program& program, const std::string& baseDirectory, const SourceOptions& options = {});

  // The DAP Source of a file of the program.
  const Source& source(FileId file) const { return files_.at(file).source; }
  // The Source of a file of another version of the program (a cycle that began before a
  // reload): this map's Source for the same path, so the client sees one identity per file.
  Source sourceOf(const Program& program, FileId file) const;
  size_t fileCount() const { return files_.size(); }
  // The file a request's Source names: by sourceReference, by path (compared after making both
  // absolute and normal), or by file name when that is unambiguous. Nullopt when it is none of
  // the program's files.
  std::optional<FileId> find(const json& source) const;
  // The text of a file (for `source` requests).
  const std::string& text(FileId file) const;

  // Statement ids of `file`, ordered by (line, column).
  const std::vector<uint32_t>& statements(FileId file) const { return files_.at(file).statements; }
  // The first statement starting at or after (line, column) in `file`; with no column, or one
  // before the line's first non-blank character, the column snaps to that character.
  std::optional<uint32_t> resolve(FileId file, uint32_t line, std::optional<uint32_t> column) const;
  // The first non-blank column of a line (1-based), or nullopt past the end of the file.
  std::optional<uint32_t> firstNonBlankColumn(FileId file, uint32_t line) const;

 private:
  struct File {
    Source source;
    std::string normalPath;  // absolute, lexically normal
    std::vector<uint32_t> statements;
    std::vector<size_t> lineStarts;  // byte offset of each line (0-based line index)
  };
  const Program& program_;
  std::string baseDirectory_;
  std::string uriScheme_;
  std::vector<File> files_;
};

}  // namespace scanback::dap
