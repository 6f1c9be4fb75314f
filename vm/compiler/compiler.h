// The ST compiler: sources in, an immutable Program out (or diagnostics).
#pragma once

#include <memory>

#include "vm/bytecode/program.h"
#include "vm/source/source.h"

namespace scanback {

struct CompileOptions {
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
