#include "dap/targets/live_target.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>

namespace scanback::dap {

const char* stopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::Entry: return "entry";
    case StopReason::Step: return "step";
    case StopReason::Breakpoint: return "breakpoint";
    case StopReason::Pause: return "pause";
    case StopReason::Exception: return "exception";
    case StopReason::DataBreakpoint: return "data breakpoint";
    case StopReason::Restart: return "restart";
    case StopReason::Goto: return "goto";
  }
  return "step";
}

namespace {

// The watched bytes (a bit as one 0/1 byte).
void readWatch(const Vm& vm, const DataWatch& w, std::vector<uint8_t>& out) {
  out.clear();
  if (w.offset >= vm.imageSize() || w.size > vm.imageSize() - w.offset) return;
  if (w.bit >= 0) {
    out.push_back(static_cast<uint8_t>((vm.image()[w.offset] >> w.bit) & 1));
  } else {
    out.assign(vm.image() + w.offset, vm.image() + w.offset + w.size);
  }
}

bool sameAsWatched(const Vm& vm, const DataWatch& w, const std::vector<uint8_t>& last) {
  if (w.offset >= vm.imageSize() || w.size > vm.imageSize() - w.offset) return true;
  if (w.bit >= 0) return !last.empty() && last[0] == ((vm.image()[w.offset] >> w.bit) & 1);
  return last.size() == w.size && std::memcmp(last.data(), vm.image() + w.offset, w.size) == 0;
}

}  // namespace

LiveTarget::LiveTarget(std::shared_ptr<const Program> program, LiveOptions options, TargetListener& listener)
    : options_(std::move(options)), listener_(listener), runtime_(std::move(program)) {
  auto empty = std::make_shared<StopSet>();
  stops_ = empty;
  cached_ = empty;
}

LiveTarget::~LiveTarget() { terminate(); }

void LiveTarget::setStops(std::shared_ptr<const StopSet> stops) {
  // Under the lock that a stop is published under: once this returns, no stop of the old set
  // can be reported (the generation rule).
  std::lock_guard lock(mutex_);
  stops_ = std::move(stops);
  stopsGeneration_.store(stops_->generation, std::memory_order_release);
  // Paused (the thread parked behind this lock): the new data watches start from the values here,
  // so that the statement about to run is checked too when it writes one.
  if (state_ == State::Paused || state_ == State::Configuring) takeStops();
}

void LiveTarget::start(bool stopOnEntry) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Configuring) return;
  state_ = State::Running;
  entryPending_ = stopOnEntry;
  runtime_.vm().setObserver(this);
  thread_ = std::thread([this] { runLoop(); });
}

void LiveTarget::resume(ResumeKind kind, uint32_t task) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Paused) return;
  std::optional<Step> step;
  if (kind != ResumeKind::Continue) {
    const Vm& vm = runtime_.vm();
    const bool here = vm.inCycle() && vm.currentTask() == task;
    step = Step{kind, task, runtime_.currentCycle().cycle, here ? vm.callDepth() : 0};
  }
  resumeLocked(step);
}

void LiveTarget::resumeStep(ResumeKind kind, uint32_t task, uint64_t cycle, uint32_t depth) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Paused) return;
  resumeLocked(kind == ResumeKind::Continue ? std::nullopt : std::optional(Step{kind, task, cycle, depth}));
}

void LiveTarget::resumeLocked(std::optional<Step> step) {
  pauseRequested_.store(false, std::memory_order_relaxed);
  // Stepping from outside any call of the task (another task's stop): its next statement is where
  // the step ends.
  if (step && step->depth == 0) step->kind = ResumeKind::StepIn;
  step_ = step;
  resumed_ = true;
  state_ = State::Running;
  lastStop_.reset();
  wake_.notify_all();
}

bool LiveTarget::pause(uint32_t task) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Running) return false;
  pauseTask_.store(task, std::memory_order_relaxed);
  pauseRequested_.store(true, std::memory_order_release);
  wake_.notify_all();  // cut a pacing wait short
  return true;
}

bool LiveTarget::paused() const {
  std::lock_guard lock(mutex_);
  return state_ == State::Paused;
}

bool LiveTarget::finished() const {
  std::lock_guard lock(mutex_);
  return state_ == State::Finished;
}

std::optional<StopInfo> LiveTarget::lastStop() const {
  std::lock_guard lock(mutex_);
  return lastStop_;
}

bool LiveTarget::write(ExternalWrite write, std::string& error) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Paused && state_ != State::Configuring) {
    error = "the program is running: values can be written only while it is paused";
    return false;
  }
  runtime_.queueWrite(std::move(write));
  return true;
}

bool LiveTarget::reload(ReloadRequest request, std::string& error) {
  std::unique_lock lock(mutex_);
  if (state_ == State::Finished || terminating_) {
    error = "the program has ended";
    return false;
  }
  if (state_ == State::Configuring) {  // the thread has not started: nothing runs
    lock.unlock();
    std::vector<ReloadRequest> now;
    now.push_back(std::move(request));
    applyReloads(std::move(now));
    return true;
  }
  reloads_.push_back(std::move(request));
  return true;
}

void LiveTarget::applyReloads(std::vector<ReloadRequest> reloads) {
  for (ReloadRequest& r : reloads) {
    // A trace holds one program: the recording of the old version ends here, and a new one
    // begins with the new version.
    const bool wasRecording = recorder_ != nullptr;
    if (wasRecording) finishRecording();
    const size_t dropped = runtime_.replaceProgram(r.program, r.plan);
    if (wasRecording) {
      std::string error;
      if (startRecording(error)) {
        listener_.output("console",
                         fmt::format("the recording goes on in {} from cycle {}: stepping back reaches "
                                     "this reload at most (the cycles before it are in {})\n",
                                     tracePaths_.back(), runtime_.cycle(), tracePaths_[tracePaths_.size() - 2]));
      } else {
        listener_.output("stderr", fmt::format("the recording stops at this reload: {}\n", error));
      }
    }
    options_.stimulus = std::move(r.stimulus);
    std::string text = fmt::format("the new program version runs from cycle {}\n", runtime_.cycle());
    if (dropped)
      text += fmt::format(
          "{} value(s) written from the debugger were not applied: their variable is gone or "
          "changed type\n",
          dropped);
    listener_.output("console", text);
  }
  refreshStops();  // the watched values, read from the new image
}

void LiveTarget::terminate() {
  {
    std::lock_guard lock(mutex_);
    terminating_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  finishRecording();
  std::lock_guard lock(mutex_);
  state_ = State::Finished;
}

// ---------------------------------------------------------------- recording

bool LiveTarget::startRecording(std::string& error) {
  if (options_.recordPath.empty()) {
    error = "no trace path";
    return false;
  }
  // The first trace has the path asked for; each after a reload gets -2, -3, ... before its extension.
  std::string path = options_.recordPath;
  if (!tracePaths_.empty()) {
    const std::filesystem::path p(options_.recordPath);
    path = (p.parent_path() / fmt::format("{}-{}{}", p.stem().string(), tracePaths_.size() + 1, p.extension().string()))
               .string();
  }
  recorder::RecorderOptions options;
  options.path = path;
  options.handOverEveryNs = options_.recordLatencyNs / 2;
  options.flushEveryNs = options_.recordLatencyNs / 2;
  std::unique_ptr<recorder::Recorder> recorder = recorder::Recorder::start(runtime_, options, error);
  if (!recorder) return false;
  std::lock_guard lock(mutex_);
  recorder_ = std::move(recorder);
  tracePaths_.push_back(path);
  return true;
}

void LiveTarget::finishRecording() {
  std::unique_ptr<recorder::Recorder> recorder;
  {
    std::lock_guard lock(mutex_);
    recorder = std::move(recorder_);
  }
  if (!recorder) return;
  std::string error;
  // Ended while paused inside a cycle (the thread has stopped): the trace keeps that cycle up to
  // where it was paused, as the session's history had it.
  std::optional<replay::OpenCycle> open;
  if (!thread_.joinable() && pausedInCycle()) {
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

std::vector<std::string> LiveTarget::tracePaths() const {
  std::lock_guard lock(mutex_);
  return tracePaths_;
}

bool LiveTarget::history(LiveHistory& out, std::string& error) {
  // Under the lock a paused thread waits behind: the recorder's scan-thread side is ours meanwhile.
  std::lock_guard lock(mutex_);
  if (state_ != State::Paused) {
    error = "the program is running";
    return false;
  }
  if (!recorder_) {
    error = "this session does not record (launch with 'record' other than false to keep history)";
    return false;
  }
  recorder::SyncResult synced = recorder_->sync();
  if (!synced.ok) {
    error = fmt::format("the recording cannot be read back: {}", synced.error);
    return false;
  }
  out = LiveHistory{};
  out.partialPath = tracePaths_.back() + ".partial";
  out.program = runtime_.vm().programPtr();
  out.segment = tracePaths_.size() - 1;
  if (pausedInCycle()) {
    if (synced.image.empty()) {
      error = fmt::format(
          "the cycles right before cycle {} were dropped (the recorder could not keep up): the cycle "
          "under way cannot be replayed",
          runtime_.currentCycle().cycle);
      return false;
    }
    out.open = openCycle(*recorder_, std::move(synced.image));
  }
  return true;
}

bool LiveTarget::pausedInCycle() const {
  const bool atFault = lastStop_ && lastStop_->reason == StopReason::Exception;
  return runtime_.vm().inCycle() && !atFault;
}

replay::OpenCycle LiveTarget::openCycle(const recorder::Recorder& recorder, std::vector<uint8_t> imageBefore) const {
  replay::OpenCycle open;
  open.cycle = runtime_.currentCycle().cycle;
  open.task = runtime_.currentCycle().task;
  open.startNs = runtime_.currentCycle().startNs;
  open.keyframe = std::move(imageBefore);
  recorder::CycleInputs inputs = recorder.currentInputs();
  open.inputChanges = std::move(inputs.inputChanges);
  open.writes = std::move(inputs.writes);
  open.untilStep = runtime_.vm().steps() - 1;  // the paused boundary (the statement there has not run)
  return open;
}

// ---------------------------------------------------------------- the execution thread

void LiveTarget::refreshStops() {
  std::lock_guard lock(mutex_);
  takeStops();
}

void LiveTarget::takeStops() {
  cached_ = stops_;
  cachedGeneration_ = cached_->generation;
  watchValues_.assign(cached_->dataWatches.size(), {});
  for (size_t i = 0; i < cached_->dataWatches.size(); ++i)
    readWatch(runtime_.vm(), cached_->dataWatches[i], watchValues_[i]);
}

bool LiveTarget::onStatement(uint32_t statement, uint64_t step) {
  const Vm& vm = runtime_.vm();
  if (stopsGeneration_.load(std::memory_order_acquire) != cachedGeneration_) refreshStops();
  const StopSet& stops = *cached_;
  // Resolved for another program version (the rest of a cycle begun before a reload): off.
  const bool resolvedHere = !stops.program || stops.program.get() == &vm.program();
  const uint32_t task = vm.currentTask();
  std::optional<StopInfo> stop;
  auto want = [&](StopReason reason) {
    if (!stop) stop = StopInfo{reason, task, {}, {}};
  };

  // Breakpoints first: their hit counts and logpoints move whether or not something else stops here.
  if (resolvedHere && statement < stops.statementHasBreakpoint.size() && stops.statementHasBreakpoint[statement]) {
    std::vector<int64_t> ids;
    for (const auto& bp : stops.breakpoints) {
      if (bp->statement != statement) continue;
      if (bp->condition) {
        std::string error;
        const std::optional<bool> holds = bp->condition(vm, error);
        if (!holds) {
          if (!bp->conditionErrorLogged) {
            bp->conditionErrorLogged = true;
            listener_.output("console", fmt::format("breakpoint {}: the condition cannot be evaluated ({}); it does "
                                                    "not stop, and this is reported once\n",
                                                    bp->id, error));
          }
          continue;
        }
        if (!*holds) continue;
      }
      const uint64_t hit = ++bp->hits;
      if (bp->hitCondition && !bp->hitCondition(hit)) continue;
      if (bp->logMessage) {
        listener_.output("console", bp->logMessage(vm) + "\n");
        continue;
      }
      ids.push_back(bp->id);
    }
    if (!ids.empty()) {
      stop = StopInfo{StopReason::Breakpoint, task, std::move(ids), {}};
    }
  }
  // Data breakpoints: a change since the last boundary was made by the statement before this one
  // (at step 0 by the scan inputs: taken silently).
  if (resolvedHere && !stops.dataWatches.empty()) {
    std::vector<int64_t> ids;
    for (size_t i = 0; i < stops.dataWatches.size(); ++i) {
      const DataWatch& w = stops.dataWatches[i];
      if (sameAsWatched(vm, w, watchValues_[i])) continue;
      readWatch(vm, w, watchValues_[i]);
      if (step > 0) ids.push_back(w.id);
    }
    if (!ids.empty() && !stop) stop = StopInfo{StopReason::DataBreakpoint, task, std::move(ids), {}};
  }
  if (entryPending_) {
    entryPending_ = false;
    stop = StopInfo{StopReason::Entry, task, {}, {}};
  }
  if (pauseRequested_.load(std::memory_order_acquire) && pauseTask_.load(std::memory_order_relaxed) == task)
    want(StopReason::Pause);
  if (step_ && step_->task == task) {
    const uint64_t cycle = runtime_.currentCycle().cycle;
    const uint32_t depth = vm.callDepth();
    bool done = false;
    switch (step_->kind) {
      case ResumeKind::StepIn: done = true; break;
      case ResumeKind::Next: done = cycle != step_->cycle || depth <= step_->depth; break;
      case ResumeKind::StepOut: done = cycle != step_->cycle || depth < step_->depth; break;
      default: break;  // Continue; reverse moves never reach the live target (it has no history)
    }
    if (done) want(StopReason::Step);
  }
  if (!stop) return false;

  std::unique_lock lock(mutex_);
  if (terminating_) return true;  // run() returns Paused; the loop then ends
  if ((stop->reason == StopReason::Breakpoint || stop->reason == StopReason::DataBreakpoint) &&
      stops_->generation != cachedGeneration_) {
    // The breakpoints changed while this one was being checked: it belongs to an old set.
    if (!pauseRequested_.load(std::memory_order_relaxed) && !(step_ && step_->task == task)) return false;
    stop->reason = pauseRequested_.load(std::memory_order_relaxed) ? StopReason::Pause : StopReason::Step;
    stop->breakpointIds.clear();
  }
  stop->endsStep = step_.has_value();
  lastStop_ = *stop;
  state_ = State::Paused;
  pauseRequested_.store(false, std::memory_order_relaxed);
  step_.reset();
  resumed_ = false;
  listener_.stopped(*stop);  // under the lock: setStops() waits for it (the generation rule)
  return true;
}

bool LiveTarget::stopAndWait(const StopInfo& stop, std::unique_lock<std::mutex>& lock) {
  if (state_ != State::Paused) {
    lastStop_ = stop;
    state_ = State::Paused;
    resumed_ = false;
    listener_.stopped(stop);
  }
  wake_.wait(lock, [&] { return resumed_ || terminating_; });
  reanchor_ = true;  // pacing restarts from the moment of resuming
  return !terminating_;
}

void LiveTarget::pace(int64_t startNs) {
  if (!options_.realtime) return;
  const auto now = std::chrono::steady_clock::now();
  if (reanchor_) {
    anchor_ = now - std::chrono::nanoseconds(startNs);
    reanchor_ = false;
    return;
  }
  const auto due = anchor_ + std::chrono::nanoseconds(startNs);
  if (due <= now) return;
  std::unique_lock lock(mutex_);
  wake_.wait_until(lock, due, [&] { return terminating_ || pauseRequested_.load(std::memory_order_relaxed); });
  if (pauseRequested_.load(std::memory_order_relaxed)) reanchor_ = true;
}

bool LiveTarget::terminatingNow() const {
  std::lock_guard lock(mutex_);
  return terminating_;
}

void LiveTarget::finish(int exitCode) {
  {
    std::lock_guard lock(mutex_);
    if (terminating_) return;
  }
  finishRecording();  // the trace is complete before anyone hears that the program ended
  {
    std::lock_guard lock(mutex_);
    if (terminating_) return;
    state_ = State::Finished;
  }
  listener_.exited(exitCode);
}

void LiveTarget::runLoop() {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (terminating_) return;
    }
    if (options_.cycles && runtime_.cycle() >= *options_.cycles) {
      listener_.output("console", fmt::format("the program ran its {} cycles\n", *options_.cycles));
      return finish(0);
    }
    std::vector<ReloadRequest> reloads;
    {
      std::lock_guard lock(mutex_);
      reloads.swap(reloads_);
    }
    if (!reloads.empty()) applyReloads(std::move(reloads));
    const CycleStart next = runtime_.nextCycle();
    pace(next.startNs);
    // Faster than real time, the task may wait for the recorder between cycles and lose none; in
    // real time the recorder drops cycles instead (the task never waits).
    if (!options_.realtime && recorder_)
      while (recorder_->backlogged() && !terminatingNow()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (options_.stimulus) options_.stimulus->apply(next.cycle, runtime_);
    executing_.store(true, std::memory_order_relaxed);
    const auto began = std::chrono::steady_clock::now();
    runtime_.startCycle();
    RunStatus status = runtime_.run();
    executing_.store(false, std::memory_order_relaxed);
    if (status != RunStatus::Paused)
      cycleTimes_.record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began).count()));
    while (status == RunStatus::Paused) {
      // The stop was published by onStatement. A resume may have come in already (resumed_ is
      // then set): wait only if it has not.
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return resumed_ || terminating_; });
      if (terminating_) return;
      reanchor_ = true;  // pacing restarts from the moment of resuming
      lock.unlock();
      executing_.store(true, std::memory_order_relaxed);
      status = runtime_.run();
      executing_.store(false, std::memory_order_relaxed);
    }
    if (status == RunStatus::Faulted) {
      const std::string message = runtime_.faultMessage();
      bool stopOnFaults;
      {
        std::lock_guard lock(mutex_);
        stopOnFaults = stops_->stopOnFaults;
      }
      if (stopOnFaults) {
        std::unique_lock lock(mutex_);
        const FaultInfo& fault = runtime_.vm().fault();
        StopInfo stop{StopReason::Exception, runtime_.vm().currentTask(), {}, message};
        stop.exceptionId = std::string(faultText(fault.code));
        stop.exceptionDetails = fault.detail;
        if (!stopAndWait(stop, lock)) return;
      }
      listener_.output("stderr", message + "\n");
      return finish(3);
    }
  }
}

}  // namespace scanback::dap
