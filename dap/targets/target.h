// What a debug session runs against: a target. A live target executes the program (its own
// thread); a replay target (time travel) moves through a recorded trace. The session talks to
// both through this interface, so every request works the same on either.
//
// Threading: the session calls a target from its own thread. A target reports stops, output and
// the end of the program through its TargetListener, from whichever thread it runs on; once it
// has reported a stop it stays paused until resume(), and while it is paused vm() may be read from
// the session thread. Every target carries out its moves on one thread of its own under one
// state machine (dap/targets/run_control.h).
//
// Time travel is a capability: history() gives the moves through recorded history, or null for a
// target that keeps none. Nothing here knows how the session was asked for (launch arguments are
// the launch handler's); a target gets typed options.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/recording.h"
#include "traces/trace_model.h"
#include "vm/bytecode/program.h"
#include "vm/exec/vm.h"
#include "vm/runtime/reload.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/watch.h"

namespace scanback::dap {

// One breakpoint as the target checks it: resolved to a statement, its condition and log message
// compiled by the session. Shared between the session and the target; only the counters change.
struct ResolvedBreakpoint {
  int64_t id = 0;
  uint32_t statement = 0;
  // Null: always. Else true/false, or nullopt with `error` when the condition cannot be evaluated
  // here (then the breakpoint does not stop, and the error is logged once).
  std::function<std::optional<bool>(const Vm&, std::string& error)> condition;
  // Null: every hit stops. Else: whether hit number N (from 1) stops.
  std::function<bool(uint64_t)> hitCondition;
  // Set for a logpoint: the message with its {expressions} evaluated. A logpoint never stops.
  std::function<std::string(const Vm&)> logMessage;
  mutable uint64_t hits = 0;                  // counted by the target's thread only
  mutable bool conditionErrorLogged = false;  // likewise
  // Where a live task began counting hits (the first position it checks with it), in a session
  // that records: a search of the history numbers hits from there too, so that a hit has the same
  // number live and in history (docs/dap.md). Unset: from the start of the recording.
  mutable std::optional<std::pair<uint64_t, uint64_t>> countedFrom;  // (cycle, step); likewise
};

// A data breakpoint: a watched range of the image (vm/runtime/watch.h) that stops after a
// statement that changed it.
struct DataWatch : Watch {
  int64_t id = 0;
  std::string name;  // for messages
};

// Everything a target stops at. Immutable once handed over; each new set has a higher generation.
struct StopSet {
  uint64_t generation = 0;
  // The program version the breakpoints and data watches are resolved for (statement ids, image
  // offsets); while another version executes (the rest of a cycle after a reload) they are not
  // checked. Null: none resolved.
  std::shared_ptr<const Program> program;
  std::vector<std::shared_ptr<const ResolvedBreakpoint>> breakpoints;
  std::vector<uint8_t> statementHasBreakpoint;  // per statement id
  std::vector<DataWatch> dataWatches;
  bool stopOnFaults = true;
};

enum class StopReason { Entry, Step, Breakpoint, Pause, Exception, DataBreakpoint, Restart, Goto };
const char* stopReasonName(StopReason reason);  // the DAP `reason`

struct StopInfo {
  StopInfo() = default;
  StopInfo(StopReason why, uint32_t inTask, std::vector<int64_t> ids = {}, std::string text = {})
      : reason(why), task(inTask), breakpointIds(std::move(ids)), description(std::move(text)) {}
  StopReason reason = StopReason::Step;
  uint32_t task = 0;
  std::vector<int64_t> breakpointIds;  // breakpoint or data watch ids
  std::string description;             // e.g. the fault, shown by the client
  std::string exceptionId;             // Exception: the kind of fault ("division by zero")
  std::string exceptionDetails;        // Exception: the values that matter, when known
  bool endsStep = false;               // the stop ends a step request (whatever its reason)
  // DataBreakpoint: the change that stopped (the first watch's when several changed at once),
  // which the description names: "gMotor.run: FALSE → TRUE (programs.st:119)".
  struct DataChange {
    int64_t watch = 0;                // the data watch's id
    std::vector<uint8_t> before;      // its value before the change (Watch::read's bytes)
    uint32_t statement = UINT32_MAX;  // the statement that wrote it; UINT32_MAX: the scan inputs
  };
  std::optional<DataChange> change;
};

// A new program version for a running target (stReload).
struct ReloadRequest {
  std::shared_ptr<const Program> program;
  ReloadPlan plan;                   // from the version the target will be running before it
  std::optional<Stimulus> stimulus;  // the launch's inputs, resolved for the new version
};

// Forward moves, then their reverse mirrors (targets with history() only).
enum class ResumeKind { Continue, Next, StepIn, StepOut, StepBack, ReverseContinue, StepBackIn, StepBackOut };
inline bool isReverse(ResumeKind kind) { return kind >= ResumeKind::StepBack; }

struct HistoryPosition {
  uint64_t cycle = 0;
  uint64_t step = 0;
};

// What a target with history holds and where it is (the scanback/timeline request).
struct Timeline {
  uint64_t firstCycle = 0, lastCycle = 0;   // recorded, inclusive
  int64_t firstTimeNs = 0, lastTimeNs = 0;  // virtual start times of those cycles
  uint64_t cycle = 0, step = 0;             // the current position
  int64_t timeNs = 0;                       // virtual start time of the current cycle
  struct Gap {
    uint64_t firstCycle = 0, cycleCount = 0;
  };
  std::vector<Gap> gaps;
  std::string fault;  // the fault the recording ends in ("" when none)
  // Where it is: the faulting statement's position (set with `fault`).
  struct FaultPosition {
    uint64_t cycle = 0, step = 0;
    uint32_t statement = UINT32_MAX;
  };
  std::optional<FaultPosition> faultAt;
  bool live = false;  // the end still grows (a live session's recording)
  // Live sessions: how long the live task's cycles took to execute (those not paused in).
  struct CycleTime {
    uint64_t cycles = 0, medianNs = 0, p99Ns = 0, maxNs = 0;
  };
  std::optional<CycleTime> cycleTime;
  // Live sessions that record: whether the trace still receives the cycles (a full disk stops it
  // while the task goes on), as `scanback ctl status` says it: the recorder's health, and the trace.
  struct Recording : recorder::RecordingHealth {
    std::string path;  // the trace written
  };
  std::optional<Recording> recording;
};

// Why a write (setVariable, setExpression, stReload) is refused on a target with readOnly().
inline constexpr const char* kHistoryIsReadOnly =
    "history is read-only: it shows what was recorded and cannot change it";

// Why forcing (scanback/force, release) is refused on a target without a task running beside it:
// a replayed trace (scanback/forced lists the forces recorded at the position shown).
inline constexpr const char* kForcesNeedALiveTask =
    "history is read-only: forces can only be set on a live or attached session";

// The forces a session shows (Target::forced).
struct ForcesShown {
  std::vector<Force> forces;  // in the order they were set
  // Set when they are the forces the trace recorded as held at this position of the history (the
  // cycle's), not the live task's.
  std::optional<HistoryPosition> recordedAt;
};

class TargetListener {
 public:
  virtual ~TargetListener() = default;
  virtual void stopped(const StopInfo& stop) = 0;
  virtual void output(std::string_view category, const std::string& text) = 0;
  // The program ended (cycle limit, or a fault the user continued past). Nothing follows.
  virtual void exited(int exitCode) = 0;
};

class TargetHistory;

class Target {
 public:
  virtual ~Target() = default;

  // Replaces what the target stops at. Once this returns, no stop of an older set is reported.
  virtual void setStops(std::shared_ptr<const StopSet> stops) = 0;
  // Starts execution (the session's configurationDone), stopping at the first statement when asked.
  virtual void start(bool stopOnEntry) = 0;
  // Resumes a paused target; a step applies to `task` (other tasks run on and stop only at
  // breakpoints). Clears any pending pause. A reverse move needs history().
  virtual void resume(ResumeKind kind, uint32_t task) = 0;
  // Asks a running target to stop at the next statement of `task`; false when it is paused
  // already (no stop follows).
  virtual bool pause(uint32_t task) = 0;
  virtual bool paused() const = 0;
  virtual bool finished() const = 0;
  // The last stop while paused.
  virtual std::optional<StopInfo> lastStop() const = 0;
  // The state where the target is paused. Only while paused.
  virtual const Vm& vm() const = 0;
  // A write from the debugger (setVariable): an external write. Paused at a statement boundary
  // inside a cycle, it takes effect there at once and is recorded at that position; between
  // cycles, at the start of the next one (docs/architecture.md: determinism). False with `error`
  // when the target cannot take it.
  [[nodiscard]] virtual bool write(ExternalWrite write, std::string& error) = 0;
  // Replaces the program at the next cycle start: a cycle under way (or paused) finishes on the
  // code it began with, so the paused position does not move. Requests made before an earlier
  // one took effect are applied in order. False with `error` when the target cannot take it.
  [[nodiscard]] virtual bool reload(ReloadRequest request, std::string& error) = 0;
  // Where the target is now cannot be written: setVariable, setExpression and stReload are refused.
  virtual bool readOnly() const { return false; }
  // Why, when readOnly().
  virtual std::string readOnlyReason() const { return kHistoryIsReadOnly; }
  // Forcing (vm/runtime/forces.h) on the task where it runs, running or paused: `target` (a path or
  // an address) held at `value` from its next cycle start on, until released. The force as
  // resolved, or nullopt with `error`. A target without a task (a replayed trace) refuses
  // (kForcesNeedALiveTask).
  [[nodiscard]] virtual std::optional<Force> force(const std::string& target, const std::string& value,
                                                   std::string& error) = 0;
  // Releases `target` (empty: every force) at the next cycle start; the targets released.
  [[nodiscard]] virtual std::optional<std::vector<std::string>> release(const std::string& target,
                                                                        std::string& error) = 0;
  // The forces where the session looks: the task's (with those requested for its next cycle start)
  // while it shows the live task, those the trace recorded at the position shown while it shows
  // history (a replay; a live, nonstop or attached session paused in its history).
  [[nodiscard]] virtual std::optional<ForcesShown> forced(std::string& error) = 0;
  // Whether the program runs on beside the session (a nonstop or attached session, until the task
  // ends or its operator pauses it): the session shows its history while its tasks scan on.
  virtual bool runsOn() const { return false; }
  // The recorded history the target moves in (time travel), or null when it keeps none.
  virtual TargetHistory* history() { return nullptr; }

  // Ends execution for good (disconnect, terminate); no exited event follows.
  virtual void terminate() = 0;
};

// The moves through recorded history, beside the reverse kinds of Target::resume(). Only while
// the target is paused.
class TargetHistory {
 public:
  // A recorded position: (cycle, step) with step 0 when not given. Nullopt with `error` when the
  // recording does not have it.
  [[nodiscard]] virtual std::optional<HistoryPosition> recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                                        std::string& error) = 0;
  // The first statement of frame `frame` (an index into vm().frames(), outermost first).
  [[nodiscard]] virtual std::optional<HistoryPosition> frameStart(size_t frame, std::string& error) = 0;
  // The newest recorded position: the live edge of a session whose history grows (where a paused
  // live task is, the newest cycle a nonstop or attached session holds), else the end of the
  // recording (its fault, when it ends in one). scanback/goToLive jumps there.
  [[nodiscard]] virtual std::optional<HistoryPosition> newestPosition(std::string& error) = 0;
  // Moves to a position found by the three above; a stop with `reason` follows.
  virtual void jump(HistoryPosition position, StopReason reason) = 0;
  // What the history holds and where the target is in it.
  [[nodiscard]] virtual std::optional<Timeline> timeline(std::string& error) = 0;
  // The cycle a paused live task is in the middle of, which the trace file does not hold yet:
  // readers of their own (scanback/why, scanback/flow) add it (Replayer::setOpenCycle) to answer
  // at the live position. Null when there is none. Valid after one of the above, while paused.
  virtual const trace::OpenCycleData* openCycle() const { return nullptr; }

  // Readable from any thread, whether the target runs or not:
  // The trace file the history is recorded in (a `.partial` one while it grows), for readers of
  // their own: scanback/signals, and scanback/timeline while the target runs, answer from one
  // without waiting for the target's thread. Empty when there is none.
  virtual std::string traceFile() const { return {}; }
  // A live task's scan cycle times (scanback/timeline); nullopt when there is no live task.
  virtual std::optional<Timeline::CycleTime> cycleTime() const { return std::nullopt; }
  // A live task's recording health (scanback/timeline); nullopt when nothing records.
  virtual std::optional<Timeline::Recording> recording() const { return std::nullopt; }

 protected:
  ~TargetHistory() = default;
};

}  // namespace scanback::dap
