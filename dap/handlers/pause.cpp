#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// While running: the response, then `stopped` (pause) at the next statement of the thread's task.
// While paused: success and no event.
Reply pauseRequest(Session& session, const json& args) {
  const int64_t threadId = requiredMember<int64_t>(args, "threadId");
  Target& target = session.target();
  if (target.finished()) throw DapError("the program has ended");
  if (threadId < 1 || static_cast<uint64_t>(threadId) > session.program().tasks.size())
    throw DapError("no thread with id " + std::to_string(threadId));
  if (target.paused()) return Reply{};
  return Reply{json(), [&target, threadId] { target.pause(static_cast<uint32_t>(threadId - 1)); }};
}

}  // namespace scanback::dap
