#include "dap/handlers/handlers.h"
#include "dap/session/session.h"
#include "vm/bytecode/opcodes.h"

namespace scanback::dap {

Reply exceptionInfoRequest(Session& session, const json& args) {
  requiredMember<int64_t>(args, "threadId");
  Target& target = session.pausedTarget();
  const std::optional<StopInfo> stop = target.lastStop();
  if (!stop || stop->reason != StopReason::Exception) throw DapError("the program is not stopped at a fault");
  const FaultInfo& fault = target.vm().fault();
  const std::string kind(faultText(fault.code));
  json body{{"exceptionId", kind}, {"description", stop->description}, {"breakMode", "always"}};
  body["details"] = json{{"message", fault.detail.empty() ? stop->description : fault.detail}, {"typeName", kind}};
  return Reply{body};
}

}  // namespace scanback::dap
