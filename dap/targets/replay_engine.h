// A recorded history moved through by a Replayer (replayer/), on its target's thread: the moves a
// session asks for (forward and their reverse mirrors, jumps), the stop checker's breakpoints and
// watches as the replayer searches for them, and what the history holds and where it is (the
// TargetHistory queries, answered while the target is paused). What ReplayTarget runs, and the
// history side of RecordedLiveTarget.
//
// Three kinds of history: a trace that is complete (a replay session); the history of a live task
// paused beside it (following a live task: its end is the live position, where a forward move
// that finds no stop is handed back to the task); and a trace that grows while the session looks
// at it (beside a task that never stops: a nonstop session, an attached one).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "dap/protocol/arguments.h"  // StartAt
#include "dap/targets/run_control.h"
#include "dap/targets/stop_checker.h"
#include "replayer/replayer.h"

namespace scanback::dap {

class ReplayEngine {
 public:
  // A complete trace; its program compiled from the sources it carries. Null with `error`.
  [[nodiscard]] static std::unique_ptr<ReplayEngine> open(const std::string& path, TargetListener& listener,
                                                          std::string& error);
  // A trace still being written (`partialPath`) of `program`; it may hold no cycle yet.
  [[nodiscard]] static std::unique_ptr<ReplayEngine> follow(const std::string& partialPath,
                                                            std::shared_ptr<const Program> program,
                                                            TargetListener& listener, std::string& error);

  // ---- how the history behaves (before the first move)
  // The control whose pause requests cut a search short (Replayer::setCancelFlag).
  void setControl(RunControl& control);
  // Following a live task: the end is the live position, and a forward move that reaches it
  // without a reason to stop is the live task's to finish (carryOut() returns AtLiveEdge).
  void endAtLiveTask() { endIsLive_ = true; }
  // The trace grows while the session looks at it, beside a task that never stops. A continue
  // follows the growing end until a stop (or a pause, which stops at the newest recorded
  // position); a forward step that reaches the end stops there (it never waits for the task). A
  // start without stopOnEntry begins with such a continue. `executing`: set while the task
  // executes a cycle on this machine, which replaying waits out (Replayer::setGiveWayFlag; null:
  // the task runs elsewhere). `fromNewest`: that start is at the newest recorded position, where
  // `sourcePaused` (when given) says whether the task is paused there (a paused attached runtime):
  // then the start is a pause, not a continue.
  void followGrowth(const std::atomic<bool>* executing, bool fromNewest = false,
                    std::function<bool()> sourcePaused = {});
  // Growing: the trace is complete (the task has ended); a continue then stops at its end.
  void growthEnded() { growthEnded_.store(true, std::memory_order_release); }
  bool hasGrowthEnded() const { return growthEnded_.load(std::memory_order_acquire); }
  // Said instead of "the start of the recording was reached" when a move reaches the start (a live
  // session's trace that begins at a reload).
  void setStartNote(std::string note) { startNote_ = std::move(note); }
  // Where the first stop is. False with `error` when the recording has no such cycle.
  [[nodiscard]] bool setStartAt(const StartAt& at, std::string& error);

  // ---- the target's thread
  enum class Ended { Stopped, AtLiveEdge, Terminating };
  // Carries out `move` and publishes where it stopped through `control` — unless it is a forward
  // move that reached the live position without a reason to stop there and no pause is asked for
  // (AtLiveEdge: nothing is published; the live task takes the move over).
  Ended carryOut(const Move& move, RunControl& control);

  // ---- the session's thread, while the target is paused (or before it starts)
  const Vm& vm() const { return replayer_->vm(); }
  const std::shared_ptr<const Program>& program() const { return replayer_->programPtr(); }
  const std::vector<std::string>& warnings() const { return replayer_->history().warnings(); }
  [[nodiscard]] std::optional<HistoryPosition> recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                                std::string& error);
  [[nodiscard]] std::optional<HistoryPosition> frameStart(size_t frame, std::string& error);
  [[nodiscard]] std::optional<Timeline> timeline(std::string& error);
  // The forces held at the current position, as the trace records them (those of its cycle, in
  // the order they were set), shown by the program of that position. Nullopt with `error` when the
  // trace cannot be read there.
  [[nodiscard]] std::optional<std::vector<Force>> forcesHeld(std::string& error);
  // The newest position of the recording (picking up what a growing trace gained first).
  [[nodiscard]] std::optional<HistoryPosition> newestPosition(std::string& error);
  HistoryPosition position() const {
    const replay::Position p = replayer_->position();
    return HistoryPosition{p.cycle, p.step};
  }
  // Following a live task: picks up what the trace gained, appends the cycle under way (none when
  // the task is paused at a fault or at a cycle's end: `atCycleEnd`) and moves to the live
  // position.
  [[nodiscard]] bool moveToLive(const replay::OpenCycle* open, bool atCycleEnd, std::string& error);
  // Whether the position is the end (following a live task: the live position).
  bool atEnd();
  // Where a move that begins here began: the cycle, the task of the cycle under way (`task` when
  // between cycles) and the call depth in `task`.
  struct Origin {
    uint64_t cycle = 0, step = 0;
    uint32_t task = 0;
    uint32_t depth = 0;
  };
  Origin origin(uint32_t task) const;
  // Following a live task, after a step from `from` reached the live position: where the live
  // task is to finish it from (the origin's frame, or the caller of it still active here).
  StepOrigin liveStepOrigin(const Origin& from);

 private:
  ReplayEngine(std::unique_ptr<replay::Replayer> replayer, TargetListener& listener);

  // Runs a move: where it stopped, or nullopt with `error`. `atLiveEdge`: a forward move that
  // reached the live position without a reason to stop there.
  [[nodiscard]] std::optional<StopInfo> execute(const Move& move, RunControl& control, bool& atLiveEdge,
                                                std::string& error);
  [[nodiscard]] std::optional<StopInfo> moveFrom(const Move& move, RunControl& control, bool& atLiveEdge,
                                                 std::string& error);
  // The stop a replayer stop is reported as (a breakpoint's id, the fault at the end, ...).
  StopInfo describe(const replay::Stop& stop, const StopChecker::Search& search);
  // A step named a task other than the current position's: that task's next (or, going back,
  // previous) recorded cycle is where it ends, as a live step from another task's stop does.
  [[nodiscard]] std::optional<replay::Stop> stepOtherTask(ResumeKind move, uint32_t task, std::string& error);
  // Growing: waits until the trace gains cycles. False when paused or ending meanwhile, or when
  // the trace is complete.
  bool waitForGrowth(RunControl& control);
  // Growing: a forward step that found its end past the newest recorded position waits for the
  // task to record more, then is made again from `from` (Again), as a live step runs on until it
  // ends; Ended when the trace is complete (the step ends at its end); Failed with `error`
  // (kCancelled when a pause cut the wait short).
  enum class Retry { Again, Ended, Failed };
  [[nodiscard]] Retry retryStepFrom(const replay::Position& from, RunControl& control, std::string& error);
  // Whether `position` is the fault the recording ends in.
  bool atFault(const replay::Position& position) const;

  std::unique_ptr<replay::Replayer> replayer_;
  TargetListener& listener_;
  StopChecker checker_;  // the set of the move under way
  std::string startNote_;
  std::optional<replay::Position> startAt_;  // null: the end
  bool endIsLive_ = false;
  bool growing_ = false;
  bool growFromNewest_ = false;
  std::function<bool()> sourcePaused_;
  std::atomic<bool> growthEnded_{false};
  bool niced_ = false;
  static constexpr int kNonstopNice = 10;  // the thread's nice value when growing_
};

}  // namespace scanback::dap
