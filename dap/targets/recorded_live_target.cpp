#include "dap/targets/recorded_live_target.h"

#include <fmt/format.h>

#include <filesystem>

namespace scanback::dap {

namespace {
// Nonstop: the recorded cycles reach the trace within about this much time.
constexpr int64_t kNonstopLatencyNs = 100'000'000;

LiveOptions nonstopOptions(LiveOptions options, bool nonstop) {
  if (nonstop) options.recordLatencyNs = kNonstopLatencyNs;
  return options;
}
}  // namespace

RecordedLiveTarget::RecordedLiveTarget(std::shared_ptr<const Program> program, LiveOptions options, bool keepTrace,
                                       bool nonstop, TargetListener& listener)
    : listener_(listener),
      nonstop_(nonstop),
      live_(std::move(program), nonstopOptions(std::move(options), nonstop), liveReports_),
      keepTrace_(keepTrace),
      stops_(std::make_shared<StopSet>()) {
  if (nonstop_) {
    // The live task never halts, not even at a fault (the program then ends, as without a debugger).
    auto none = std::make_shared<StopSet>();
    none->stopOnFaults = false;
    live_.setStops(none);
  }
}

void RecordedLiveTarget::start(bool stopOnEntry) {
  if (!nonstop_) return live_.start(stopOnEntry);
  const std::vector<std::string> traces = live_.tracePaths();
  std::string error;
  std::lock_guard lock(switch_);
  if (traces.empty() ||
      !(history_ = ReplayTarget::follow(traces.back() + ".partial", live_.programPtr(), nullptr, *this, error))) {
    listener_.output("stderr", fmt::format("cannot follow the recording: {}\n", error));
    return;
  }
  live_.start(false);
  history_->followGrowth(&live_.executing());
  history_->setStops(stops_);
  mode_ = Mode::History;
  history_->start(stopOnEntry);
}

RecordedLiveTarget::~RecordedLiveTarget() { terminate(); }

void RecordedLiveTarget::setStops(std::shared_ptr<const StopSet> stops) {
  std::lock_guard lock(switch_);
  stops_ = stops;
  if (!nonstop_) live_.setStops(stops);
  if (history_) history_->setStops(stops);
}

void RecordedLiveTarget::resume(ResumeKind kind, uint32_t task) {
  std::lock_guard lock(switch_);
  if (mode_ == Mode::Live && !isReverse(kind)) return live_.resume(kind, task);
  std::string error;
  if (!inHistory(error)) {
    // The response has gone out: the client waits for a stop, so it gets one where the task is.
    listener_.output("stderr", fmt::format("cannot move into the history: {}\n", error));
    StopInfo here = live_.lastStop().value_or(StopInfo{StopReason::Step, task});
    here.reason = StopReason::Step;
    here.breakpointIds.clear();
    listener_.stopped(here);
    return;
  }
  const Vm& vm = history_->vm();
  moveStart_.cycle = history_->position().cycle;
  moveStart_.task = vm.inCycle() ? vm.currentTask() : task;
  moveStart_.depth = vm.inCycle() && vm.currentTask() == task ? vm.callDepth() : 0;
  history_->resume(kind, task);
}

void RecordedLiveTarget::liveEnded(int exitCode) {
  if (!nonstop_) return listener_.exited(exitCode);
  // The trace is complete (the live target finished it before reporting): the history follows it
  // to its end and stays open.
  listener_.output("console", fmt::format("the program has ended (exit code {}); its history stays open until the "
                                          "session ends\n",
                                          exitCode));
  std::lock_guard lock(switch_);
  if (history_) history_->growthEnded();
}

bool RecordedLiveTarget::handOver(ResumeKind move, uint32_t task) {
  std::lock_guard lock(switch_);
  if (!history_) return false;                // ending: terminate() has taken it
  if (history_->pauseWanted()) return false;  // the pause stops the move at the live position
  mode_ = Mode::Live;
  if (move == ResumeKind::Continue || task != moveStart_.task) {
    live_.resume(move, task);
  } else {
    live_.resumeStep(move, task, moveStart_.cycle, moveStart_.depth);
  }
  return true;
}

bool RecordedLiveTarget::pause(uint32_t task) {
  std::lock_guard lock(switch_);
  if (mode_ == Mode::History) return history_->pause(task);
  return !nonstop_ && live_.pause(task);
}

bool RecordedLiveTarget::paused() const {
  std::lock_guard lock(switch_);
  if (mode_ == Mode::History) return history_->paused();
  return !nonstop_ && live_.paused();
}

bool RecordedLiveTarget::finished() const {
  std::lock_guard lock(switch_);
  return nonstop_ && history_ ? history_->finished() : live_.finished();
}

std::optional<StopInfo> RecordedLiveTarget::lastStop() const {
  std::lock_guard lock(switch_);
  return mode_ == Mode::Live ? live_.lastStop() : history_->lastStop();
}

const Vm& RecordedLiveTarget::vm() const { return mode_ == Mode::Live ? live_.vm() : history_->vm(); }

bool RecordedLiveTarget::atLivePosition() const { return mode_ == Mode::Live || history_->atEnd(); }

bool RecordedLiveTarget::readOnly() const {
  std::lock_guard lock(switch_);
  return !atLivePosition();
}

bool RecordedLiveTarget::write(ExternalWrite write, std::string& error) {
  std::lock_guard lock(switch_);
  if (nonstop_) {
    error = "a nonstop session shows history, which is read-only: the program runs on untouched";
    return false;
  }
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
  std::lock_guard lock(switch_);
  if (nonstop_) {
    error = "stReload is not available in a nonstop session (its history follows one program)";
    return false;
  }
  if (!atLivePosition()) {
    error = "this is history: go forward to where the program is paused (continue, or step forward) to reload it";
    return false;
  }
  mode_ = Mode::Live;
  return live_.reload(std::move(request), error);
}

void RecordedLiveTarget::terminate() {
  std::unique_ptr<ReplayTarget> history;
  {
    std::lock_guard lock(switch_);
    history = std::move(history_);
    mode_ = Mode::Live;
  }
  if (history) history->terminate();
  live_.terminate();
  if (keepTrace_) return;
  for (const std::string& path : live_.tracePaths()) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    std::filesystem::remove(path + ".partial", ignored);
  }
}

bool RecordedLiveTarget::enterHistory(std::string& error) {
  LiveHistory now;
  if (!live_.history(now, error)) return false;
  if (!history_ || now.segment != segment_) {
    if (history_) history_->terminate();  // the trace of a program version since reloaded
    history_ = ReplayTarget::follow(
        now.partialPath, now.program, [this](ResumeKind move, uint32_t task) { return handOver(move, task); }, *this,
        error);
    if (!history_) return false;
    history_->setStops(stops_);
    if (now.segment > 0) {
      const std::vector<std::string> traces = live_.tracePaths();
      history_->setStartNote(
          fmt::format("the start of the history since the last stReload: the cycles before it are "
                      "in {}",
                      traces[now.segment - 1]));
    }
    segment_ = now.segment;
  }
  if (!history_->moveToLive(now.open ? &*now.open : nullptr, live_.lastStop(), error)) return false;
  mode_ = Mode::History;
  return true;
}

bool RecordedLiveTarget::inHistory(std::string& error) {
  if (mode_ == Mode::History) return true;
  if (nonstop_) {
    error = "the recording cannot be followed";
    return false;
  }
  if (!live_.paused()) {
    error = "the program is running: pause it first";
    return false;
  }
  return enterHistory(error);
}

std::optional<HistoryPosition> RecordedLiveTarget::recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                                    std::string& error) {
  std::lock_guard lock(switch_);
  if (!inHistory(error)) return std::nullopt;
  return history_->recordedPosition(cycle, step, error);
}

std::optional<HistoryPosition> RecordedLiveTarget::frameStart(size_t frame, std::string& error) {
  std::lock_guard lock(switch_);
  if (!inHistory(error)) return std::nullopt;
  return history_->frameStart(frame, error);
}

void RecordedLiveTarget::jump(HistoryPosition position, StopReason reason) {
  std::lock_guard lock(switch_);
  std::string error;
  if (!inHistory(error)) return;  // (recordedPosition() or frameStart() entered it)
  history_->jump(position, reason);
}

std::optional<Timeline> RecordedLiveTarget::timeline(std::string& error) const {
  // Asking where history ends while paused live moves into it (at the live position, so nothing
  // the client sees changes).
  auto* self = const_cast<RecordedLiveTarget*>(this);
  std::lock_guard lock(switch_);
  if (!self->inHistory(error)) return std::nullopt;
  std::optional<Timeline> t = history_->timeline(error);
  if (t) {
    const CycleTimes& times = live_.cycleTimes();
    t->cycleTime = Timeline::CycleTime{times.count(), times.quantileNs(0.5), times.quantileNs(0.99), times.maxNs()};
  }
  return t;
}

}  // namespace scanback::dap
