#include "dap/handlers/resume.h"

namespace scanback::dap {

// Back to the last position where an active breakpoint or data breakpoint would have stopped (logpoints do not stop
// going backwards); the start of the recording if none.
Reply reverseContinueRequest(Session& session, const json& args) {
  return resumeReply(session, args, ResumeKind::ReverseContinue, json());
}

}  // namespace scanback::dap
