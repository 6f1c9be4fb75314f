#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/seek: to any recorded position, `cycle` and optional `step` (the statement boundary in
// that cycle, 0 by default). The response, then `stopped` with reason `goto`.
Reply seekRequest(Session& session, const json& args) {
  const int64_t cycle = requiredMember<int64_t>(args, "cycle");
  const std::optional<int64_t> step = optionalMember<int64_t>(args, "step");
  if (cycle < 0 || (step && *step < 0)) throw DapError("'cycle' and 'step' must not be negative");
  TargetHistory& history = historyOf(session.pausedTarget());
  std::string error;
  const std::optional<HistoryPosition> at = history.recordedPosition(
      static_cast<uint64_t>(cycle), step ? std::optional<uint64_t>(static_cast<uint64_t>(*step)) : std::nullopt, error);
  if (!at) throw DapError(error);
  session.resuming();
  return Reply{json(), [&history, to = *at] { history.jump(to, StopReason::Goto); }};
}

}  // namespace scanback::dap
