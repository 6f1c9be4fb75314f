// The loop that feeds a task's cycles: limits, pacing to the wall clock, waiting for the recorder,
// the stimulus. One loop for `scanback run` and for a debug session's live task, which differ only
// in what may cut a wait short (a signal; a debugger's pause or the end of the session) and in how
// they execute the cycle once it is prepared (to its end; statement by statement under a debugger).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "recorder/recorder.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/stimulus.h"

namespace scanback::recorder {

struct RunLoopOptions {
  // Start each cycle at its virtual start time on the wall clock; else as fast as it goes, waiting
  // for the recorder instead of letting it drop cycles (the virtual clock does not mind).
  bool realtime = false;
  std::optional<uint64_t> cycles;  // end after this many cycles
  std::optional<int64_t> untilNs;  // end before the first cycle that starts at or after this virtual time
};

// What may interrupt the loop's waits, from the loop's caller.
class RunLoopWaits {
 public:
  virtual ~RunLoopWaits() = default;
  // Waits until `due` unless something cuts the wait short; true when it was cut short.
  virtual bool waitUntil(std::chrono::steady_clock::time_point due) = 0;
  // Whether the run is ending: no wait goes on.
  virtual bool ending() = 0;
};

class RunLoop {
 public:
  // ClockEnded: no task has a release left before the end of the virtual clock (kClockEndNs).
  enum class Next { Cycle, CycleLimit, TimeLimit, ClockEnded, Ending };

  RunLoop(Runtime& runtime, RunLoopOptions options) : runtime_(runtime), options_(options) {}
  const RunLoopOptions& options() const { return options_; }
  // The recording the loop waits for when not in real time, and hands its staged cycles before it
  // waits for a release in real time (null: none). Between cycles only.
  void setRecorder(Recorder* recorder) { recorder_ = recorder; }
  void setStimulus(Stimulus* stimulus) { stimulus_ = stimulus; }

  // Before the next cycle: checks the limits, waits for its time (real time) or for the recorder,
  // and applies the stimulus row of that cycle. With Next::Cycle, Runtime::startCycle() follows;
  // `next` is the cycle. A wait cut short starts the cycle at once, pacing again from then on.
  Next prepare(RunLoopWaits& waits, CycleStart& next);
  // Whether the cycles asked for have all run (prepare() then says CycleLimit).
  bool cycleLimitReached() const { return options_.cycles && runtime_.cycle() >= *options_.cycles; }
  // Pacing starts again from now: after the task was paused, it does not catch up on the cycles it
  // missed meanwhile (a burst), and their virtual times stay as they are.
  void restartPacing() { anchored_ = false; }

 private:
  Runtime& runtime_;
  RunLoopOptions options_;
  Recorder* recorder_ = nullptr;
  Stimulus* stimulus_ = nullptr;
  bool anchored_ = false;
  std::chrono::steady_clock::time_point anchor_;  // the wall time of virtual time 0
};

}  // namespace scanback::recorder
