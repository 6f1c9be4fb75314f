#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/force: holds `target` (a path as in stimulus files, or an address such as %IX0.2) at
// `value` from the task's next cycle start on, until released (vm/runtime/forces.h). Running or
// paused, on a live, nonstop or attached session; a replayed trace refuses it. The body: the
// target as resolved, the value as the debugger shows it, its type.
Reply forceRequest(Session& session, const json& args) {
  const std::string target = requiredMember<std::string>(args, "target");
  const std::string value = requiredMember<std::string>(args, "value");
  std::string error;
  const std::optional<Force> f = session.target().force(target, value, error);
  if (!f) throw DapError(error);
  session.output("console", fmt::format("{} forced to {} from the next cycle start\n", f->target, f->value));
  return Reply{json{{"target", f->target}, {"value", f->value}, {"type", f->type}}};
}

}  // namespace scanback::dap
