#include "dap/handlers/resume.h"

namespace scanback::dap {

// scanback/stepBackOut: back to the statement that called the current frame (the reverse of `stepOut`).
Reply stepBackOutRequest(Session& session, const json& args) {
  return resumeReply(session, args, ResumeKind::StepBackOut, json());
}

}  // namespace scanback::dap
