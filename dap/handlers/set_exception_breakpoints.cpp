#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

Reply setExceptionBreakpointsRequest(Session& session, const json& args) {
  const auto filters = requiredMember<std::vector<std::string>>(args, "filters");
  bool faults = false;
  json breakpoints = json::array();
  for (const std::string& f : filters) {
    if (f != "faults") throw DapError(fmt::format("unknown exception filter '{}' (scanback offers 'faults')", f));
    faults = true;
    breakpoints.push_back(json{{"verified", true}});
  }
  session.breakpoints().setStopOnFaults(faults);
  session.applyStops();
  return Reply{json{{"breakpoints", breakpoints}}};
}

}  // namespace scanback::dap
