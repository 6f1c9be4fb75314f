#include "dap/handlers/resume.h"

namespace scanback::dap {

Reply nextRequest(Session& session, const json& args) { return resumeReply(session, args, ResumeKind::Next, json()); }

}  // namespace scanback::dap
