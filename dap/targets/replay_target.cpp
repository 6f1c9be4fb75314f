#include "dap/targets/replay_target.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

namespace scanback::dap {

namespace {

// A session breakpoint as the replayer checks it. A condition that cannot be evaluated does not
// hold, and is reported once.
replay::Breakpoint toReplay(const std::shared_ptr<const ResolvedBreakpoint>& bp, TargetListener& listener) {
  replay::Breakpoint out;
  out.statement = bp->statement;
  out.hitCondition = bp->hitCondition;
  if (bp->condition) {
    out.condition = [bp, &listener](const Vm& vm) {
      std::string error;
      const std::optional<bool> holds = bp->condition(vm, error);
      if (holds) return *holds;
      if (!bp->conditionErrorLogged) {
        bp->conditionErrorLogged = true;
        listener.output("console", fmt::format("breakpoint {}: the condition cannot be evaluated ({}); it does not "
                                               "stop, and this is reported once\n",
                                               bp->id, error));
      }
      return false;
    };
  }
  return out;
}

}  // namespace

std::unique_ptr<ReplayTarget> ReplayTarget::open(const std::string& path, TargetListener& listener,
                                                 std::string& error) {
  std::unique_ptr<replay::Replayer> replayer = replay::Replayer::open(path, replay::ReplayOptions{}, error);
  if (!replayer) return nullptr;
  if (replayer->history().empty()) {
    error = fmt::format("{}: the trace has no recorded cycle", path);
    return nullptr;
  }
  return std::unique_ptr<ReplayTarget>(new ReplayTarget(std::move(replayer), listener));
}

std::unique_ptr<ReplayTarget> ReplayTarget::follow(const std::string& partialPath,
                                                   std::shared_ptr<const Program> program, HandOver handOver,
                                                   TargetListener& listener, std::string& error) {
  replay::ReplayOptions options;
  options.program = std::move(program);
  std::unique_ptr<replay::Replayer> replayer = replay::Replayer::open(partialPath, options, error);
  if (!replayer) return nullptr;
  std::unique_ptr<ReplayTarget> target(new ReplayTarget(std::move(replayer), listener));
  target->handOver_ = std::move(handOver);
  return target;
}

bool ReplayTarget::moveToLive(const replay::OpenCycle* open, const std::optional<StopInfo>& stop, std::string& error) {
  std::unique_lock lock(mutex_);
  // (A move that has just handed over to the live task may still be on its way to idle.)
  wake_.wait(lock, [&] { return state_ != State::Running || terminating_; });
  if (terminating_ || state_ == State::Finished) {
    error = "the session is ending";
    return false;
  }
  replayer_->refresh();
  replayer_->setOpenCycle(open);
  const std::optional<replay::Position> end = replayer_->end();
  if (!end) {
    error = "the recording holds no cycle yet";
    return false;
  }
  if (!replayer_->seek(*end, error)) return false;
  state_ = State::Paused;
  lastStop_ = stop;
  if (!worker_.joinable()) worker_ = std::thread([this] { workerLoop(); });
  return true;
}

bool ReplayTarget::atEnd() const {
  std::lock_guard lock(mutex_);
  return state_ == State::Paused && replayer_->end() == replayer_->position();
}

bool ReplayTarget::pauseWanted() const {
  std::lock_guard lock(mutex_);
  return pauseRequested_;
}

ReplayTarget::ReplayTarget(std::unique_ptr<replay::Replayer> replayer, TargetListener& listener)
    : replayer_(std::move(replayer)), listener_(listener), stops_(std::make_shared<StopSet>()) {
  replayer_->setCancelFlag(&cancel_);
}

ReplayTarget::~ReplayTarget() { terminate(); }

bool ReplayTarget::setStartAt(const StartAt& at, std::string& error) {
  switch (at.kind) {
    case StartAt::Kind::End: startAt_.reset(); return true;
    case StartAt::Kind::Start: startAt_ = replayer_->start(); return true;
    case StartAt::Kind::Cycle: {
      const std::optional<HistoryPosition> p = recordedPosition(at.cycle, std::nullopt, error);
      if (!p) return false;
      startAt_ = replay::Position{p->cycle, p->step};
      return true;
    }
  }
  return true;
}

std::optional<HistoryPosition> ReplayTarget::recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
                                                              std::string& error) {
  replay::History& history = replayer_->history();
  std::string why;
  if (!history.chunkOf(cycle, why)) {
    error = fmt::format("cycle {} is not in the recording ({}; recorded: cycles {} to {})", cycle, why,
                        history.firstCycle(), history.endCycle() - 1);
    return std::nullopt;
  }
  const replay::CycleSteps* steps = replayer_->steps(cycle, error);
  if (!steps) return std::nullopt;
  if (step && *step > steps->count()) {
    error = fmt::format("cycle {} has {} statement boundaries: step {} is past its end", cycle, steps->count(), *step);
    return std::nullopt;
  }
  // A cycle that faulted, or has not ended (the live task is paused in it), has no end position.
  if (step && *step == steps->count() && (steps->faulted || steps->open)) {
    error = fmt::format("cycle {} {} after {} statement boundaries: step {} is not in it", cycle,
                        steps->faulted ? "faulted" : "has gone no further", steps->count(), *step);
    return std::nullopt;
  }
  return HistoryPosition{cycle, step.value_or(0)};
}

void ReplayTarget::setStops(std::shared_ptr<const StopSet> stops) {
  std::lock_guard lock(mutex_);  // a stop is published under it: none of the old set follows
  stops_ = std::move(stops);
}

void ReplayTarget::start(bool stopOnEntry) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Configuring) return;
  // A replay session always stops first (at the end, the start or the cycle asked for); beside a
  // task that never stops, only when asked to.
  stopOnEntry_ = stopOnEntry;
  state_ = State::Running;
  job_ = Job{Job::Kind::Start, ResumeKind::Continue, 0, {}, StopReason::Entry};
  for (const std::string& warning : replayer_->history().warnings()) listener_.output("console", warning + "\n");
  worker_ = std::thread([this] { workerLoop(); });
}

void ReplayTarget::resume(ResumeKind kind, uint32_t task) {
  post(Job{Job::Kind::Move, kind, task, {}, StopReason::Step});
}

void ReplayTarget::jump(HistoryPosition position, StopReason reason) {
  post(Job{Job::Kind::Jump, ResumeKind::Continue, 0, replay::Position{position.cycle, position.step}, reason});
}

void ReplayTarget::post(Job job) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Paused) return;
  job_ = std::move(job);
  cancel_.store(false, std::memory_order_relaxed);
  state_ = State::Running;
  pauseRequested_ = false;
  lastStop_.reset();
  wake_.notify_all();
}

bool ReplayTarget::pause(uint32_t /*task*/) {
  // A search under way is cut short (the position stays where the move began); a move that is
  // already placing the position ends where it ends. Either way the stop reports a pause.
  std::lock_guard lock(mutex_);
  if (state_ != State::Running) return false;
  pauseRequested_ = true;
  cancel_.store(true, std::memory_order_relaxed);
  wake_.notify_all();  // (a wait for the trace to grow)
  return true;
}

bool ReplayTarget::paused() const {
  std::lock_guard lock(mutex_);
  return state_ == State::Paused;
}

bool ReplayTarget::finished() const {
  std::lock_guard lock(mutex_);
  return state_ == State::Finished;
}

std::optional<StopInfo> ReplayTarget::lastStop() const {
  std::lock_guard lock(mutex_);
  return lastStop_;
}

bool ReplayTarget::write(ExternalWrite, std::string& error) {
  error = kHistoryIsReadOnly;
  return false;
}

bool ReplayTarget::reload(ReloadRequest, std::string& error) {
  error = kHistoryIsReadOnly;
  return false;
}

void ReplayTarget::terminate() {
  {
    std::lock_guard lock(mutex_);
    terminating_ = true;
    wake_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
  std::lock_guard lock(mutex_);
  state_ = State::Finished;
}

std::optional<HistoryPosition> ReplayTarget::frameStart(size_t frame, std::string& error) {
  const Vm& vm = replayer_->vm();
  const std::vector<Frame> frames = vm.frames();
  const replay::Position here = replayer_->position();
  if (frame >= frames.size()) {
    error = "no such frame";
    return std::nullopt;
  }
  const replay::CycleSteps* steps = replayer_->steps(here.cycle, error);
  if (!steps) return std::nullopt;
  if (here.step >= steps->count()) {
    error = "no frame is active at the end of a cycle";
    return std::nullopt;
  }
  // The activations from the top level to the innermost: one per frame.
  std::vector<uint32_t> chain;
  for (uint32_t a = steps->activations[here.step];; a = steps->activationTable[a].parent) {
    chain.insert(chain.begin(), a);
    if (a == 0) break;
  }
  if (chain.size() != frames.size()) {
    error = "the recorded call stack does not match this position's frames";
    return std::nullopt;
  }
  const uint32_t activation = chain[frame];
  const uint32_t pou = frames[frame].pou;
  const uint64_t from = activation == 0 ? 0 : steps->activationTable[activation].callStep + 1;
  const Program& program = replayer_->program();
  for (uint64_t q = from; q <= here.step; ++q) {
    if (steps->activations[q] != activation || program.statements[steps->statements[q]].pou != pou) continue;
    return HistoryPosition{here.cycle, q};
  }
  error = "the frame's first statement is not in this cycle";
  return std::nullopt;
}

std::optional<Timeline> ReplayTarget::timeline(std::string& error) const {
  if (!paused()) {
    error = "the history is moving: pause first";
    return std::nullopt;
  }
  if (growing_) replayer_->refresh();  // (paused: the worker does not touch the replayer)
  replay::History& history = replayer_->history();
  Timeline t;
  t.firstCycle = history.firstCycle();
  t.lastCycle = history.endCycle() - 1;
  auto startOf = [&](uint64_t cycle) {
    std::shared_ptr<const trace::ChunkData> held;
    replay::CycleRecord record;
    std::string readError;
    return history.cycle(cycle, held, record, readError) ? record.startNs : int64_t{0};
  };
  t.firstTimeNs = startOf(t.firstCycle);
  t.lastTimeNs = startOf(t.lastCycle);
  t.cycle = replayer_->position().cycle;
  t.step = replayer_->position().step;
  t.timeNs = startOf(t.cycle);
  for (const trace::GapData& g : history.gaps()) t.gaps.push_back(Timeline::Gap{g.firstCycle, g.cycleCount});
  if (history.fault()) t.fault = history.fault()->message;
  t.live = handOver_ != nullptr || growing_;
  return t;
}

bool ReplayTarget::atFault(const replay::Position& position) const {
  const std::optional<trace::FaultData>& fault = replayer_->history().fault();
  return fault && fault->cycle == position.cycle && fault->step > 0 && fault->step - 1 == position.step;
}

StopInfo ReplayTarget::describe(const replay::Stop& stop, const StopSet& stops,
                                const std::vector<int64_t>& breakpointIds) {
  StopInfo info;
  info.task = replayer_->task();
  switch (stop.reason) {
    case replay::StopReason::Breakpoint:
      info.reason = StopReason::Breakpoint;
      if (stop.breakpoint >= 0 && static_cast<size_t>(stop.breakpoint) < breakpointIds.size())
        info.breakpointIds.push_back(breakpointIds[static_cast<size_t>(stop.breakpoint)]);
      break;
    case replay::StopReason::DataWrite:
      info.reason = StopReason::DataBreakpoint;
      if (stop.breakpoint >= 0 && static_cast<size_t>(stop.breakpoint) < stops.dataWatches.size())
        info.breakpointIds.push_back(stops.dataWatches[static_cast<size_t>(stop.breakpoint)].id);
      break;
    case replay::StopReason::Step:
    case replay::StopReason::Start:
    case replay::StopReason::End: info.reason = StopReason::Step; break;
  }
  if (growing_ && stop.reason == replay::StopReason::End) {
    listener_.output("console",
                     growthEnded_.load(std::memory_order_acquire)
                         ? fmt::format("the end of the recording (cycle {}, step {}): the program has ended\n",
                                       stop.position.cycle, stop.position.step)
                         : fmt::format("the newest recorded position (cycle {}, step {}): the task runs on\n",
                                       stop.position.cycle, stop.position.step));
  } else if (stop.reason == replay::StopReason::Start && !startNote_.empty()) {
    listener_.output("console",
                     fmt::format("{} (cycle {}, step {})\n", startNote_, stop.position.cycle, stop.position.step));
  } else if (!stop.note.empty() && !(handOver_ && stop.reason == replay::StopReason::End))
    listener_.output("console",
                     fmt::format("{} (cycle {}, step {})\n", stop.note, stop.position.cycle, stop.position.step));
  if (info.reason == StopReason::Step && atFault(stop.position)) {
    // The last recorded statement is the one that faulted: shown as the fault it was.
    const trace::FaultData& fault = *replayer_->history().fault();
    info.reason = StopReason::Exception;
    info.description = fault.message;
    info.exceptionId = std::string(faultText(static_cast<FaultCode>(fault.code)));
  }
  return info;
}

bool ReplayTarget::waitForGrowth() {
  for (;;) {
    const bool ended = growthEnded_.load(std::memory_order_acquire);
    if (replayer_->refresh()) return true;
    if (ended) return false;  // (refreshed after the end: nothing more will come)
    std::unique_lock lock(mutex_);
    if (wake_.wait_for(lock, std::chrono::milliseconds(20), [&] { return terminating_ || pauseRequested_; }))
      return false;
  }
}

std::optional<StopInfo> ReplayTarget::execute(const Job& job, std::shared_ptr<const StopSet>& stops, bool& atLiveEdge,
                                              std::string& error) {
  replay::Replayer& r = *replayer_;
  if (growing_) {
    r.refresh();
    if (job.kind == Job::Kind::Start) {
      // The first recorded cycle may not be in the file yet.
      while (!r.start()) {
        if (!waitForGrowth() && !r.start()) {
          error = replay::Replayer::kCancelled;
          return std::nullopt;
        }
      }
      if (!r.seek(*r.start(), error)) return std::nullopt;
      if (stopOnEntry_) return StopInfo{StopReason::Entry, r.task()};
      Job follow = job;
      follow.kind = Job::Kind::Move;
      follow.move = ResumeKind::Continue;
      return execute(follow, stops, atLiveEdge, error);
    }
  }
  if (job.kind != Job::Kind::Move) {
    std::optional<replay::Position> target = job.kind == Job::Kind::Jump ? std::optional(job.target) : startAt_;
    if (!target) target = r.end();
    if (!target || !r.seek(*target, error)) return std::nullopt;
    StopInfo info;
    info.task = r.task();
    info.reason = job.kind == Job::Kind::Start ? StopReason::Entry : job.reason;
    if (job.kind == Job::Kind::Start && atFault(*target)) {
      info = describe(replay::Stop{*target, replay::StopReason::End, -1, {}}, *stops, {});
    }
    return info;
  }

  // The stops as the replayer checks them: the breakpoints that stop (then, for a forward
  // continue, the logpoints, which print as it passes them, never going backwards) and the data
  // watches. Only those resolved for this program (a StopSet made for another is none of ours).
  std::vector<replay::Breakpoint> breakpoints;
  std::vector<int64_t> ids;
  std::vector<const ResolvedBreakpoint*> logpoints;
  std::vector<replay::Watch> watches;
  size_t stopping = 0;
  auto collect = [&] {
    breakpoints.clear();
    ids.clear();
    logpoints.clear();
    watches.clear();
    if (stops->program && stops->program.get() != &r.program()) return;
    for (const auto& bp : stops->breakpoints) {
      if (bp->logMessage) continue;
      breakpoints.push_back(toReplay(bp, listener_));
      ids.push_back(bp->id);
    }
    stopping = breakpoints.size();
    if (job.move == ResumeKind::Continue) {
      for (const auto& bp : stops->breakpoints) {
        if (!bp->logMessage) continue;
        breakpoints.push_back(toReplay(bp, listener_));
        logpoints.push_back(bp.get());
      }
    }
    for (const DataWatch& w : stops->dataWatches) watches.push_back(replay::Watch{w.offset, w.size, w.bit});
  };
  collect();

  std::optional<replay::Stop> stop;
  const bool step = job.move != ResumeKind::Continue && job.move != ResumeKind::ReverseContinue;
  // Following a live task, the end is the live position: a forward move that gets there without
  // a reason to stop goes on live.
  auto reachedLive = [&](const replay::Stop& s) {
    return handOver_ && !isReverse(job.move) && s.reason == replay::StopReason::End;
  };
  if (step && job.task != r.task()) {
    stop = stepOtherTask(job.move, job.task, error);
    if (!stop) return std::nullopt;
    if ((atLiveEdge = reachedLive(*stop))) return StopInfo{StopReason::Step, r.task()};
    StopInfo info = describe(*stop, *stops, ids);
    info.endsStep = true;
    return info;
  }
  switch (job.move) {
    case ResumeKind::Continue:
      for (;;) {
        stop = r.continueForward(breakpoints, watches, error);
        if (stop && stop->reason == replay::StopReason::Breakpoint &&
            static_cast<size_t>(stop->breakpoint) >= stopping) {
          listener_.output("console",
                           logpoints[static_cast<size_t>(stop->breakpoint) - stopping]->logMessage(r.vm()) + "\n");
          continue;
        }
        // Beside a task that never stops: nothing up to the newest recorded position, so wait for
        // the task to record more, with the breakpoints set meanwhile.
        if (growing_ && stop && stop->reason == replay::StopReason::End && waitForGrowth()) {
          std::lock_guard lock(mutex_);
          if (stops_->generation != stops->generation) {
            stops = stops_;
            collect();
          }
          continue;
        }
        break;
      }
      break;
    case ResumeKind::Next: stop = r.stepOver(breakpoints, error); break;
    case ResumeKind::StepIn: stop = r.stepIn(breakpoints, error); break;
    case ResumeKind::StepOut: stop = r.stepOut(breakpoints, error); break;
    case ResumeKind::StepBack: stop = r.stepBack(breakpoints, error); break;
    case ResumeKind::ReverseContinue: stop = r.reverseContinue(breakpoints, watches, error); break;
    case ResumeKind::StepBackIn: stop = r.reverseStepIn(breakpoints, error); break;
    case ResumeKind::StepBackOut: stop = r.reverseStepOut(breakpoints, error); break;
  }
  if (!stop) return std::nullopt;
  if ((atLiveEdge = reachedLive(*stop))) return StopInfo{StopReason::Step, r.task()};
  StopInfo info = describe(*stop, *stops, ids);
  info.endsStep = step;
  return info;
}

std::optional<replay::Stop> ReplayTarget::stepOtherTask(ResumeKind move, uint32_t task, std::string& error) {
  replay::Replayer& r = *replayer_;
  const uint64_t cycle = r.position().cycle;
  const bool back = isReverse(move);
  const std::optional<uint64_t> other = back ? r.previousCycleOfTask(cycle, task) : r.nextCycleOfTask(cycle, task);
  if (!other) {
    // None recorded that way: the step stays here, at the start or end of what the recording holds.
    const std::string note = fmt::format("task {} has no recorded cycle {} this one", r.program().tasks.at(task).name,
                                         back ? "before" : "after");
    return replay::Stop{r.position(), back ? replay::StopReason::Start : replay::StopReason::End, -1, note};
  }
  uint64_t step = 0;
  if (back) {  // the last statement of that cycle
    const replay::CycleSteps* steps = r.steps(*other, error);
    if (!steps) return std::nullopt;
    step = steps->count() ? steps->count() - 1 : 0;
  }
  if (!r.seek(replay::Position{*other, step}, error)) return std::nullopt;
  return replay::Stop{r.position(), replay::StopReason::Step, -1, {}};
}

void ReplayTarget::workerLoop() {
  // Beside a task that never stops, replaying gives way to the task whenever both want a core: a
  // lower priority for this thread only (raising one's nice value needs no privilege).
  if (growing_) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kNonstopNice);
  for (;;) {
    Job job;
    std::shared_ptr<const StopSet> stops;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return terminating_ || job_.has_value(); });
      if (terminating_) return;
      job = *job_;
      job_.reset();
      stops = stops_;
    }
    std::string error;
    bool atLiveEdge = false;
    std::optional<StopInfo> stop = execute(job, stops, atLiveEdge, error);  // (may take a newer set)
    if (atLiveEdge && handOver_(job.move, job.task)) {
      // The live task goes on with the move: nothing stops here. Idle until moved to the live
      // position again.
      std::lock_guard lock(mutex_);
      state_ = State::Paused;
      lastStop_.reset();
      wake_.notify_all();
      continue;
    }
    std::unique_lock lock(mutex_);
    if (terminating_) return;
    if (!stop && error == replay::Replayer::kCancelled) {
      // Beside a task that never stops, a pause shows the newest recorded position.
      std::string ignored;
      if (growing_ && replayer_->end()) replayer_->seek(*replayer_->end(), ignored);
      stop = StopInfo{StopReason::Pause, replayer_->task()};
    } else if (!stop) {
      // The move could not be made (a corrupt chunk on the way, say): it stops where the replayer is.
      listener_.output("stderr", fmt::format("the move failed: {}\n", error));
      stop = StopInfo{StopReason::Step, replayer_->task(), {}, error};
    }
    if ((stop->reason == StopReason::Breakpoint || stop->reason == StopReason::DataBreakpoint) &&
        stops_->generation != stops->generation) {
      stop->reason = StopReason::Step;  // a breakpoint of a set replaced meanwhile
      stop->breakpointIds.clear();
    }
    if (pauseRequested_ && stop->reason != StopReason::Exception) {
      stop->reason = StopReason::Pause;
      stop->breakpointIds.clear();
    }
    pauseRequested_ = false;
    state_ = State::Paused;
    lastStop_ = *stop;
    listener_.stopped(*stop);  // under the lock, as the live target does (the generation rule)
  }
}

}  // namespace scanback::dap
