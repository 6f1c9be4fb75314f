#include "vm/compiler/statement_reads.h"

#include <fmt/format.h>

#include <mutex>

#include "vm/compiler/compiler_impl.h"

namespace scanback {

std::shared_ptr<const StatementReads> statementReads(const Program& program, std::string& error) {
  static std::mutex mutex;
  static std::string cachedHash;
  static std::shared_ptr<const StatementReads> cached;
  std::lock_guard<std::mutex> lock(mutex);
  if (cached && cachedHash == program.hash && cached->of.size() == program.statements.size()) return cached;
  CompileOptions options;
  options.stackSize = program.stackSize;
  options.strict = !program.codesysConversions;
  options.test = program.test;
  options.recordedImageSize = program.imageSize();
  Diagnostics diagnostics;
  auto reads = std::make_shared<StatementReads>();
  compiler::Compiler c(program.sources, diagnostics, options);
  c.collectReads(&reads->of);
  const std::shared_ptr<const Program> again = c.run();
  if (!again || again->hash != program.hash || reads->of.size() != program.statements.size()) {
    error = again ? fmt::format("the program's sources compile to another program ({} statements, {} expected)",
                                reads->of.size(), program.statements.size())
                  : "the program's sources do not compile: " + diagnostics.format(program.sources);
    return nullptr;
  }
  cachedHash = program.hash;
  cached = std::move(reads);
  return cached;
}

std::string spanText(const SourceSet& sources, const SourceSpan& span) {
  if (!span.valid() || span.file >= sources.size()) return "";
  const std::string& text = sources.file(span.file).text;
  // The byte offset of (line, column), or npos.
  auto offsetOf = [&](uint32_t line, uint32_t column) -> size_t {
    size_t at = 0;
    for (uint32_t l = 1; l < line; ++l) {
      at = text.find('\n', at);
      if (at == std::string::npos) return std::string::npos;
      ++at;
    }
    return column >= 1 && at + column - 1 <= text.size() ? at + column - 1 : std::string::npos;
  };
  const size_t begin = offsetOf(span.line, span.column), end = offsetOf(span.endLine, span.endColumn);
  if (begin == std::string::npos || end == std::string::npos || end < begin) return "";
  std::string out = text.substr(begin, end - begin);
  for (char& ch : out)
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
  return out;
}

}  // namespace scanback
