#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

Reply scopesRequest(Session& session, const json& args) {
  const Frame frame = session.frame(requiredMember<int64_t>(args, "frameId"));
  json scopes = json::array();
  for (const Scope& s : session.variables().scopes(frame, session.pausedTarget().vm())) scopes.push_back(s);
  return Reply{json{{"scopes", scopes}}};
}

}  // namespace scanback::dap
