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
  std::optional<Timeline> timeline() const override;

 private:
  ReplayTarget(std::unique_ptr<replay::Replayer> replayer, TargetListener& listener);

  struct Job {
    enum class Kind { Start, Move, Jump } kind = Kind::Move;
    ResumeKind move = ResumeKind::Continue;
    uint32_t task = 0;                      // Move: the thread the request named
    replay::Position target;                // Jump
    StopReason reason = StopReason::Goto;   // Jump
  };
  enum class State { Configuring, Running, Paused, Finished };

  // Hands a move to the worker; only while paused.
  void post(Job job);
  void workerLoop();
  // Runs a job on the worker thread: where it stopped, or nullopt with `error`.
  std::optional<StopInfo> execute(const Job& job, const StopSet& stops, std::string& error);
  // The stop a replayer stop is reported as (a breakpoint's id, the fault at the end, ...).
  StopInfo describe(const replay::Stop& stop, const StopSet& stops, const std::vector<int64_t>& breakpointIds);
  // A step named a task other than the current position's: that task's next (or, going back,
  // previous) recorded cycle is where it ends, as a live step from another task's stop does.
  std::optional<replay::Stop> stepOtherTask(ResumeKind move, uint32_t task, std::string& error);
  // Whether `position` is the fault the recording ends in.
  bool atFault(const replay::Position& position) const;

  std::unique_ptr<replay::Replayer> replayer_;
  TargetListener& listener_;
  std::optional<replay::Position> startAt_;  // null: the end
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
