#include "dap/handlers/handlers.h"
#include "dap/session/expressions.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/values (docs/explain.md): the values of many expressions in one frame at once, for the
// editor's inline values: one request per visible range instead of one `evaluate` per name. Each
// is evaluated as `evaluate` would (the debugger's evaluator, in the frame's scope); one that does
// not resolve there (not in scope, a keyword, a call of user code) is null.
Reply valuesRequest(Session& session, const json& args) {
  const int64_t frameId = requiredMember<int64_t>(args, "frameId");
  if (!args.contains("expressions") || !args["expressions"].is_array())
    throw ArgumentError("scanback/values needs 'expressions': a list of strings");
  Target& target = session.pausedTarget();
  const Vm& vm = target.vm();
  const Frame frame = session.frame(frameId);
  json values = json::array();
  for (const json& e : args["expressions"]) {
    if (!e.is_string()) throw ArgumentError("scanback/values: every entry of 'expressions' must be a string");
    std::string error;
    const std::optional<Evaluated> result = evaluateExpression(vm.program(), vm, &frame, e.get<std::string>(), error);
    values.push_back(result ? json(result->value) : json(nullptr));
  }
  return Reply{json{{"values", std::move(values)}}};
}

}  // namespace scanback::dap
