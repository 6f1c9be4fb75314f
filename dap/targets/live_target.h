// The live target: the program executing for real, on its own thread, paced by the task
// intervals (or as fast as it goes). Stops are taken at statement boundaries by a VmObserver that
// consults the StopSet (docs/architecture.md: immutable, shared bytecode, statement boundaries: breakpoints are a side
// table, not patched code); while stopped, the thread waits for resume() and the session reads the VM.
//
// With a trace path (LiveOptions::recordPath) it records every cycle through the Recorder, and
// while paused hands its history to a replayer (history(): the ended cycles in the trace, the
// cycle under way from its scan inputs); RecordedLiveTarget builds time travel on that.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "dap/targets/target.h"
#include "recorder/recorder.h"
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
  // For a debugger following the trace as it grows (nonstop): the recorded cycles reach the file
  // within about this much time (see RecorderOptions::flushEveryNs). 0: in chunks of 1000 cycles.
  int64_t recordLatencyNs = 0;
};

// What a recorded live task's history holds while it is paused: the trace file (the cycles that
// ended) and the cycle under way, replayable up to the paused position.
struct LiveHistory {
  std::string partialPath;                 // the trace being written
  std::shared_ptr<const Program> program;  // the version it records
  uint64_t segment = 0;                    // which trace: a reload starts the next one
  std::optional<replay::OpenCycle> open;   // none when paused at a fault (its cycle has ended)
};

class LiveTarget final : public Target, private VmObserver {
 public:
  LiveTarget(std::shared_ptr<const Program> program, LiveOptions options, TargetListener& listener);
  ~LiveTarget() override;

  void setStops(std::shared_ptr<const StopSet> stops) override;
  void start(bool stopOnEntry) override;
  void resume(ResumeKind kind, uint32_t task) override;
  bool pause(uint32_t task) override;
  bool paused() const override;
  bool finished() const override;
  std::optional<StopInfo> lastStop() const override;
  const Vm& vm() const override { return runtime_.vm(); }
  bool write(ExternalWrite write, std::string& error) override;
  bool reload(ReloadRequest request, std::string& error) override;
  void terminate() override;

  // ---- recording (LiveOptions::recordPath)
  // Starts the recording, before start(). False with `error` when the trace cannot be created.
  bool startRecording(std::string& error);
  // While paused: makes the trace hold every ended cycle and describes the cycle under way.
  // False with `error` when the recording cannot give it (it failed, or cycles were dropped
  // right before this one).
  bool history(LiveHistory& out, std::string& error);
  // Resumes a step that began at a history position (cycle, call depth) of `task` and found no
  // end before the paused position: it goes on live as if it had begun there.
  void resumeStep(ResumeKind kind, uint32_t task, uint64_t cycle, uint32_t depth);
  // The traces written so far (one per program version), finished once terminate() returns.
  std::vector<std::string> tracePaths() const;
  std::shared_ptr<const Program> programPtr() const { return runtime_.vm().programPtr(); }
  // Set while the task executes a cycle (not while paused): what a replayer beside it gives way to.
  const std::atomic<bool>& executing() const { return executing_; }
  // How long the cycles took to execute (those the debugger did not pause in).
  const CycleTimes& cycleTimes() const { return cycleTimes_; }

 private:
  enum class State { Configuring, Running, Paused, Finished };
  struct Step {
    ResumeKind kind = ResumeKind::Continue;
    uint32_t task = 0;
    uint64_t cycle = 0;
    uint32_t depth = 0;
  };

  void runLoop();
  bool onStatement(uint32_t statement, uint64_t step) override;
  // Publishes a stop and waits until resumed. False when terminated meanwhile.
  bool stopAndWait(const StopInfo& stop, std::unique_lock<std::mutex>& lock);
  // Waits until the wall-clock time of the next cycle, a pause request or termination.
  void pace(int64_t startNs);
  void refreshStops();
  void takeStops();  // refreshStops() with mutex_ held
  // Swaps in the reloads requested so far (between cycles, or before the thread starts).
  void applyReloads(std::vector<ReloadRequest> reloads);
  void finish(int exitCode);
  bool terminatingNow() const;
  void resumeLocked(std::optional<Step> step);
  // Finishes the trace (renamed from .partial to its name); says so when it fails.
  void finishRecording();
  // Whether the task is paused inside a cycle (not at a fault, which ended its cycle).
  bool pausedInCycle() const;
  // The cycle under way, replayable up to the paused position.
  replay::OpenCycle openCycle(const recorder::Recorder& recorder, std::vector<uint8_t> imageBefore) const;

  LiveOptions options_;
  TargetListener& listener_;
  Runtime runtime_;
  std::thread thread_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  State state_ = State::Configuring;
  bool terminating_ = false;
  bool resumed_ = false;
  std::optional<StopInfo> lastStop_;
  std::shared_ptr<const StopSet> stops_;
  std::atomic<uint64_t> stopsGeneration_{0};
  std::atomic<bool> pauseRequested_{false};
  std::atomic<uint32_t> pauseTask_{0};
  std::optional<Step> step_;            // set by resume(), read by the thread
  std::vector<ReloadRequest> reloads_;  // taken by the thread at the next cycle start
  // Replaced by the thread between cycles only (a reload); read by others while paused.
  std::unique_ptr<recorder::Recorder> recorder_;
  std::vector<std::string> tracePaths_;
  CycleTimes cycleTimes_;  // recorded by the thread
  std::atomic<bool> executing_{false};

  // ---- the execution thread only
  std::shared_ptr<const StopSet> cached_;
  uint64_t cachedGeneration_ = 0;
  bool entryPending_ = false;
  bool reanchor_ = true;
  std::chrono::steady_clock::time_point anchor_;   // wall time of virtual time 0
  std::vector<std::vector<uint8_t>> watchValues_;  // per data watch: the value at the last boundary
};

}  // namespace scanback::dap
