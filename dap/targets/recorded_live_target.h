// A live session that keeps its history: the live task records every cycle (recorder/), and a
// reverse move from a pause goes into that history, where a replayer following the trace takes
// over while the live task stays paused where it was. Moving forward replays up to the live
// position (the cycle under way included, rebuilt from its scan inputs); a move that finds no stop
// before it is handed back to the live task, which goes on from there for real.
//
// One thread and one state machine (run_control.h) drive both engines: the live task
// (live_engine.h) and the replayer (replay_engine.h). Which of the two a move goes to is the mode:
// Live or History (the live task paused). Live -> History happens on the session's thread while
// paused (a reverse move, seek, restartFrame, timeline); History -> Live on the target's thread,
// when a forward move reaches the live position: the same move goes on live, so a pause asked for
// at any time stops whichever engine is moving.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "dap/targets/controlled_target.h"
#include "dap/targets/live_engine.h"
#include "dap/targets/replay_engine.h"

namespace scanback::dap {

class RecordedLiveTarget final : public ControlledTarget, public TargetHistory {
 public:
  // `options.recordPath` is the trace.
  RecordedLiveTarget(std::shared_ptr<const Program> program, LiveOptions options, TargetListener& listener);
  ~RecordedLiveTarget() override;

  // Before start(). False with `error` when the trace cannot be created.
  [[nodiscard]] bool startRecording(std::string& error) { return live_.startRecording(error); }

  void resume(ResumeKind kind, uint32_t task) override;
  const Vm& vm() const override;
  [[nodiscard]] bool write(ExternalWrite write, std::string& error) override;
  [[nodiscard]] bool reload(ReloadRequest request, std::string& error) override;
  bool readOnly() const override { return !atLivePosition(); }
  // Forces act on the live task wherever the session looks (from its next cycle start); the forces
  // shown are the live task's at the live position, the recorded ones in history.
  [[nodiscard]] std::optional<Force> force(const std::string& target, const std::string& value,
                                           std::string& error) override {
    return live_.force(target, value, error);
  }
  [[nodiscard]] std::optional<std::vector<std::string>> release(const std::string& target,
                                                                std::string& error) override {
    return live_.release(target, error);
  }
  [[nodiscard]] std::optional<ForcesShown> forced(std::string& error) override;
  TargetHistory* history() override { return this; }

  [[nodiscard]] std::optional<HistoryPosition> recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                                std::string& error) override;
  [[nodiscard]] std::optional<HistoryPosition> frameStart(size_t frame, std::string& error) override;
  [[nodiscard]] std::optional<HistoryPosition> newestPosition(std::string& error) override;
  void jump(HistoryPosition position, StopReason reason) override;
  [[nodiscard]] std::optional<Timeline> timeline(std::string& error) override;
  const trace::OpenCycleData* openCycle() const override { return open_ ? &*open_ : nullptr; }
  std::string traceFile() const override;
  std::optional<Timeline::CycleTime> cycleTime() const override { return live_.cycleTime(); }
  std::optional<Timeline::Recording> recording() const override { return live_.recording(); }

 private:
  enum class Mode { Live, History };

  void carryOut(const Move& move) override;
  void stopsChanged(const std::shared_ptr<const StopSet>& stops) override { live_.takeStops(stops); }
  void ended() override { live_.end(); }
  // The target's thread: the live task carries out the move (`from`: a step begun in history).
  void runLive(const Move& move, std::optional<StepOrigin> from);
  // The session's thread, paused: in history, entering it (at the live position) when live.
  [[nodiscard]] bool inHistory(std::string& error);
  // Where the live task is paused: live, or in history at its end.
  bool atLivePosition() const;

  LiveEngine live_;
  std::unique_ptr<ReplayEngine> history_;  // created at the first move into history
  uint64_t segment_ = 0;                   // the trace history_ follows (a reload starts another)
  std::atomic<Mode> mode_{Mode::Live};
  std::optional<replay::OpenCycle> open_;  // the cycle under way where the live task is paused
};

}  // namespace scanback::dap
