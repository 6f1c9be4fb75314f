// Where the history of a session that never halts its task comes from: a task that runs on
// untouched and records itself to a trace that grows while the session looks at it. A nonstop
// launch feeds it from a live task in this process (liveFeed, dap/targets/live_target.h); an
// attached session (issue 15) would feed it from a runtime in another process, writing the trace
// chunks it streams to a local file. ReplayTarget::follow() works on either.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "dap/targets/target.h"

namespace scanback::dap {

class HistoryFeed {
 public:
  virtual ~HistoryFeed() = default;
  // The trace being written, which a replayer follows, and the program it records.
  virtual std::string partialPath() const = 0;
  virtual std::shared_ptr<const Program> program() const = 0;
  // Set while the task executes a cycle on this machine, which replaying waits out
  // (Replayer::setGiveWayFlag); null when the task runs elsewhere.
  virtual const std::atomic<bool>* executing() const = 0;
  // Starts the task, or following it (the session's configurationDone). `ended` is called once,
  // from any thread, when the trace is complete (the program ended); nothing is recorded after.
  virtual void start(std::function<void()> ended) = 0;
  // How long the task's cycles take to execute (scanback/timeline); nullopt when not known.
  virtual std::optional<Timeline::CycleTime> cycleTime() const = 0;
  // Whether the task's recording still receives its cycles; nullopt when not known.
  virtual std::optional<Timeline::Recording> recording() const { return std::nullopt; }
  // Whether the task is paused where it runs (an attached runtime its operator paused): a session
  // that starts at the newest position reports a pause there at once (the seed spec's attach).
  virtual bool paused() const { return false; }
  // Forcing on the task where it runs (Target::force, release, forced): a launched task in this
  // process, an attached runtime through its control endpoint.
  [[nodiscard]] virtual std::optional<Force> force(const std::string& target, const std::string& value,
                                                   std::string& error) = 0;
  [[nodiscard]] virtual std::optional<std::vector<std::string>> release(const std::string& target,
                                                                        std::string& error) = 0;
  // The task's forces (not those of the position the session shows: ReplayTarget reads those).
  [[nodiscard]] virtual std::optional<std::vector<Force>> forced(std::string& error) = 0;
  // The session ends: a launched task ends with it, its trace finished (and removed unless kept).
  virtual void stop() = 0;
};

}  // namespace scanback::dap
