// libFuzzer target: the ST front end (tests/fuzz/README.md). The bytes are one source file: lexed,
// parsed, compiled (with the runtime's load-time checks), disassembled, and when they compile run
// for a few cycles under a small statement budget, with the state printed as JSON at the end.
#include <cstdint>
#include <string>

#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/state_json.h"

using namespace scanback;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SourceSet sources;
  sources.add("fuzz.st", std::string(reinterpret_cast<const char*>(data), size));
  Diagnostics diagnostics;
  std::shared_ptr<const Program> program = compileProject(sources, diagnostics);
  (void)diagnostics.format(sources);
  if (!program) return 0;
  (void)disassemble(*program);
  if (!checkSchedule(*program, diagnostics)) return 0;
  Runtime rt(program);
  rt.vm().setStatementBudget(2'000);
  for (int cycle = 0; cycle < 4; ++cycle) {
    if (rt.runCycle() == RunStatus::Faulted) {
      (void)rt.faultMessage();
      break;
    }
  }
  (void)stateToJson(*program, rt.vm().image()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
