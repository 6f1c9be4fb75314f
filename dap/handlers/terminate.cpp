#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

Reply terminateRequest(Session& session, const json&) {
  Target& target = session.target();
  return Reply{json(), [&session, &target] {
                 target.terminate();
                 session.sendTerminated();
               }};
}

}  // namespace scanback::dap
