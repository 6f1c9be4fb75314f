#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/goToLive: back from the history to its newest position — where a paused live task is,
// the newest cycle a nonstop or attached session holds (the runtime scans on), or the end of a
// replayed recording. The response, then `stopped` with reason `goto`, as scanback/seek.
Reply goToLiveRequest(Session& session, const json&) {
  TargetHistory& history = historyOf(session.pausedTarget());
  std::string error;
  const std::optional<HistoryPosition> newest = history.newestPosition(error);
  if (!newest) throw DapError(error);
  session.resuming();
  return Reply{json(), [&history, to = *newest] { history.jump(to, StopReason::Goto); }};
}

}  // namespace scanback::dap
