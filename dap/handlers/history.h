// Time travel needs a target with history (a replay session, a live one that records): the
// requests that move in it find it here, or fail saying why there is none.
#pragma once

#include "dap/handlers/handlers.h"
#include "dap/targets/target.h"

namespace scanback::dap {

// Why a session has no history: only a live launch with 'record': false keeps none.
inline constexpr const char* kNoHistory = "this session keeps no history: it was launched with 'record': false";

inline TargetHistory& historyOf(Target& target) {
  TargetHistory* history = target.history();
  if (!history) throw DapError(kNoHistory);
  return *history;
}

}  // namespace scanback::dap
