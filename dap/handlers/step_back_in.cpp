#include "dap/handlers/resume.h"

namespace scanback::dap {

// scanback/stepBackIn: back to the previous statement, entering a call that ended there (the reverse of `stepIn`).
Reply stepBackInRequest(Session& session, const json& args) {
  return resumeReply(session, args, ResumeKind::StepBackIn, json());
}

}  // namespace scanback::dap
