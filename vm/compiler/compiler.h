// The ST compiler: sources in, an immutable Program out (or diagnostics).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "vm/bytecode/program.h"
#include "vm/source/source.h"

namespace scanback {

// Where CODESYS, IEC 61131-3 and ruSTy disagree (docs/language.md, "Dialects"). A dialect only
// accepts or rejects a construct, never changes what an accepted program means: so a trace's
// sources replay in the most accepting one (Rusty).
enum class Dialect : uint8_t { Codesys, Iec, Rusty };
inline std::optional<Dialect> parseDialect(std::string_view name) {
  if (name == "codesys") return Dialect::Codesys;
  if (name == "iec") return Dialect::Iec;
  if (name == "rusty") return Dialect::Rusty;
  return std::nullopt;
}

struct CompileOptions {
  // codesys (the default); iec: IEC's conversion rules (as `strict`); rusty: REF_TO is also a
  // pointer (byte arithmetic, conversions between REF_TO types).
  Dialect dialect = Dialect::Codesys;
  uint32_t stackSize = 256 * 1024;  // call-frame memory after the image
  // IEC's conversion rules only: the implicit conversions CODESYS accepts (between all integer,
  // bit string and real types) are errors instead of warnings (docs/language.md).
  bool strict = false;
  // The TEST_PROGRAM or TEST_FUNCTION_BLOCK to run (`scanback test`): the program then has one
  // task, named after it, that runs one instance of it; the project's own tasks and program
  // instances are left out. Empty: the project's tasks (test POUs are compiled, never run).
  std::string test;
  // Nonzero when compiling a trace's sources to replay it: the image size the trace recorded. A
  // larger image is an error before it is allocated (the sources of a crafted trace may declare
  // far more than its header says; a trace whose program compiles to another size does not
  // replay anyway).
  uint32_t recordedImageSize = 0;
};

// Parses, checks and compiles every file of `sources` as one project. Returns null when any
// error was reported to `diagnostics` (warnings alone still produce a program).
[[nodiscard]] std::shared_ptr<const Program> compileProject(const SourceSet& sources, Diagnostics& diagnostics,
                                                            const CompileOptions& options = {});

// Reads files from disk into a SourceSet; an unreadable file is reported and skipped.
SourceSet loadSourceFiles(const std::vector<std::string>& paths, Diagnostics& diagnostics);

}  // namespace scanback
