#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

Reply initializeRequest(Session& session, const json& args) {
  if (session.initialized) throw DapError("the session is initialized already");
  ClientSettings& client = session.client();
  client.linesStartAt1 = optionalMember<bool>(args, "linesStartAt1").value_or(true);
  client.columnsStartAt1 = optionalMember<bool>(args, "columnsStartAt1").value_or(true);
  client.supportsVariableType = optionalMember<bool>(args, "supportsVariableType").value_or(false);
  if (const auto format = optionalMember<std::string>(args, "pathFormat"); format && *format != "path")
    throw DapError("only pathFormat 'path' is supported");
  session.initialized = true;
  // The `initialized` event follows the launch response (dap/handlers/launch.cpp): breakpoints
  // are resolved against the launched program, so that is when configuration requests can come.
  return Reply{capabilities()};
}

}  // namespace scanback::dap
