#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

Reply configurationDoneRequest(Session& session, const json&) {
  if (session.configurationDone) throw DapError("the configuration is done already");
  Target& target = session.target();
  session.configurationDone = true;
  // The breakpoints set so far apply from the first statement: the target starts only now.
  return Reply{json(), [&session, &target] {
                 session.applyStops();
                 target.start(session.stopOnEntry);
               }};
}

}  // namespace scanback::dap
