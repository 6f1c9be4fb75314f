#include "recorder/run_loop.h"

namespace scanback::recorder {

namespace {
// How long one wait for the writer lasts before the loop looks at `ending()` again.
constexpr std::chrono::milliseconds kWriterWaitSlice{10};
}  // namespace

RunLoop::Next RunLoop::prepare(RunLoopWaits& waits, CycleStart& next) {
  if (waits.ending()) return Next::Ending;
  if (cycleLimitReached()) return Next::CycleLimit;
  next = runtime_.nextCycle();
  if (options_.untilNs && next.startNs >= *options_.untilNs) return Next::TimeLimit;
  if (next.startNs == kClockEndNs) return Next::ClockEnded;
  if (options_.realtime) {
    const auto now = std::chrono::steady_clock::now();
    if (!anchored_) {
      anchor_ = now - std::chrono::nanoseconds(next.startNs);
      anchored_ = true;
    } else if (const auto due = anchor_ + std::chrono::nanoseconds(next.startNs); due > now) {
      // The cycles that ended go to the writer before the wait: a task that waits long for its
      // next release must not keep them (the recording's flush window counts from their end).
      if (recorder_) recorder_->idle();
      if (waits.waitUntil(due)) anchored_ = false;  // cut short: this cycle now, pacing from here
    }
  } else if (recorder_) {
    // Faster than real time the task may wait for the recorder between cycles and lose none; in
    // real time the recorder drops cycles instead (the task never waits).
    while (recorder_->backlogged() && !waits.ending()) recorder_->waitUntilNotBacklogged(kWriterWaitSlice);
  }
  if (waits.ending()) return Next::Ending;
  if (stimulus_) stimulus_->apply(next.cycle, runtime_);
  return Next::Cycle;
}

}  // namespace scanback::recorder
