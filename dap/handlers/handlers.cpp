#include "dap/handlers/handlers.h"

namespace scanback::dap {

const std::vector<Handler>& handlers() {
  static const std::vector<Handler> list = {
      {"initialize", initializeRequest, {}},
      {"launch", launchRequest, {}},
      {"attach", attachRequest, {}},
      {"configurationDone", configurationDoneRequest, {{"supportsConfigurationDoneRequest", true}}},
      {"disconnect", disconnectRequest, {{"supportTerminateDebuggee", true}}},
      {"terminate", terminateRequest, {{"supportsTerminateRequest", true}}},
      {"setBreakpoints",
       setBreakpointsRequest,
       {{"supportsConditionalBreakpoints", true},
        {"supportsHitConditionalBreakpoints", true},
        {"supportsLogPoints", true}}},
      {"setExceptionBreakpoints",
       setExceptionBreakpointsRequest,
       {{"exceptionBreakpointFilters",
         json::array({{{"filter", "faults"},
                       {"label", "Runtime faults"},
                       {"description",
                        "Stop at a statement that faults (division by zero, index out of bounds, "
                        "watchdog, ...)"},
                       {"default", true}}})}}},
      {"breakpointLocations", breakpointLocationsRequest, {{"supportsBreakpointLocationsRequest", true}}},
      {"threads", threadsRequest, {}},
      {"stackTrace", stackTraceRequest, {{"supportsDelayedStackTraceLoading", true}}},
      {"scopes", scopesRequest, {}},
      {"variables", variablesRequest, {}},
      {"continue", continueRequest, {}},
      {"next", nextRequest, {}},
      {"stepIn", stepInRequest, {}},
      {"stepOut", stepOutRequest, {}},
      {"pause", pauseRequest, {}},
      {"exceptionInfo", exceptionInfoRequest, {{"supportsExceptionInfoRequest", true}}},
      {"source", sourceRequest, {}},
      {"evaluate", evaluateRequest, {{"supportsEvaluateForHovers", true}}},
      {"setVariable", setVariableRequest, {{"supportsSetVariable", true}}},
      {"setExpression", setExpressionRequest, {{"supportsSetExpression", true}}},
      {"dataBreakpointInfo", dataBreakpointInfoRequest, {{"supportsDataBreakpoints", true}}},
      {"setDataBreakpoints", setDataBreakpointsRequest, {}},
      {"stReload", stReloadRequest, {}},
      {"stepBack", stepBackRequest, {{"supportsStepBack", true}}},
      {"reverseContinue", reverseContinueRequest, {}},
      {"restartFrame", restartFrameRequest, {{"supportsRestartFrame", true}}},
      {"scanback/stepBackIn", stepBackInRequest, {}},
      {"scanback/stepBackOut", stepBackOutRequest, {}},
      {"scanback/seek", seekRequest, {}},
      {"scanback/timeline", timelineRequest, {}},
      {"scanback/signals", signalsRequest, {}},
      {"scanback/force", forceRequest, {{"supportsScanbackForce", true}}},
      {"scanback/release", releaseRequest, {}},
      {"scanback/forced", forcedRequest, {}},
      {"scanback/goToLive", goToLiveRequest, {{"supportsScanbackGoToLive", true}}},
      {"scanback/compare", compareRequest, {{"supportsScanbackCompare", true}}},
      {"scanback/why", whyRequest, {{"supportsScanbackWhy", true}}},
      {"scanback/values", valuesRequest, {{"supportsScanbackValues", true}}},
      {"scanback/flow", flowRequest, {{"supportsScanbackFlow", true}}},
  };
  return list;
}

json capabilities() {
  json caps = json::object();
  for (const Handler& h : handlers())
    for (const auto& [key, value] : h.capabilities.items()) caps[key] = value;
  return caps;
}

}  // namespace scanback::dap
