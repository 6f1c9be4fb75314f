#include "dap/handlers/resume.h"

namespace scanback::dap {

Reply continueRequest(Session& session, const json& args) {
  return resumeReply(session, args, ResumeKind::Continue, json{{"allThreadsContinued", true}});
}

}  // namespace scanback::dap
