// Positions and file names as the Language Server Protocol writes them, and as the front end does.
//
// The front end's SourceSpan is 1-based, its columns count bytes (vm/source/source.h). An LSP
// Position is 0-based, and its `character` counts UTF-16 code units unless the client agreed to
// UTF-8 in `initialize` (general.positionEncodings, LSP 3.17): a LineMap converts either way over
// one text. A document is named by a `file://` URI; uriToPath and pathToUri convert, with the
// percent-encoding of RFC 3986.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/source/source.h"

namespace scanback::lsp {

enum class PositionEncoding { Utf16, Utf8 };

// A 0-based position: `character` in the session's encoding.
struct Position {
  uint32_t line = 0;
  uint32_t character = 0;
};

struct Range {
  Position start;
  Position end;
};

// Where each line of a text starts, to convert between byte offsets, SourceSpans and LSP positions.
class LineMap {
 public:
  explicit LineMap(std::string_view text);

  size_t lineCount() const { return starts_.size(); }
  // The bytes of 0-based line `line`, without its line break ("" past the end).
  std::string_view line(uint32_t line) const;
  // The byte offset of an LSP position (clamped to its line: a position past a line's end means
  // its end, as the protocol says).
  size_t offset(Position p, PositionEncoding encoding) const;
  // 1-based line and byte column of an LSP position, as a SourceSpan counts them.
  void toSource(Position p, PositionEncoding encoding, uint32_t& line, uint32_t& column) const;
  // An LSP position of a 1-based line and byte column.
  Position position(uint32_t line, uint32_t column, PositionEncoding encoding) const;
  // The range of a span; a span without an end covers the identifier (or one character) at its start.
  Range range(const SourceSpan& span, PositionEncoding encoding) const;

 private:
  std::string_view text_;
  std::vector<size_t> starts_;
};

// The path of a `file:` URI (percent-decoded); nullopt for another scheme or a malformed one.
std::optional<std::string> uriToPath(std::string_view uri);
// `file://` and the absolute path, percent-encoded where RFC 3986 requires it.
std::string pathToUri(std::string_view path);

}  // namespace scanback::lsp
