// Every DAP request scanback serves: one handler per request, each in its own file, all
// registered in the one list of handlers.cpp. A handler reads its arguments, acts on the session,
// and returns the response body (or throws DapError, which becomes the error response). The
// Capabilities that `initialize` returns are assembled from this list.
#pragma once

#include <vector>

#include "dap/protocol/protocol.h"
#include "vm/bytecode/program.h"

namespace scanback::dap {

class Session;

struct Handler {
  const char* command;
  Reply (*run)(Session& session, const json& arguments);
  json capabilities;  // what this request adds to the Capabilities (merged into one object)
};

const std::vector<Handler>& handlers();
// The Capabilities object built from handlers().
json capabilities();

Reply initializeRequest(Session&, const json&);
Reply launchRequest(Session&, const json&);
Reply attachRequest(Session&, const json&);
Reply configurationDoneRequest(Session&, const json&);
Reply disconnectRequest(Session&, const json&);
Reply terminateRequest(Session&, const json&);
Reply setBreakpointsRequest(Session&, const json&);
Reply setExceptionBreakpointsRequest(Session&, const json&);
Reply breakpointLocationsRequest(Session&, const json&);
Reply threadsRequest(Session&, const json&);
Reply stackTraceRequest(Session&, const json&);
Reply scopesRequest(Session&, const json&);
Reply variablesRequest(Session&, const json&);
Reply continueRequest(Session&, const json&);
Reply nextRequest(Session&, const json&);
Reply stepInRequest(Session&, const json&);
Reply stepOutRequest(Session&, const json&);
Reply pauseRequest(Session&, const json&);
Reply exceptionInfoRequest(Session&, const json&);
Reply sourceRequest(Session&, const json&);
Reply evaluateRequest(Session&, const json&);
Reply setVariableRequest(Session&, const json&);
Reply setExpressionRequest(Session&, const json&);
Reply dataBreakpointInfoRequest(Session&, const json&);
Reply setDataBreakpointsRequest(Session&, const json&);
Reply stReloadRequest(Session&, const json&);  // custom: hot reload
// Time travel.
Reply stepBackRequest(Session&, const json&);
Reply reverseContinueRequest(Session&, const json&);
Reply restartFrameRequest(Session&, const json&);
Reply stepBackInRequest(Session&, const json&);   // custom: scanback/stepBackIn
Reply stepBackOutRequest(Session&, const json&);  // custom: scanback/stepBackOut
Reply seekRequest(Session&, const json&);         // custom: scanback/seek
Reply timelineRequest(Session&, const json&);     // custom: scanback/timeline
Reply signalsRequest(Session&, const json&);      // custom: scanback/signals
// Forcing (issue 31).
// Lets the variables described next carry the `forced` attribute (scanback_forced.cpp): the forces
// of a session with a task beside it; none for a replayed trace.
void markForced(Session& session, const Program& program);
Reply forceRequest(Session&, const json&);     // custom: scanback/force
Reply releaseRequest(Session&, const json&);   // custom: scanback/release
Reply forcedRequest(Session&, const json&);    // custom: scanback/forced
Reply goToLiveRequest(Session&, const json&);  // custom: scanback/goToLive
Reply compareRequest(Session&, const json&);   // custom: scanback/compare
// Explaining a value (docs/explain.md).
Reply whyRequest(Session&, const json&);     // custom: scanback/why
Reply valuesRequest(Session&, const json&);  // custom: scanback/values
Reply flowRequest(Session&, const json&);    // custom: scanback/flow

}  // namespace scanback::dap
