// The session's use of the expression evaluator (vm/debug/): breakpoint conditions, logpoint
// messages, `evaluate`, and writing values (setVariable, setExpression).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "dap/protocol/protocol.h"
#include "dap/session/variables.h"
#include "dap/targets/target.h"

namespace scanback::dap {

class Session;

// A condition on `statement`, compiled in the scope of its POU. Null with `error` when it does
// not compile or is not BOOL.
[[nodiscard]] std::function<std::optional<bool>(const Vm&, std::string&)> compileCondition(const Program& program,
                                                                                           uint32_t statement,
                                                                                           const std::string& text,
                                                                                           std::string& error);
// A logpoint message: text with {expression} parts ("{{" and "}}" stand for braces). Null with
// `error` when a part does not compile; a part that fails when evaluated shows as <error: ...>.
[[nodiscard]] std::function<std::string(const Vm&)> compileLogMessage(const Program& program, uint32_t statement,
                                                                      const std::string& text, std::string& error);

struct Evaluated {
  std::string value;  // as the Variables view shows it
  const Type* type = nullptr;
  std::optional<VariableSlot> slot;  // when the expression designates storage
};
// Evaluates `text` in the scope of `frame` (null: the globals and program instances only).
[[nodiscard]] std::optional<Evaluated> evaluateExpression(const Program& program, const Vm& vm, const Frame* frame,
                                                          const std::string& text, std::string& error);

// The storage a data breakpoint watches, found by its name (a global or program-instance path
// such as "Main.motor.speed" or "Main.buffer[3]") in `program`'s layout. Used when the program
// changed since the watch was made. Nullopt with `error` when the name designates no storage there.
[[nodiscard]] std::optional<DataWatch> locateWatch(const Program& program, const std::string& name, std::string& error);

// Validates `value` against the slot's type and queues it as an external write; the response
// body of setVariable/setExpression ({value, type}). DapError when it cannot be written.
json writeValue(Session& session, Target& target, const VariableSlot& slot, const std::string& value);

}  // namespace scanback::dap
