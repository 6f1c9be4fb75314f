#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/expressions.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Any ST expression, in the scope of the selected frame (or the globals without one). Evaluating
// never changes the program's state: calls of user POUs are refused.
Reply evaluateRequest(Session& session, const json& args) {
  const std::string expression = requiredMember<std::string>(args, "expression");
  Target& target = session.pausedTarget();
  const Vm& vm = target.vm();
  std::optional<Frame> frame;
  if (const auto frameId = optionalMember<int64_t>(args, "frameId")) frame = session.frame(*frameId);
  std::string error;
  const std::optional<Evaluated> result =
      evaluateExpression(vm.program(), vm, frame ? &*frame : nullptr, expression, error);
  if (!result) throw DapError(error);
  json body{{"result", result->value}, {"variablesReference", 0}};
  if (result->type) body["type"] = result->type->name;
  if (result->slot) {
    const Variable v = session.variables().describe(expression, *result->slot, vm);
    body["variablesReference"] = v.variablesReference;
    if (v.namedVariables) body["namedVariables"] = *v.namedVariables;
    if (v.indexedVariables) body["indexedVariables"] = *v.indexedVariables;
  }
  return Reply{body};
}

}  // namespace scanback::dap
