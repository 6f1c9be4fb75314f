#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Ends the launched program and the session. The program is stopped before the response, so
// nothing it reports follows it; `terminated` comes after the response, as every event a request
// causes does. An attached session leaves the runtime running, unless `terminateDebuggee` asks to
// stop it.
Reply disconnectRequest(Session& session, const json& args) {
  const bool terminateDebuggee = optionalMember<bool>(args, "terminateDebuggee").value_or(false);
  session.end();
  if (!session.launched()) return Reply{};
  session.target().terminate();
  if (terminateDebuggee && session.stopDebuggee) {
    std::string error;
    if (!session.stopDebuggee(error)) throw DapError(fmt::format("the runtime was not stopped: {}", error));
    session.output("console", "the runtime was asked to stop\n");
  }
  return Reply{json(), [&session] { session.sendTerminated(); }};
}

}  // namespace scanback::dap
