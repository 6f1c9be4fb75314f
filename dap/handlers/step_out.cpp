#include "dap/handlers/resume.h"

namespace scanback::dap {

Reply stepOutRequest(Session& session, const json& args) {
  return resumeReply(session, args, ResumeKind::StepOut, json());
}

}  // namespace scanback::dap
