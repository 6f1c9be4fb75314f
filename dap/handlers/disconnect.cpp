#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Ends the launched program (scanback only launches) and the session. The program is stopped
// before the response, so nothing it reports follows it; `terminated` comes after the response,
// as every event a request causes does.
Reply disconnectRequest(Session& session, const json&) {
  session.end();
  if (!session.launched()) return Reply{};
  session.target().terminate();
  return Reply{json(), [&session] { session.sendTerminated(); }};
}

}  // namespace scanback::dap
