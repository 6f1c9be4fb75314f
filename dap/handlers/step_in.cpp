#include "dap/handlers/resume.h"

namespace scanback::dap {

Reply stepInRequest(Session& session, const json& args) {
  return resumeReply(session, args, ResumeKind::StepIn, json());
}

}  // namespace scanback::dap
