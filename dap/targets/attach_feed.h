// An attached session's history (issue 15; docs/dap.md, the target layer): a HistoryFeed whose
// task runs in another process, a runtime started with `scanback run --control`. The feed asks the
// runtime's control endpoint for its status (refusing a runtime with debugging disabled), then
// streams its flight recorder's chunks — the compressed blocks the runtime already has; it never
// re-executes anything for a debugger — and appends them, renumbered, to a local trace that
// ReplayTarget::follow() replays in this process as it grows. The runtime's end (it stopped, or
// faulted: nothing follows a fault) is the trace's end. Stopping the feed leaves the runtime
// running; stopRuntime() is what `disconnect` with terminateDebuggee does.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "control/endpoint.h"
#include "dap/targets/history_feed.h"

namespace scanback::dap {

struct AttachOptions {
  control::Endpoint endpoint;
  std::optional<std::string> token;
  // Where the streamed history is written (as a trace being written, removed at the end). Empty:
  // a file of its own in the temporary directory.
  std::string localTrace;
};

// Connects and starts streaming; returns once the history the runtime held is in the local trace.
// Null with `error` saying why: no runtime at the endpoint, a wrong or missing token, debugging
// disabled, a malformed stream.
[[nodiscard]] std::unique_ptr<HistoryFeed> attachFeed(const AttachOptions& options, TargetListener& listener,
                                                      std::string& error);

// Asks the runtime to stop (scanback ctl stop). False with `error`.
[[nodiscard]] bool stopRuntime(const AttachOptions& options, std::string& error);

}  // namespace scanback::dap
