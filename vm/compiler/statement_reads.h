// What each statement of a compiled program reads (vm/sema/reads.h), by statement id: the typed
// front end's answer, for `trace why` and the DAP's `scanback/why` (docs/explain.md).
//
// A Program does not keep them: they are found by compiling the program's sources once more,
// with the options it was compiled with, and collecting each statement's reads as the compiler
// lowers it (so the ids are the program's). Only an explanation needs them; the last program's
// are kept, so that a debug session's many requests compile once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"

namespace scanback {

struct StatementReads {
  std::vector<std::vector<SourceSpan>> of;  // statement id -> the spans of its reads
};

// Null with `error` when the sources no longer compile to the same program (they always do: they
// are the program's own).
[[nodiscard]] std::shared_ptr<const StatementReads> statementReads(const Program& program, std::string& error);

// The text a span covers (columns count bytes from 1; the end column is the one after its last
// character), its line breaks as spaces; "" when it lies outside its file.
std::string spanText(const SourceSet& sources, const SourceSpan& span);

}  // namespace scanback
