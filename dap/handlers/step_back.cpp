#include "dap/handlers/resume.h"

namespace scanback::dap {

// Back to the previous statement in the current frame: the exact reverse of `next`.
Reply stepBackRequest(Session& session, const json& args) {
  return resumeReply(session, args, ResumeKind::StepBack, json());
}

}  // namespace scanback::dap
