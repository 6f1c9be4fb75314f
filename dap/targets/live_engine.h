// The program executing for real under a debugger, on its target's thread: its cycles fed by the
// run loop (recorder/run_loop.h: paced by the task intervals, or as fast as it goes), optionally
// recorded, and stopped at statement boundaries by a VmObserver that asks the stop checker
// (docs/architecture.md: immutable, shared bytecode, statement boundaries: breakpoints are a side
// table, not patched code). What LiveTarget runs, and the live side of RecordedLiveTarget.
//
// With a trace path (LiveOptions::recordPath) it records every cycle through the Recorder, and
// while paused hands its history to a replayer (history(): the ended cycles in the trace, the
// cycle under way from its scan inputs).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dap/targets/run_control.h"
#include "dap/targets/stop_checker.h"
#include "recorder/recorder.h"
#include "recorder/run_loop.h"
#include "replayer/replayer.h"
#include "vm/runtime/cycle_times.h"
#include "vm/runtime/stimulus.h"

namespace scanback::dap {

struct LiveOptions {
  std::optional<uint64_t> cycles;  // end after this many cycles
  bool realtime = true;            // pace cycles by the task intervals
  std::optional<Stimulus> stimulus;
  // Record every cycle to this trace (written as `path.partial` while the task runs); empty: no
  // recording. A reload finishes the trace and goes on in a new one.
  std::string recordPath;
  // Leave the traces on disk at the end; else they are removed.
  bool keepTraces = true;
  // For a debugger following the trace as it grows: the recorded cycles reach the file within
  // about this much time (see RecorderOptions::flushEveryNs). 0: the recorder's flush window.
  int64_t recordLatencyNs = 0;
};

// What a recorded live task's history holds while it is paused: the trace file (the cycles that
// ended) and the cycle under way, replayable up to the paused position.
struct LiveHistory {
  std::string partialPath;                 // the trace being written
  std::shared_ptr<const Program> program;  // the version it records
  uint64_t segment = 0;                    // which trace: a reload starts the next one
  std::optional<replay::OpenCycle> open;   // none when paused at a fault or a cycle's end (it has ended)
  // Paused right after a cycle ended (a data breakpoint on a write by its last statement): the
  // live position is that cycle's end, not its last statement.
  bool atCycleEnd = false;
};

class LiveEngine final : private VmObserver {
 public:
  LiveEngine(std::shared_ptr<const Program> program, LiveOptions options, RunControl& control,
             TargetListener& listener);
  ~LiveEngine() override;

  // ---- the target's thread
  enum class Outcome {
    Stopped,     // a stop was published
    Ended,       // the program ended (the cycle limit, a fault): `exitCode`; its trace is finished
    Terminating  // the target is ending
  };
  // Carries out a Start or a forward Resume until one of those. `from`: a step that began at a
  // history position (its cycle and call depth) of the move's task.
  Outcome run(const Move& move, std::optional<StepOrigin> from, int& exitCode);

  // ---- the session's thread
  // Under the control's lock, the thread parked: a new set, its watched values read where the task
  // is now (so that the statement about to run is checked too).
  void takeStops(const std::shared_ptr<const StopSet>& stops);
  // While parked.
  const Vm& vm() const { return runtime_.vm(); }
  std::shared_ptr<const Program> programPtr() const { return runtime_.vm().programPtr(); }
  [[nodiscard]] bool write(ExternalWrite write, std::string& error);
  [[nodiscard]] bool reload(ReloadRequest request, std::string& error);
  // Forcing, running or paused (any thread: the runtime takes the requests at a cycle start).
  [[nodiscard]] std::optional<Force> force(const std::string& target, const std::string& value, std::string& error);
  [[nodiscard]] std::optional<std::vector<std::string>> release(const std::string& target, std::string& error);
  [[nodiscard]] std::optional<std::vector<Force>> forced(std::string& error);
  // Starts the recording, before the thread starts. False with `error` when the trace cannot be
  // created.
  [[nodiscard]] bool startRecording(std::string& error);
  // While paused: makes the trace hold every ended cycle and describes the cycle under way.
  // False with `error` when the recording cannot give it (it failed, or cycles were dropped right
  // before this one).
  [[nodiscard]] bool history(LiveHistory& out, std::string& error);
  // The traces written so far (one per program version).
  std::vector<std::string> tracePaths() const;
  // Once the thread has ended: finishes the trace (the cycle under way kept when paused inside
  // one) and removes the traces unless they are kept.
  void end();
  // Set while the task executes a cycle (not while paused): what a replayer beside it gives way to.
  const std::atomic<bool>& executing() const { return executing_; }
  // How long the cycles took to execute (those the debugger did not pause in).
  const CycleTimes& cycleTimes() const { return cycleTimes_; }
  std::optional<Timeline::CycleTime> cycleTime() const;
  // Whether the recording still receives the cycles; nullopt when nothing records. Any thread.
  std::optional<Timeline::Recording> recording() const;

 private:
  struct Step {
    ResumeKind kind = ResumeKind::Continue;
    uint32_t task = 0;
    uint64_t cycle = 0;
    uint32_t depth = 0;
    // Next: the depth of the innermost frame of the origin's still active (StepOrigin::floor):
    // lowered as frames return, never below the top level (1, the program bodies, which count as
    // one frame, as the replayer's steps do).
    uint32_t floor = 0;
  };
  // The run loop's waits: a pause or the end of the session cuts them short.
  class Waits final : public recorder::RunLoopWaits {
   public:
    explicit Waits(RunControl& control) : control_(control) {}
    bool waitUntil(std::chrono::steady_clock::time_point due) override { return control_.sleepUntil(due); }
    bool ending() override { return control_.terminating(); }

   private:
    RunControl& control_;
  };

  bool onStatement(uint32_t statement, uint64_t step) override;
  void onReturn(uint32_t pou) override;
  // Publishes a stop found by the task itself; whether the task stays paused.
  enum class Published { Stopped, GoOn, Terminating };
  Published publishStop(StopInfo stop);
  // The checker takes the control's newest set (a setStops() while the task ran), counting hits
  // from position (`cycle`, `step`) for the breakpoints new to it.
  void refreshStops(uint64_t cycle, uint64_t step);
  // The checker's watched values, read where the task is (with the debugger's writes queued for
  // the next cycle start applied).
  void readWatchedValues();
  // The first position the task checks from here (while parked or between cycles).
  std::pair<uint64_t, uint64_t> nextPosition() const;
  // Swaps in the reloads requested so far (between cycles, or before the thread starts).
  void applyReloads(std::vector<ReloadRequest> reloads);
  // Finishes the trace (renamed from .partial to its name); says so when it fails.
  void finishRecording();
  // Whether the task is paused inside a cycle (not at a fault, which ended its cycle).
  bool pausedInCycle() const;
  // The cycle under way, replayable up to the paused position.
  replay::OpenCycle openCycle(const recorder::Recorder& recorder, std::vector<uint8_t> imageBefore) const;
  // The program ended: its trace is finished before anyone hears of it.
  Outcome ended(int code, int& exitCode);

  LiveOptions options_;
  RunControl& control_;
  TargetListener& listener_;
  Runtime runtime_;
  recorder::RunLoop loop_;
  Waits waits_{control_};
  StopChecker checker_;
  // The statement of the last boundary passed: the one that wrote what the next boundary, or the
  // cycle's end, finds changed (a data breakpoint stop names it).
  uint32_t lastStatement_ = UINT32_MAX;

  mutable std::mutex mutex_;            // what the session's thread reads while the task runs
  std::vector<ReloadRequest> reloads_;  // taken by the thread at the next cycle start
  std::vector<std::string> tracePaths_;
  // Replaced by the thread between cycles only (a reload); read by the session's thread while
  // the thread is parked.
  std::unique_ptr<recorder::Recorder> recorder_;
  CycleTimes cycleTimes_;  // recorded by the thread
  std::atomic<bool> executing_{false};

  // ---- the target's thread
  std::optional<Step> step_;
  bool entryPending_ = false;
  bool faultPending_ = false;  // stopped at a fault: the program ends when resumed
  bool faulted_ = false;       // its cycle ended in a fault (read by the session's thread while parked)
  bool pausedThisCycle_ = false;
  std::chrono::steady_clock::time_point cycleBegan_;
};

}  // namespace scanback::dap
