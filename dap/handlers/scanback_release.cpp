#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/release: ends the force of `target` (none: of every force) at the task's next cycle
// start; the value stays until the program or the field writes it. The body: the targets released.
Reply releaseRequest(Session& session, const json& args) {
  const std::string target = optionalMember<std::string>(args, "target").value_or("");
  std::string error;
  const std::optional<std::vector<std::string>> released = session.target().release(target, error);
  if (!released) throw DapError(error);
  return Reply{json{{"released", *released}}};
}

}  // namespace scanback::dap
