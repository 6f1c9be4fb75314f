// The one pause/resume state machine of every target (live, replay, a live session with history,
// and later an attached one): its thread, its state, the moves the session asks for, pause
// requests, and the lock a stop is published under.
//
//   Configuring --start()--> Running --publish()--> Paused --post()--> Running ...
//   any state --finish() (the program ended) or terminate() (the session ends)--> Finished
//
// The session's thread asks (start, post, pause, setStops); the target's thread carries out one
// move at a time (nextMove) and publishes where it stopped. The engine doing the work — a live
// task (live_engine.h) or a replayer (replay_engine.h) — runs on that thread and is never touched
// by the session's thread except while the thread is parked (Configuring, Paused).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "dap/targets/target.h"

namespace scanback::dap {

// What the session asks a target's thread to do next.
struct Move {
  enum class Kind { Start, Resume, Jump };
  Kind kind = Kind::Resume;
  ResumeKind resume = ResumeKind::Continue;  // Resume
  uint32_t task = 0;                         // Resume: the thread the request named
  bool stopOnEntry = false;                  // Start
  HistoryPosition to;                        // Jump
  StopReason reason = StopReason::Goto;      // Jump: what the stop there is reported as

  static Move start(bool stopOnEntry) { return Move{Kind::Start, ResumeKind::Continue, 0, stopOnEntry, {}, {}}; }
  static Move resumed(ResumeKind kind, uint32_t task) { return Move{Kind::Resume, kind, task, false, {}, {}}; }
  static Move jump(HistoryPosition to, StopReason reason) {
    return Move{Kind::Jump, ResumeKind::Continue, 0, false, to, reason};
  }
  bool isStep() const {
    return kind == Kind::Resume && resume != ResumeKind::Continue && resume != ResumeKind::ReverseContinue;
  }
};

// Where a step that began in history started: the live task finishes it as if it had begun there.
struct StepOrigin {
  uint64_t cycle = 0;
  uint32_t depth = 0;  // the call depth of the step's task there (as Vm::callDepth counts)
  // A step over: the innermost frame of the origin's that is still active where the live task
  // takes the step over (the origin's own, or a caller when it has returned meanwhile). The step
  // ends at the first statement of that frame or a caller of it.
  uint32_t floor = 0;
};

class RunControl {
 public:
  enum class State { Configuring, Running, Paused, Finished };

  explicit RunControl(TargetListener& listener);
  ~RunControl();  // terminate()

  // ---- the session's thread
  // Configuring -> Running: starts the target's thread on `body`, which takes `first` from
  // nextMove(). False when not configuring.
  bool start(Move first, std::function<void()> body);
  // Paused -> Running with `move` for the target's thread; clears a pause request and the last
  // stop. False when not paused.
  bool post(Move move);
  // Running: asks for a stop at the next statement of `task` (a live task) or as soon as the move
  // under way can stop (a replayer's search is cut short), and cuts a wait short. False when not
  // running (no stop follows).
  bool pause(uint32_t task);
  // Replaces the stops, under the lock a stop is published under: once this returns, no stop of
  // an older set is reported. `whileParked` runs under that lock too when the thread is parked
  // (Configuring, Paused), e.g. to read the watched values where the task is paused.
  void setStops(std::shared_ptr<const StopSet> stops,
                const std::function<void(const std::shared_ptr<const StopSet>&)>& whileParked = {});
  // Runs `f` under the lock when the thread is parked (Configuring, Paused) / paused, so that no
  // move starts meanwhile; false (and `f` not run) otherwise.
  bool whileParked(const std::function<void()>& f) const { return runIf(f, true); }
  bool whilePaused(const std::function<void()>& f) const { return runIf(f, false); }
  State state() const;
  bool paused() const { return state() == State::Paused; }
  bool finished() const { return state() == State::Finished; }
  std::optional<StopInfo> lastStop() const;
  // Ends the target's thread for good (its waits end, nextMove() returns nothing) and joins it:
  // Finished. Safe to call again.
  void terminate();

  // ---- the target's thread
  // Waits for the next move; nullopt when the target is terminating.
  std::optional<Move> nextMove();
  // What publish() did with a stop.
  enum class Published {
    Stopped,     // Paused, and the listener was told
    GoOn,        // a breakpoint of a replaced set: dropped, the move goes on (mayGoOn)
    Terminating  // the target is ending: nothing reported
  };
  struct StopRules {
    // A breakpoint or data breakpoint found with a replaced set may be dropped and the move go on
    // (a live task running on); else it is reported as a pause or a step.
    bool mayGoOn = false;
    // A pause asked for during the move makes any stop but a fault's a pause (a replayer whose
    // search was cut short, or that was placing the position when the pause came).
    bool pauseWins = false;
  };
  // Publishes where the move stopped, found with the StopSet of `generation`: Paused, the last
  // stop, and the listener's `stopped` under the lock (the generation rule).
  Published publish(StopInfo stop, uint64_t generation, StopRules rules);
  // The program ended: Finished. False when the target is terminating (nothing is reported then).
  bool finish();
  bool terminating() const;
  // Waits until `due`; true when a pause request or the end cut it short.
  bool sleepUntil(std::chrono::steady_clock::time_point due);
  bool pauseRequested() const { return pauseRequested_.load(std::memory_order_acquire); }
  bool pauseRequestedFor(uint32_t task) const {
    return pauseRequested() && pauseTask_.load(std::memory_order_relaxed) == task;
  }
  // Set from pause() until the next stop or move: what a replayer's search checks to cut itself
  // short (Replayer::setCancelFlag).
  const std::atomic<bool>& pauseFlag() const { return pauseRequested_; }
  // The current stops (under the lock), and their generation without it (checked at every
  // statement of a live task).
  std::shared_ptr<const StopSet> stops() const;
  uint64_t stopsGeneration() const { return stopsGeneration_.load(std::memory_order_acquire); }

 private:
  bool runIf(const std::function<void()>& f, bool configuring) const;

  TargetListener& listener_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  State state_ = State::Configuring;
  bool terminating_ = false;
  std::optional<Move> move_;
  std::optional<StopInfo> lastStop_;
  std::shared_ptr<const StopSet> stops_;
  std::atomic<uint64_t> stopsGeneration_{0};
  std::atomic<bool> pauseRequested_{false};
  std::atomic<uint32_t> pauseTask_{0};
};

}  // namespace scanback::dap
