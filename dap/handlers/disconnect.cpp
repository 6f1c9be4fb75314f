#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Ends the launched program (scanback only launches) and the session.
Reply disconnectRequest(Session& session, const json&) {
  if (session.launched()) {
    session.target().terminate();
    session.sendTerminated();
  }
  session.end();
  return Reply{};
}

}  // namespace scanback::dap
