#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/expressions.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Writes a new value to a variable shown in a scope or structure. The value is checked against
// the variable's type; the write is an external write, applied at once at the paused statement
// boundary (between cycles: at the start of the next one) and recorded there
// (docs/architecture.md: determinism), so it replays.
Reply setVariableRequest(Session& session, const json& args) {
  const int64_t reference = requiredMember<int64_t>(args, "variablesReference");
  const std::string name = requiredMember<std::string>(args, "name");
  const std::string value = requiredMember<std::string>(args, "value");
  Target& target = session.pausedTarget();
  // A read-only target says why before anything else: the name is beside the point.
  if (target.readOnly()) throw DapError(target.readOnlyReason());
  const Container* container = session.variables().find(reference);
  if (!container) throw DapError(fmt::format("no variables with reference {}", reference));
  const Container copy = *container;
  const std::optional<VariableSlot> slot = session.variables().child(copy, target.vm(), name);
  if (!slot) throw DapError(fmt::format("no variable '{}' there", name));
  if (slot->unbound)
    throw DapError(fmt::format("'{}' is an invalid reference: it designates no variable (REF= binds it)", name));
  return Reply{writeValue(session, target, *slot, value)};
}

}  // namespace scanback::dap
