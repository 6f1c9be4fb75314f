// A live session that keeps its history: the live target records every cycle (recorder/), and a
// reverse move from a pause goes into that history, where a replay target following the trace
// takes over while the live task stays paused where it was. Moving forward replays up to the live
// position (the cycle under way included, rebuilt from its scan inputs); a move that finds no
// stop before it is handed back to the live task, which goes on from there for real.
//
// Which of the two the session talks to is the mode: Live (the live target, running or paused)
// or History (the replay target; the live task paused). Live -> History happens on the session's
// thread (a reverse move, seek, restartFrame, timeline); History -> Live on the replay target's
// thread when a forward move reaches the live position. Both switches and pause() take one lock,
// so that a pause is never lost between them.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "dap/targets/live_target.h"
#include "dap/targets/replay_target.h"

namespace scanback::dap {

class RecordedLiveTarget final : public Target, private TargetListener {
 public:
  // `options.recordPath` is the trace; `keepTrace`: leave it (and the traces after reloads) on
  // disk at the end, else they are removed. `nonstop`: the live task is never halted; the session
  // works on the history only, which follows the trace as it grows (ReplayTarget::followGrowth).
  RecordedLiveTarget(std::shared_ptr<const Program> program, LiveOptions options, bool keepTrace, bool nonstop,
                     TargetListener& listener);
  ~RecordedLiveTarget() override;

  // Before start(). False with `error` when the trace cannot be created.
  bool startRecording(std::string& error) { return live_.startRecording(error); }

  void setStops(std::shared_ptr<const StopSet> stops) override;
  void start(bool stopOnEntry) override;
  void resume(ResumeKind kind, uint32_t task) override;
  bool pause(uint32_t task) override;
  bool paused() const override;
  // Nonstop: the history stays open after the program has ended.
  bool finished() const override;
  std::optional<StopInfo> lastStop() const override;
  const Vm& vm() const override;
  bool write(ExternalWrite write, std::string& error) override;
  bool reload(ReloadRequest request, std::string& error) override;
  void terminate() override;

  bool hasHistory() const override { return true; }
  bool readOnly() const override;
  std::optional<HistoryPosition> recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                  std::string& error) override;
  std::optional<HistoryPosition> frameStart(size_t frame, std::string& error) override;
  void jump(HistoryPosition position, StopReason reason) override;
  std::optional<Timeline> timeline(std::string& error) const override;
  // The live task's cycle times (for the timeline and benchmarks).
  const CycleTimes& cycleTimes() const { return live_.cycleTimes(); }

 private:
  enum class Mode { Live, History };
  // Where a forward move in history began: a step the live task takes over continues from there.
  struct MoveStart {
    uint64_t cycle = 0;
    uint32_t task = 0;
    uint32_t depth = 0;
  };

  // The replay target's reports go to the session as they are.
  void stopped(const StopInfo& stop) override { listener_.stopped(stop); }
  void output(std::string_view category, const std::string& text) override { listener_.output(category, text); }
  void exited(int exitCode) override { listener_.exited(exitCode); }

  // The live target's reports: as they are, except the end of the program in a nonstop session,
  // where the history stays open (the session follows the recording to its end: the fault, say).
  class LiveReports final : public TargetListener {
   public:
    explicit LiveReports(RecordedLiveTarget& owner) : owner_(owner) {}
    void stopped(const StopInfo& stop) override { owner_.listener_.stopped(stop); }
    void output(std::string_view category, const std::string& text) override {
      owner_.listener_.output(category, text);
    }
    void exited(int exitCode) override { owner_.liveEnded(exitCode); }

   private:
    RecordedLiveTarget& owner_;
  };
  void liveEnded(int exitCode);

  // With switch_ held and the live task paused: the history up to the live position, paused there.
  bool enterHistory(std::string& error);
  // In history with switch_ held; enters it first when live. False with `error` when it cannot.
  bool inHistory(std::string& error);
  // The replay target's thread: a forward move reached the live position (see ReplayTarget::follow).
  bool handOver(ResumeKind move, uint32_t task);
  // In history at the live position: the same state as the live task's.
  bool atLivePosition() const;

  TargetListener& listener_;
  bool nonstop_ = false;
  LiveReports liveReports_{*this};
  LiveTarget live_;
  bool keepTrace_ = false;

  mutable std::mutex switch_;  // mode changes, pause()
  std::atomic<Mode> mode_{Mode::Live};
  std::unique_ptr<ReplayTarget> history_;  // created at the first move into history
  uint64_t segment_ = 0;                   // the trace history_ follows (a reload starts another)
  std::shared_ptr<const StopSet> stops_;
  MoveStart moveStart_;
};

}  // namespace scanback::dap
