// What `launch` and `stReload` load: the program their `program` argument names, compiled, and
// the stimulus their `inputs` argument names.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "dap/protocol/protocol.h"
#include "vm/bytecode/program.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/stimulus.h"

namespace scanback::dap {

class Session;

// `program` (readProgramArgument): paths and glob patterns, relative to `cwd`. Warnings go out as
// `output`; a compile error is a DapError with the diagnostics (also sent as `output`).
std::shared_ptr<const Program> compileProgramArgument(Session& session, const std::vector<std::string>& program,
                                                      const std::filesystem::path& cwd, Dialect dialect);

// The stimulus CSV `inputs` (relative to `cwd`) resolved for `program`; DapError when it does not fit.
Stimulus loadInputsArgument(const std::string& inputs, const std::filesystem::path& cwd, const Program& program);

}  // namespace scanback::dap
