#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// The children of a scope, struct, FB instance or array (arrays page with start/count).
Reply variablesRequest(Session& session, const json& args) {
  const int64_t reference = requiredMember<int64_t>(args, "variablesReference");
  const Vm& vm = session.pausedTarget().vm();
  const Container* container = session.variables().find(reference);
  if (!container)
    throw DapError(fmt::format("no variables with reference {} (references end when the program resumes)", reference));
  const Container copy = *container;  // variables() may add containers
  json list = json::array();
  for (const Variable& v : session.variables().variables(copy, vm, optionalMember<int64_t>(args, "start"),
                                                         optionalMember<int64_t>(args, "count")))
    list.push_back(v);
  return Reply{json{{"variables", list}}};
}

}  // namespace scanback::dap
