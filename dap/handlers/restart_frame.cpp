#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Back to the first statement of the selected frame (reason `restart`), through history.
Reply restartFrameRequest(Session& session, const json& args) {
  const int64_t frameId = requiredMember<int64_t>(args, "frameId");
  Target& target = session.pausedTarget();
  TargetHistory& history = historyOf(target);
  session.frame(frameId);  // DapError when there is no such frame
  const size_t index = target.vm().frames().size() - static_cast<size_t>(frameId);  // ids count from the innermost
  std::string error;
  const std::optional<HistoryPosition> start = history.frameStart(index, error);
  if (!start) throw DapError(error);
  session.resuming();
  return Reply{json(), [&history, at = *start] { history.jump(at, StopReason::Restart); }};
}

}  // namespace scanback::dap
