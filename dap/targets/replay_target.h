// The replay target: a recorded trace, moved through by a Replayer (replayer/). Every request of a
// live session works on it — breakpoints, steps, stack, variables, evaluate — plus the reverse
// moves, seek and restartFrame. History is read-only: writes and reloads are refused.
//
// Moves run on the target's own thread (a long continue never blocks the session); the stop is
// published under the target's lock, as the live target does, so the generation rule holds.
// While paused, the session reads the replayer's VM.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "dap/targets/target.h"
#include "replayer/replayer.h"

namespace scanback::dap {

// Where a replay session stops first.
struct StartAt {
  enum class Kind { End, Start, Cycle };
  Kind kind = Kind::End;
  uint64_t cycle = 0;
};

class ReplayTarget final : public Target {
 public:
  // Opens the trace and compiles the program it carries. Null with `error` when it cannot.
  static std::unique_ptr<ReplayTarget> open(const std::string& path, TargetListener& listener, std::string& error);
  // The history of a live task still being recorded to `partialPath` (see RecordedLiveTarget): it
  // may hold no ended cycle yet, and its end is where the live task is paused (the live position).
  // A forward move that finds no stop before the live position is handed to `handOver` (on the
  // target's thread): when that returns true the live task has taken the move over, and no stop
  // is reported here.
  using HandOver = std::function<bool(ResumeKind move, uint32_t task)>;
  // `program` is the live task's (the breakpoints are resolved for it).
  static std::unique_ptr<ReplayTarget> follow(const std::string& partialPath, std::shared_ptr<const Program> program,
                                              HandOver handOver, TargetListener& listener, std::string& error);
  // Beside a live task that never stops (nonstop): the trace grows while the session looks at it.
  // Before start(). A `continue` then follows the growing end until a stop, `pause` stops at the
  // newest recorded position, and a forward step that reaches the end stops there (it never waits
  // for the task). start() without stopOnEntry begins with such a continue.
  // `executing`: set while the task executes a cycle; replaying waits it out (see
  // Replayer::setGiveWayFlag).
  void followGrowth(const std::atomic<bool>* executing) {
    growing_ = true;
    replayer_->setGiveWayFlag(executing);
  }
  // Growing: the task has ended and the trace is complete; a continue then stops at its end.
  void growthEnded() { growthEnded_.store(true, std::memory_order_release); }
  // Following a live task: picks up what the trace gained, appends the cycle under way (none when
  // the task is paused at a fault) and moves to the live position, paused there with `stop`.
  // Only while the target is not moving (before start(), or paused).
  bool moveToLive(const replay::OpenCycle* open, const std::optional<StopInfo>& stop, std::string& error);
  // The current position (while paused).
  HistoryPosition position() const {
    const replay::Position p = replayer_->position();
    return HistoryPosition{p.cycle, p.step};
  }
  // Said instead of "the start of the recording was reached" when a move reaches the start (a live
  // session's trace that begins at a reload). Before the first move.
  void setStartNote(std::string note) { startNote_ = std::move(note); }
  // Whether the current position is the live position (following a live task) or the end.
  bool atEnd() const;
  // Whether pause() was asked for during the move under way.
  bool pauseWanted() const;
  ~ReplayTarget() override;

  const std::shared_ptr<const Program>& program() const { return replayer_->programPtr(); }
  // Where the first stop is (before start()). False with `error` when the recording has no such cycle.
  bool setStartAt(const StartAt& at, std::string& error);

  void setStops(std::shared_ptr<const StopSet> stops) override;
  void start(bool stopOnEntry) override;
  void resume(ResumeKind kind, uint32_t task) override;
  bool pause(uint32_t task) override;
  bool paused() const override;
  bool finished() const override;
  std::optional<StopInfo> lastStop() const override;
  const Vm& vm() const override { return replayer_->vm(); }
  bool write(ExternalWrite write, std::string& error) override;
  bool reload(ReloadRequest request, std::string& error) override;
  void terminate() override;

  bool hasHistory() const override { return true; }
  bool readOnly() const override { return true; }
  std::optional<HistoryPosition> recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                  std::string& error) override;
  std::optional<HistoryPosition> frameStart(size_t frame, std::string& error) override;
  void jump(HistoryPosition position, StopReason reason) override;
  std::optional<Timeline> timeline(std::string& error) const override;

 private:
  ReplayTarget(std::unique_ptr<replay::Replayer> replayer, TargetListener& listener);

  struct Job {
    enum class Kind { Start, Move, Jump } kind = Kind::Move;
    ResumeKind move = ResumeKind::Continue;
    uint32_t task = 0;                     // Move: the thread the request named
    replay::Position target;               // Jump
    StopReason reason = StopReason::Goto;  // Jump
  };
  enum class State { Configuring, Running, Paused, Finished };

  // Hands a move to the worker; only while paused.
  void post(Job job);
  void workerLoop();
  // Runs a job on the worker thread: where it stopped, or nullopt with `error`. `atLiveEdge`: a
  // forward move that reached the live position without a reason to stop there.
  // `stops` is the set the move began with; a continue following a growing trace takes newer sets
  // as they come, and leaves the one its stop was found with.
  std::optional<StopInfo> execute(const Job& job, std::shared_ptr<const StopSet>& stops, bool& atLiveEdge,
                                  std::string& error);
  // The stop a replayer stop is reported as (a breakpoint's id, the fault at the end, ...).
  StopInfo describe(const replay::Stop& stop, const StopSet& stops, const std::vector<int64_t>& breakpointIds);
  // A step named a task other than the current position's: that task's next (or, going back,
  // previous) recorded cycle is where it ends, as a live step from another task's stop does.
  std::optional<replay::Stop> stepOtherTask(ResumeKind move, uint32_t task, std::string& error);
  // Growing: waits until the trace gains cycles. False when paused or ending meanwhile.
  bool waitForGrowth();
  // Whether `position` is the fault the recording ends in.
  bool atFault(const replay::Position& position) const;

  std::unique_ptr<replay::Replayer> replayer_;
  TargetListener& listener_;
  HandOver handOver_;  // set when following a live task
  std::string startNote_;
  std::optional<replay::Position> startAt_;  // null: the end
  bool growing_ = false;
  std::atomic<bool> growthEnded_{false};
  static constexpr int kNonstopNice = 10;  // the worker's nice value when growing_
  bool stopOnEntry_ = true;                // growing: whether the first stop is at the start
  std::thread worker_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  State state_ = State::Configuring;
  bool terminating_ = false;
  bool pauseRequested_ = false;
  std::atomic<bool> cancel_{false};  // set by pause(): the replayer cuts its search short
  std::optional<Job> job_;
  std::optional<StopInfo> lastStop_;
  std::shared_ptr<const StopSet> stops_;
};

}  // namespace scanback::dap
