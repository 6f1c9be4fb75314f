// continue, next, stepIn, stepOut and their reverse mirrors: the response first, then the target
// moves (so that the `stopped` event that may follow comes after the response).
#pragma once

#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

inline Reply resumeReply(Session& session, const json& args, ResumeKind kind, json body = json()) {
  const int64_t threadId = requiredMember<int64_t>(args, "threadId");
  Target& target = session.pausedTarget();
  if (threadId < 1 || static_cast<uint64_t>(threadId) > session.program().tasks.size())
    throw DapError("no thread with id " + std::to_string(threadId));
  if (isReverse(kind)) historyOf(target);  // DapError without one
  session.resuming();
  return Reply{std::move(body),
               [&target, kind, threadId] { target.resume(kind, static_cast<uint32_t>(threadId - 1)); }};
}

}  // namespace scanback::dap
