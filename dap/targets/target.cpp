#include "dap/targets/target.h"

namespace scanback::dap {

const char* stopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::Entry: return "entry";
    case StopReason::Step: return "step";
    case StopReason::Breakpoint: return "breakpoint";
    case StopReason::Pause: return "pause";
    case StopReason::Exception: return "exception";
    case StopReason::DataBreakpoint: return "data breakpoint";
    case StopReason::Restart: return "restart";
    case StopReason::Goto: return "goto";
  }
  return "step";
}

}  // namespace scanback::dap
