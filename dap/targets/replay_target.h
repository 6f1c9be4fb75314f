// The replay target: recorded history moved through by a replayer (dap/targets/replay_engine.h)
// under the one state machine (run_control.h). Every request of a live session works on it —
// breakpoints, steps, stack, variables, evaluate — plus the reverse moves, seek and restartFrame
// (history() is itself). History is read-only: writes and reloads are refused.
//
// Moves run on the target's own thread (a long continue never blocks the session); the stop is
// published under the control's lock, as every target does, so the generation rule holds. While
// paused, the session reads the replayer's VM.
//
// open(): a trace that is complete (a replay session). follow(): the trace of a task that runs on
// untouched and grows while the session looks at it (a nonstop session; an attached one).
#pragma once

#include <memory>
#include <string>

#include "dap/targets/controlled_target.h"
#include "dap/targets/history_feed.h"
#include "dap/targets/replay_engine.h"

namespace scanback::dap {

class ReplayTarget final : public ControlledTarget, public TargetHistory {
 public:
  // Opens the trace and compiles the program it carries. Null with `error` when it cannot.
  [[nodiscard]] static std::unique_ptr<ReplayTarget> open(const std::string& path, TargetListener& listener,
                                                          std::string& error);
  // Follows the trace `feed` writes, from the start of the session (start() starts the feed). A
  // `continue` then follows the growing end until a stop, `pause` stops at the newest recorded
  // position, and a forward step that reaches the end stops there (it never waits for the task).
  // start() without stopOnEntry begins with such a continue. Null with `error`.
  // `fromNewest`: the first stop (or the continue start() begins with) is at the newest recorded
  // position rather than the first (an attached session: what happened before it attached holds
  // no stop for it).
  [[nodiscard]] static std::unique_ptr<ReplayTarget> follow(std::unique_ptr<HistoryFeed> feed, TargetListener& listener,
                                                            std::string& error, bool fromNewest = false);
  ~ReplayTarget() override;

  const std::shared_ptr<const Program>& program() const { return replay_->program(); }
  // Where the first stop is (before start()). False with `error` when the recording has no such cycle.
  [[nodiscard]] bool setStartAt(const StartAt& at, std::string& error) { return replay_->setStartAt(at, error); }

  void start(bool stopOnEntry) override;
  const Vm& vm() const override { return replay_->vm(); }
  [[nodiscard]] bool write(ExternalWrite write, std::string& error) override;
  [[nodiscard]] bool reload(ReloadRequest request, std::string& error) override;
  bool readOnly() const override { return true; }
  std::string readOnlyReason() const override { return readOnlyReason_; }
  // What a write or reload is told (an attached session says why it is read-only).
  void setReadOnlyReason(std::string reason) { readOnlyReason_ = std::move(reason); }
  bool runsOn() const override { return feed_ && !replay_->hasGrowthEnded() && !feed_->paused(); }
  TargetHistory* history() override { return this; }

  [[nodiscard]] std::optional<HistoryPosition> recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                                std::string& error) override {
    return replay_->recordedPosition(cycle, step, error);
  }
  [[nodiscard]] std::optional<HistoryPosition> frameStart(size_t frame, std::string& error) override {
    return replay_->frameStart(frame, error);
  }
  [[nodiscard]] std::optional<HistoryPosition> newestPosition(std::string& error) override {
    return replay_->newestPosition(error);
  }
  void jump(HistoryPosition position, StopReason reason) override { control_.post(Move::jump(position, reason)); }
  [[nodiscard]] std::optional<Timeline> timeline(std::string& error) override;
  std::string traceFile() const override { return feed_ ? feed_->partialPath() : path_; }
  std::optional<Timeline::CycleTime> cycleTime() const override { return feed_ ? feed_->cycleTime() : std::nullopt; }
  std::optional<Timeline::Recording> recording() const override { return feed_ ? feed_->recording() : std::nullopt; }
  // Following a task (nonstop, attached): forces act on it; a trace alone refuses them
  // (kForcesNeedALiveTask). Paused, the forces shown are those recorded at the position; running
  // beside a task, the task's.
  [[nodiscard]] std::optional<Force> force(const std::string& target, const std::string& value,
                                           std::string& error) override;
  [[nodiscard]] std::optional<std::vector<std::string>> release(const std::string& target, std::string& error) override;
  [[nodiscard]] std::optional<ForcesShown> forced(std::string& error) override;

 private:
  ReplayTarget(std::unique_ptr<ReplayEngine> replay, TargetListener& listener);
  void carryOut(const Move& move) override { replay_->carryOut(move, control_); }
  void ended() override;

  std::unique_ptr<ReplayEngine> replay_;
  std::unique_ptr<HistoryFeed> feed_;  // following a growing trace
  std::string readOnlyReason_ = kHistoryIsReadOnly;
  std::string path_;  // a complete trace (open())
};

}  // namespace scanback::dap
