#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/expressions.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Like setVariable for any expression that designates storage (a variable, field or element).
Reply setExpressionRequest(Session& session, const json& args) {
  const std::string expression = requiredMember<std::string>(args, "expression");
  const std::string value = requiredMember<std::string>(args, "value");
  Target& target = session.pausedTarget();
  std::optional<Frame> frame;
  if (const auto frameId = optionalMember<int64_t>(args, "frameId")) frame = session.frame(*frameId);
  std::string error;
  const std::optional<Evaluated> result =
      evaluateExpression(target.vm().program(), target.vm(), frame ? &*frame : nullptr, expression, error);
  if (!result) throw DapError(error);
  if (!result->slot) throw DapError(fmt::format("'{}' is not a variable: it cannot be assigned", expression));
  return Reply{writeValue(session, target, *result->slot, value)};
}

}  // namespace scanback::dap
