#include "dap/targets/live_engine.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

namespace scanback::dap {

LiveEngine::LiveEngine(std::shared_ptr<const Program> program, LiveOptions options, RunControl& control,
                       TargetListener& listener)
    : options_(std::move(options)),
      control_(control),
      listener_(listener),
      runtime_(std::move(program)),
      loop_(runtime_, recorder::RunLoopOptions{options_.realtime, options_.cycles, std::nullopt}),
      checker_(listener) {
  if (options_.stimulus) loop_.setStimulus(&*options_.stimulus);
  runtime_.vm().setObserver(this);
}

LiveEngine::~LiveEngine() { runtime_.vm().setObserver(nullptr); }

// ---------------------------------------------------------------- the target's thread

LiveEngine::Outcome LiveEngine::run(const Move& move, std::optional<StepOrigin> from, int& exitCode) {
  if (move.kind == Move::Kind::Start) {
    entryPending_ = move.stopOnEntry;
  } else {
    step_.reset();
    if (move.resume != ResumeKind::Continue) {
      const Vm& vm = runtime_.vm();
      Step step{move.resume, move.task, runtime_.currentCycle().cycle, 0, 0};
      if (from) {
        step.cycle = from->cycle;
        step.depth = from->depth;
        step.floor = from->floor;
      } else if (vm.inCycle() && vm.currentTask() == move.task) {
        step.depth = vm.callDepth();
        step.floor = step.depth;
      }
      // Stepping from outside any call of the task (another task's stop): its next statement is
      // where the step ends.
      if (step.depth == 0) step.kind = ResumeKind::StepIn;
      step_ = step;
    }
    loop_.restartPacing();  // from the moment of resuming
  }
  if (faultPending_) {
    // Resumed from the stop at a fault: the program ends, as it would without a debugger.
    faultPending_ = false;
    listener_.output("stderr", runtime_.faultMessage() + "\n");
    return ended(3, exitCode);
  }
  for (;;) {
    if (!runtime_.inCycle()) {
      std::vector<ReloadRequest> reloads;
      {
        std::lock_guard lock(mutex_);
        reloads.swap(reloads_);
      }
      // (None at the end: a reload would start a trace for no cycle.)
      if (!reloads.empty() && !loop_.cycleLimitReached()) applyReloads(std::move(reloads));
      CycleStart next;
      switch (loop_.prepare(waits_, next)) {
        case recorder::RunLoop::Next::Cycle: break;
        case recorder::RunLoop::Next::CycleLimit:
          listener_.output("console", fmt::format("the program ran its {} cycles\n", *options_.cycles));
          return ended(0, exitCode);
        case recorder::RunLoop::Next::ClockEnded:
          listener_.output("console", "the virtual clock has reached its end: no cycle is released after it\n");
          return ended(0, exitCode);
        case recorder::RunLoop::Next::TimeLimit:  // (the live task has no time limit)
        case recorder::RunLoop::Next::Ending: return Outcome::Terminating;
      }
      pausedThisCycle_ = false;
      executing_.store(true, std::memory_order_relaxed);
      cycleBegan_ = std::chrono::steady_clock::now();
      runtime_.startCycle();
    } else {
      executing_.store(true, std::memory_order_relaxed);
    }
    const RunStatus status = runtime_.run();
    executing_.store(false, std::memory_order_relaxed);
    if (status == RunStatus::Paused) {
      // The stop was published by onStatement (or the target is ending).
      pausedThisCycle_ = true;
      return control_.terminating() ? Outcome::Terminating : Outcome::Stopped;
    }
    if (!pausedThisCycle_)
      cycleTimes_.record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - cycleBegan_)
              .count()));
    if (status == RunStatus::CycleDone && checker_.watchesData()) {
      // A change the cycle's last statement made is seen here, at the end of the cycle, where the
      // replayer reports it too: the next boundary is the next cycle's, where a change is the
      // scan inputs'. The task stays between cycles (the next move starts the next one).
      const Vm& vm = runtime_.vm();
      if (control_.stopsGeneration() != checker_.generation()) {
        refreshStops(runtime_.cycle(), 0);
      } else if (checker_.resolvedFor(vm.program())) {
        std::optional<StopInfo::DataChange> change;
        if (std::vector<int64_t> ids = checker_.atCycleEnd(vm, lastStatement_, change); !ids.empty()) {
          StopInfo stop{StopReason::DataBreakpoint, vm.currentTask(), std::move(ids), checker_.describe(vm, *change)};
          stop.change = std::move(change);
          switch (publishStop(std::move(stop))) {
            case Published::Stopped: return Outcome::Stopped;
            case Published::GoOn: break;
            case Published::Terminating: return Outcome::Terminating;
          }
        }
      }
    }
    if (status == RunStatus::Faulted) {
      faulted_ = true;  // (before the stop is published: the session may ask for the history at once)
      if (control_.stops()->stopOnFaults) {
        const FaultInfo& fault = runtime_.vm().fault();
        StopInfo stop{StopReason::Exception, runtime_.vm().currentTask(), {}, runtime_.faultMessage()};
        stop.exceptionId = std::string(faultText(fault.code));
        stop.exceptionDetails = fault.detail;
        step_.reset();
        if (control_.publish(stop, control_.stopsGeneration(), {}) != RunControl::Published::Stopped)
          return Outcome::Terminating;
        faultPending_ = true;
        return Outcome::Stopped;
      }
      listener_.output("stderr", runtime_.faultMessage() + "\n");
      return ended(3, exitCode);
    }
  }
}

LiveEngine::Outcome LiveEngine::ended(int code, int& exitCode) {
  if (control_.terminating()) return Outcome::Terminating;
  finishRecording();  // the trace is complete before anyone hears that the program ended
  exitCode = code;
  return Outcome::Ended;
}

void LiveEngine::refreshStops(uint64_t cycle, uint64_t step) {
  checker_.take(control_.stops());
  readWatchedValues();
  checker_.countHitsFrom(cycle, step);
}

void LiveEngine::takeStops(const std::shared_ptr<const StopSet>& stops) {
  checker_.take(stops);
  readWatchedValues();
  const auto [cycle, step] = nextPosition();
  checker_.countHitsFrom(cycle, step);
}

void LiveEngine::readWatchedValues() {
  const Vm& vm = runtime_.vm();
  const std::vector<ExternalWrite>& pending = runtime_.pendingWrites();
  if (pending.empty()) return checker_.rebase(vm.image(), vm.imageSize());
  std::vector<uint8_t> image(vm.image(), vm.image() + vm.imageSize());
  for (const ExternalWrite& w : pending) applyWrite(image.data(), vm.imageSize(), w);
  checker_.rebase(image.data(), vm.imageSize());
}

std::pair<uint64_t, uint64_t> LiveEngine::nextPosition() const {
  const Vm& vm = runtime_.vm();
  // Paused at boundary k of a cycle (steps() is k + 1; at a fault, k is the faulting statement),
  // the statement there has been checked; between cycles, the next cycle's start is next.
  if (vm.inCycle() || faulted_) return {runtime_.currentCycle().cycle, vm.steps()};
  return {runtime_.cycle(), 0};
}

LiveEngine::Published LiveEngine::publishStop(StopInfo stop) {
  {
    // The task may be held here for hours (a debugger's stop): the cycles that ended before it go
    // to the file now, not when the next cycle starts, so that a crash meanwhile loses none of them.
    std::lock_guard lock(mutex_);
    if (recorder_) {
      recorder_->idle();
      recorder_->flushSoon();
    }
  }
  const bool stepping = step_ && step_->task == stop.task;
  stop.endsStep = step_.has_value();
  // A breakpoint of a set replaced meanwhile goes on, unless a pause or a step of this task is
  // under way (it then stops as that).
  switch (control_.publish(std::move(stop), checker_.generation(), {.mayGoOn = !stepping, .pauseWins = false})) {
    case RunControl::Published::Stopped: step_.reset(); return Published::Stopped;
    case RunControl::Published::GoOn: return Published::GoOn;
    case RunControl::Published::Terminating: return Published::Terminating;
  }
  return Published::Terminating;
}

void LiveEngine::onReturn(uint32_t) {
  // A frame of the task a step over began in returns: the step may end in the caller.
  const Vm& vm = runtime_.vm();
  if (step_ && step_->kind == ResumeKind::Next && step_->task == vm.currentTask() && vm.callDepth() > 1 &&
      runtime_.currentCycle().cycle == step_->cycle)
    step_->floor = std::max<uint32_t>(1, std::min(step_->floor, vm.callDepth() - 1));  // (the depth it returns to)
}

bool LiveEngine::onStatement(uint32_t statement, uint64_t step) {
  const Vm& vm = runtime_.vm();
  const uint32_t previous = std::exchange(lastStatement_, statement);
  if (control_.stopsGeneration() != checker_.generation()) refreshStops(runtime_.currentCycle().cycle, step);
  const uint32_t task = vm.currentTask();
  std::optional<StopInfo> stop;
  // Resolved for another program version (the rest of a cycle begun before a reload): off.
  if (checker_.watches(statement) && checker_.resolvedFor(vm.program()))
    stop = checker_.atStatement(vm, statement, step, previous);
  if (entryPending_) {
    entryPending_ = false;
    stop = StopInfo{StopReason::Entry, task, {}, {}};
  }
  if (!stop && control_.pauseRequestedFor(task)) stop = StopInfo{StopReason::Pause, task, {}, {}};
  const bool stepping = step_ && step_->task == task;
  if (!stop && stepping) {
    const uint64_t cycle = runtime_.currentCycle().cycle;
    const uint32_t depth = vm.callDepth();
    bool done = false;
    switch (step_->kind) {
      case ResumeKind::StepIn: done = true; break;
      case ResumeKind::Next: done = cycle != step_->cycle || depth <= step_->floor; break;
      case ResumeKind::StepOut: done = cycle != step_->cycle || depth < step_->depth; break;
      default: break;  // Continue; reverse moves never reach the live task
    }
    if (done) stop = StopInfo{StopReason::Step, task, {}, {}};
  }
  if (!stop) return false;
  switch (publishStop(std::move(*stop))) {
    case Published::Stopped: return true;
    case Published::GoOn: return false;
    case Published::Terminating: return true;  // run() returns Paused; the move then ends
  }
  return true;
}

// ---------------------------------------------------------------- the session's thread

bool LiveEngine::write(ExternalWrite write, std::string& error) {
  const bool parked = control_.whileParked([&] {
    Vm& vm = runtime_.vm();
    if (!vm.inCycle() || vm.steps() == 0) {  // between cycles: with the next cycle's scan inputs
      runtime_.queueWrite(std::move(write));
    } else {
      // Paused at a statement boundary inside a cycle: the write takes effect here, at once, and
      // is recorded at this position so that replay applies it at the same boundary
      // (docs/architecture.md: determinism).
      applyWrite(vm.image(), vm.imageSize(), write);
      std::lock_guard lock(mutex_);
      if (recorder_) recorder_->noteWrite(write, vm.steps() - 1);
    }
    // A data breakpoint compares with the values here, or those the next cycle start makes: the
    // debugger's own write is no change for it to stop at.
    readWatchedValues();
  });
  if (parked) return true;
  error = "the program is running: values can be written only while it is paused";
  return false;
}

namespace {

[[nodiscard]] bool forceable(const RunControl& control, std::string& error) {
  if (control.state() != RunControl::State::Finished && !control.terminating()) return true;
  error = "the program has ended: forces act on a running program";
  return false;
}

}  // namespace

std::optional<Force> LiveEngine::force(const std::string& target, const std::string& value, std::string& error) {
  if (!forceable(control_, error)) return std::nullopt;
  return runtime_.force(target, value, error);
}

std::optional<std::vector<std::string>> LiveEngine::release(const std::string& target, std::string& error) {
  if (!forceable(control_, error)) return std::nullopt;
  return runtime_.release(target, error);
}

std::optional<std::vector<Force>> LiveEngine::forced(std::string&) { return runtime_.forces(); }

bool LiveEngine::reload(ReloadRequest request, std::string& error) {
  const RunControl::State state = control_.state();
  if (state == RunControl::State::Finished || control_.terminating()) {
    error = "the program has ended";
    return false;
  }
  if (state == RunControl::State::Configuring) {  // the thread has not started: nothing runs
    std::vector<ReloadRequest> now;
    now.push_back(std::move(request));
    applyReloads(std::move(now));
    return true;
  }
  std::lock_guard lock(mutex_);
  reloads_.push_back(std::move(request));
  return true;
}

void LiveEngine::applyReloads(std::vector<ReloadRequest> reloads) {
  for (ReloadRequest& r : reloads) {
    // A trace holds one program: the recording of the old version ends here, and a new one
    // begins with the new version.
    const bool wasRecording = recorder_ != nullptr;
    if (wasRecording) finishRecording();
    const size_t dropped = runtime_.replaceProgram(r.program, r.plan);
    if (wasRecording) {
      std::string error;
      if (startRecording(error)) {
        const std::vector<std::string> traces = tracePaths();
        listener_.output("console", fmt::format("the recording goes on in {} from cycle {}: stepping back reaches "
                                                "this reload at most (the cycles before it are in {})\n",
                                                traces.back(), runtime_.cycle(), traces[traces.size() - 2]));
      } else {
        listener_.output("stderr", fmt::format("the recording stops at this reload: {}\n", error));
      }
    }
    options_.stimulus = std::move(r.stimulus);
    loop_.setStimulus(options_.stimulus ? &*options_.stimulus : nullptr);
    std::string text = fmt::format("the new program version runs from cycle {}\n", runtime_.cycle());
    if (dropped)
      text += fmt::format(
          "{} value(s) written from the debugger were not applied: their variable is gone or "
          "changed type\n",
          dropped);
    listener_.output("console", text);
  }
  refreshStops(runtime_.cycle(), 0);  // the watched values, read from the new image
}

// ---------------------------------------------------------------- recording

bool LiveEngine::startRecording(std::string& error) {
  if (options_.recordPath.empty()) {
    error = "no trace path";
    return false;
  }
  // The first trace has the path asked for; each after a reload gets -2, -3, ... before its extension.
  const size_t traces = tracePaths().size();
  std::string path = options_.recordPath;
  if (traces > 0) {
    const std::filesystem::path p(options_.recordPath);
    path = (p.parent_path() / fmt::format("{}-{}{}", p.stem().string(), traces + 1, p.extension().string())).string();
  }
  recorder::RecorderOptions options;
  options.path = path;
  // A replayer following the trace (nonstop) sees a cycle within the latency; otherwise the default
  // flush window bounds what a crash loses.
  if (options_.recordLatencyNs > 0) options.flushEveryNs = options_.recordLatencyNs;
  // A recording that fails mid-run (a full disk) is said at once, in the Debug Console, while the
  // task goes on; so is its recovery. (Called on the recorder's writer thread: output() sends under
  // the session's lock.)
  auto said = [this, path](const recorder::RecordingEvent& e) {
    if (e.kind == recorder::RecordingEvent::Kind::Failed)
      listener_.output("stderr", fmt::format("the recording to {} fails from cycle {}: {}; the task goes on, and "
                                             "the cycles from there are not in the trace until writing works again\n",
                                             path, e.cycle, e.message));
    else
      listener_.output("console", fmt::format("the recording to {} works again from cycle {} ({} cycles lost: a gap "
                                              "in the trace)\n",
                                              path, e.cycle, e.lostCycles));
  };
  std::unique_ptr<recorder::Recorder> recorder = recorder::Recorder::start(runtime_, options, error, said);
  if (!recorder) return false;
  loop_.setRecorder(recorder.get());
  std::lock_guard lock(mutex_);
  recorder_ = std::move(recorder);
  tracePaths_.push_back(path);
  return true;
}

void LiveEngine::finishRecording() {
  std::unique_ptr<recorder::Recorder> recorder;
  {
    std::lock_guard lock(mutex_);
    recorder = std::move(recorder_);
  }
  loop_.setRecorder(nullptr);
  if (!recorder) return;
  std::string error;
  // Ended while paused inside a cycle (the session ends): the trace keeps that cycle up to where
  // it was paused, as the session's history had it.
  std::optional<replay::OpenCycle> open;
  if (control_.terminating() && pausedInCycle()) {
    recorder::SyncResult synced = recorder->sync();
    if (synced.ok && !synced.image.empty()) open = openCycle(*recorder, std::move(synced.image));
  }
  if (!recorder->finish(error, open ? &*open : nullptr))
    listener_.output("stderr", fmt::format("the recording failed: {}\n", error));
  const recorder::RecorderStats stats = recorder->stats();
  if (stats.cyclesDropped)
    listener_.output("console", fmt::format("the recording dropped {} cycle(s) in {} gap(s): the recorder could not "
                                            "keep up with the task\n",
                                            stats.cyclesDropped, stats.gaps));
}

void LiveEngine::end() {
  finishRecording();
  if (options_.keepTraces) return;
  for (const std::string& path : tracePaths()) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    std::filesystem::remove(path + ".partial", ignored);
  }
}

std::vector<std::string> LiveEngine::tracePaths() const {
  std::lock_guard lock(mutex_);
  return tracePaths_;
}

std::optional<Timeline::Recording> LiveEngine::recording() const {
  std::lock_guard lock(mutex_);
  if (!recorder_) return std::nullopt;
  return Timeline::Recording{recorder_->health(), tracePaths_.back()};
}

std::optional<Timeline::CycleTime> LiveEngine::cycleTime() const {
  return Timeline::CycleTime{cycleTimes_.count(), cycleTimes_.quantileNs(0.5), cycleTimes_.quantileNs(0.99),
                             cycleTimes_.maxNs()};
}

bool LiveEngine::history(LiveHistory& out, std::string& error) {
  // Under the lock a paused thread waits behind: the recorder's scan-thread side is ours meanwhile.
  const bool paused = control_.whilePaused([&] {
    std::lock_guard lock(mutex_);
    if (!recorder_) {
      error = "the recording has stopped (see the output above)";
      return;
    }
    recorder::SyncResult synced = recorder_->sync();
    if (!synced.ok) {
      error = fmt::format("the recording cannot be read back: {}", synced.error);
      return;
    }
    out = LiveHistory{};
    out.partialPath = tracePaths_.back() + ".partial";
    out.program = runtime_.vm().programPtr();
    out.segment = tracePaths_.size() - 1;
    out.atCycleEnd = !runtime_.vm().inCycle() && !faulted_ && runtime_.vm().steps() > 0;
    if (pausedInCycle()) {
      if (synced.image.empty()) {
        error = fmt::format(
            "the cycles right before cycle {} were dropped (the recorder could not keep up): the cycle "
            "under way cannot be replayed",
            runtime_.currentCycle().cycle);
        return;
      }
      out.open = openCycle(*recorder_, std::move(synced.image));
    }
  });
  if (!paused) {
    error = "the program is running";
    return false;
  }
  return error.empty();
}

bool LiveEngine::pausedInCycle() const {
  // (Read by the session's thread under the control's lock, or once the thread has ended.)
  return runtime_.vm().inCycle() && !faulted_;
}

replay::OpenCycle LiveEngine::openCycle(const recorder::Recorder& recorder, std::vector<uint8_t> imageBefore) const {
  replay::OpenCycle open;
  open.cycle = runtime_.currentCycle().cycle;
  open.task = runtime_.currentCycle().task;
  open.startNs = runtime_.currentCycle().startNs;
  open.keyframe = std::move(imageBefore);
  recorder::CycleInputs inputs = recorder.currentInputs();
  open.inputChanges = std::move(inputs.inputChanges);
  open.writes = std::move(inputs.writes);
  // Every force held in the cycle (its start applied them after the writes).
  for (const Force& f : runtime_.forceTable().forces())
    open.forces.push_back(trace::ForceData{0, f.offset, f.bit, f.bytes, false, f.target, f.sinceCycle, true});
  open.untilStep = runtime_.vm().steps() - 1;  // the paused boundary (the statement there has not run)
  return open;
}

}  // namespace scanback::dap
