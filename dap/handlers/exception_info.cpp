#include "dap/handlers/handlers.h"
#include "dap/session/session.h"
#include "vm/bytecode/opcodes.h"

namespace scanback::dap {

Reply exceptionInfoRequest(Session& session, const json& args) {
  requiredMember<int64_t>(args, "threadId");
  Target& target = session.pausedTarget();
  const std::optional<StopInfo> stop = target.lastStop();
  if (!stop || stop->reason != StopReason::Exception) throw DapError("the program is not stopped at a fault");
  const std::string& kind = stop->exceptionId;
  json body{{"exceptionId", kind}, {"description", stop->description}, {"breakMode", "always"}};
  body["details"] = json{{"message", stop->exceptionDetails.empty() ? stop->description : stop->exceptionDetails},
                         {"typeName", kind}};
  return Reply{body};
}

}  // namespace scanback::dap
