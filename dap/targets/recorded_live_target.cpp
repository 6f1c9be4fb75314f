#include "dap/targets/recorded_live_target.h"

#include <filesystem>

#include <fmt/format.h>

namespace scanback::dap {

RecordedLiveTarget::RecordedLiveTarget(std::shared_ptr<const Program> program, LiveOptions options,
                                       TargetListener& listener)
    : ControlledTarget(listener), live_(std::move(program), std::move(options), control_, listener) {}

RecordedLiveTarget::~RecordedLiveTarget() { terminate(); }

// ---------------------------------------------------------------- the target's thread

void RecordedLiveTarget::carryOut(const Move& move) {
  if (move.kind == Move::Kind::Start || mode_ == Mode::Live) return runLive(move, std::nullopt);
  if (move.kind == Move::Kind::Resume && !isReverse(move.resume) && history_->atEnd()) {
    // At the live position already: the live task carries the move out, from where it is (the
    // statement there was checked when the task got there). At a fault, the program then ends.
    mode_ = Mode::Live;
    return runLive(move, std::nullopt);
  }
  const ReplayEngine::Origin from = history_->origin(move.task);
  if (history_->carryOut(move, control_) != ReplayEngine::Ended::AtLiveEdge) return;
  // History -> Live: the live task goes on with the same move, a step as if it had begun where it
  // began in history, so that it ends where it would have ended live.
  mode_ = Mode::Live;
  if (move.resume == ResumeKind::Continue || move.task != from.task)
    return runLive(Move::resumed(move.resume, move.task), std::nullopt);
  runLive(move, history_->liveStepOrigin(from));
}

void RecordedLiveTarget::runLive(const Move& move, std::optional<StepOrigin> from) {
  int exitCode = 0;
  if (live_.run(move, from, exitCode) == LiveEngine::Outcome::Ended && control_.finish()) listener_.exited(exitCode);
}

// ---------------------------------------------------------------- the session's thread

void RecordedLiveTarget::resume(ResumeKind kind, uint32_t task) {
  if (mode_ == Mode::Live && !isReverse(kind)) return ControlledTarget::resume(kind, task);
  std::string error;
  if (!inHistory(error)) {
    // The response has gone out: the client waits for a stop, so it gets one where the task is.
    listener_.output("stderr", fmt::format("cannot move into the history: {}\n", error));
    StopInfo here = lastStop().value_or(StopInfo{StopReason::Step, task});
    here.reason = StopReason::Step;
    here.breakpointIds.clear();
    listener_.stopped(here);
    return;
  }
  ControlledTarget::resume(kind, task);
}

const Vm& RecordedLiveTarget::vm() const { return mode_ == Mode::Live ? live_.vm() : history_->vm(); }

bool RecordedLiveTarget::atLivePosition() const {
  if (mode_ == Mode::Live) return true;
  bool atEnd = false;
  control_.whilePaused([&] { atEnd = history_->atEnd(); });
  return atEnd;
}

std::optional<ForcesShown> RecordedLiveTarget::forced(std::string& error) {
  if (!atLivePosition()) {
    std::optional<ForcesShown> shown;
    bool wasPaused = control_.whilePaused([&] {
      std::optional<std::vector<Force>> held = history_->forcesHeld(error);
      if (held) shown = ForcesShown{std::move(*held), history_->position()};
    });
    if (wasPaused) return shown;
  }
  std::optional<std::vector<Force>> live = live_.forced(error);
  if (!live) return std::nullopt;
  return ForcesShown{std::move(*live), std::nullopt};
}

bool RecordedLiveTarget::write(ExternalWrite write, std::string& error) {
  if (!atLivePosition()) {
    error =
        "this is history, which is read-only: go forward to where the program is paused (continue, or step "
        "forward) to write values";
    return false;
  }
  mode_ = Mode::Live;  // the same state: the write goes to the live task
  return live_.write(std::move(write), error);
}

bool RecordedLiveTarget::reload(ReloadRequest request, std::string& error) {
  if (!atLivePosition()) {
    error = "this is history: go forward to where the program is paused (continue, or step forward) to reload it";
    return false;
  }
  mode_ = Mode::Live;
  return live_.reload(std::move(request), error);
}

bool RecordedLiveTarget::inHistory(std::string& error) {
  if (mode_ == Mode::History) return true;
  if (!paused()) {
    error = "the program is running: pause it first";
    return false;
  }
  // Live -> History: the trace made to hold every ended cycle, and the cycle under way.
  LiveHistory now;
  if (!live_.history(now, error)) return false;
  if (!history_ || now.segment != segment_) {
    // The first move into history, or the first since a reload started another trace.
    history_ = ReplayEngine::follow(now.partialPath, now.program, listener_, error);
    if (!history_) return false;
    history_->setControl(control_);
    history_->endAtLiveTask();
    if (now.segment > 0) {
      const std::vector<std::string> traces = live_.tracePaths();
      history_->setStartNote(fmt::format(
          "the start of the history since the last stReload: the cycles before it are in {}", traces[now.segment - 1]));
    }
    segment_ = now.segment;
  }
  if (!history_->moveToLive(now.open ? &*now.open : nullptr, now.atCycleEnd, error)) return false;
  open_ = std::move(now.open);
  mode_ = Mode::History;
  return true;
}

std::optional<HistoryPosition> RecordedLiveTarget::recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                                    std::string& error) {
  if (!inHistory(error)) return std::nullopt;
  return history_->recordedPosition(cycle, step, error);
}

std::optional<HistoryPosition> RecordedLiveTarget::frameStart(size_t frame, std::string& error) {
  if (!inHistory(error)) return std::nullopt;
  return history_->frameStart(frame, error);
}

std::optional<HistoryPosition> RecordedLiveTarget::newestPosition(std::string& error) {
  // Entering the history moves it to where the live task is paused: that is the newest position.
  if (!inHistory(error)) return std::nullopt;
  return history_->newestPosition(error);
}

void RecordedLiveTarget::jump(HistoryPosition position, StopReason reason) {
  std::string error;
  if (!inHistory(error)) return;  // (recordedPosition() or frameStart() entered it)
  control_.post(Move::jump(position, reason));
}

std::string RecordedLiveTarget::traceFile() const {
  // The trace of the program version running now: `.partial` while it is being recorded.
  const std::vector<std::string> traces = live_.tracePaths();
  if (traces.empty()) return {};
  std::error_code ignored;
  const std::string partial = traces.back() + ".partial";
  return std::filesystem::exists(partial, ignored) ? partial : traces.back();
}

std::optional<Timeline> RecordedLiveTarget::timeline(std::string& error) {
  // Asking where history ends while paused live moves into it (at the live position, so nothing
  // the client sees changes).
  if (!inHistory(error)) return std::nullopt;
  std::optional<Timeline> t = history_->timeline(error);
  if (t) {
    t->cycleTime = live_.cycleTime();
    t->recording = live_.recording();
  }
  return t;
}

}  // namespace scanback::dap
