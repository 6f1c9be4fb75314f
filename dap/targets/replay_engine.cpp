#include "dap/targets/replay_engine.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

namespace scanback::dap {

namespace {
// Growing: how often a continue that has found nothing looks for newly recorded cycles.
constexpr std::chrono::milliseconds kGrowthPoll{20};
}  // namespace

std::unique_ptr<ReplayEngine> ReplayEngine::open(const std::string& path, TargetListener& listener,
                                                 std::string& error) {
  std::unique_ptr<replay::Replayer> replayer = replay::Replayer::open(path, replay::ReplayOptions{}, error);
  if (!replayer) return nullptr;
  if (replayer->history().empty()) {
    error = fmt::format("{}: the trace has no recorded cycle", path);
    return nullptr;
  }
  return std::unique_ptr<ReplayEngine>(new ReplayEngine(std::move(replayer), listener));
}

std::unique_ptr<ReplayEngine> ReplayEngine::follow(const std::string& partialPath,
                                                   std::shared_ptr<const Program> program, TargetListener& listener,
                                                   std::string& error) {
  replay::ReplayOptions options;
  options.program = std::move(program);
  std::unique_ptr<replay::Replayer> replayer = replay::Replayer::open(partialPath, options, error);
  if (!replayer) return nullptr;
  return std::unique_ptr<ReplayEngine>(new ReplayEngine(std::move(replayer), listener));
}

ReplayEngine::ReplayEngine(std::unique_ptr<replay::Replayer> replayer, TargetListener& listener)
    : replayer_(std::move(replayer)), listener_(listener), checker_(listener) {}

void ReplayEngine::setControl(RunControl& control) { replayer_->setCancelFlag(&control.pauseFlag()); }

void ReplayEngine::followGrowth(const std::atomic<bool>* executing, bool fromNewest,
                                std::function<bool()> sourcePaused) {
  growing_ = true;
  growFromNewest_ = fromNewest;
  sourcePaused_ = std::move(sourcePaused);
  replayer_->setGiveWayFlag(executing);
}

bool ReplayEngine::setStartAt(const StartAt& at, std::string& error) {
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

// ---------------------------------------------------------------- the session's thread, paused

std::optional<HistoryPosition> ReplayEngine::recordedPosition(uint64_t cycle, std::optional<uint64_t> step,
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

std::optional<HistoryPosition> ReplayEngine::frameStart(size_t frame, std::string& error) {
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

std::optional<Timeline> ReplayEngine::timeline(std::string&) {
  if (growing_) replayer_->refresh();
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
  if (history.fault()) {
    t.fault = history.fault()->message;
    // The faulting statement: the last boundary of the cycle (FaultData::step counts it).
    const trace::FaultData& f = *history.fault();
    t.faultAt = Timeline::FaultPosition{f.cycle, f.step > 0 ? f.step - 1 : 0, f.statement};
  }
  t.live = endIsLive_ || growing_;
  return t;
}

std::optional<std::vector<Force>> ReplayEngine::forcesHeld(std::string& error) {
  std::shared_ptr<const trace::ChunkData> held;
  replay::CycleRecord record;
  if (!replayer_->history().cycle(replayer_->position().cycle, held, record, error)) return std::nullopt;
  std::vector<Force> forces;
  for (const trace::ForceData* f : record.forces) {
    Force force;
    force.target = f->target;
    force.offset = f->offset;
    force.bit = f->bit;
    force.bytes = f->bytes;
    force.sinceCycle = f->sinceCycle;
    describeForce(replayer_->program(), force);
    forces.push_back(std::move(force));
  }
  return forces;
}

std::optional<HistoryPosition> ReplayEngine::newestPosition(std::string& error) {
  if (growing_) replayer_->refresh();
  // A recording that ends in a fault ends at the faulting statement (where a move to the end stops
  // and timeline() puts the fault).
  if (const std::optional<trace::FaultData>& f = replayer_->history().fault())
    return HistoryPosition{f->cycle, f->step > 0 ? f->step - 1 : 0};
  const std::optional<replay::Position> end = replayer_->end();
  if (!end) {
    error = "the recording holds no cycle yet";
    return std::nullopt;
  }
  return HistoryPosition{end->cycle, end->step};
}

bool ReplayEngine::moveToLive(const replay::OpenCycle* open, bool atCycleEnd, std::string& error) {
  replayer_->refresh();
  replayer_->setOpenCycle(open);
  replayer_->setEndAtCycleEnd(!open && atCycleEnd);
  const std::optional<replay::Position> end = replayer_->end();
  if (!end) {
    error = "the recording holds no cycle yet";
    return false;
  }
  return replayer_->seek(*end, error);
}

bool ReplayEngine::atEnd() { return replayer_->end() == replayer_->position(); }

ReplayEngine::Origin ReplayEngine::origin(uint32_t task) const {
  const Vm& vm = replayer_->vm();
  Origin o;
  o.cycle = replayer_->position().cycle;
  o.step = replayer_->position().step;
  o.task = vm.inCycle() ? vm.currentTask() : task;
  o.depth = vm.inCycle() && vm.currentTask() == task ? vm.callDepth() : 0;
  return o;
}

StepOrigin ReplayEngine::liveStepOrigin(const Origin& from) {
  StepOrigin o{from.cycle, from.depth, from.depth};
  const replay::Position here = replayer_->position();
  if (from.depth == 0 || here.cycle != from.cycle) return o;  // (the live task ends it at its next statement)
  std::string error;
  const replay::CycleSteps* s = replayer_->steps(from.cycle, error);
  if (!s || from.step >= s->count()) return o;
  // The activations here and at the origin (the end of a cycle is at the top level): going out
  // from the origin's, the first that is here too. Activation 0, the program bodies, is depth 1.
  const uint32_t at = here.step < s->count() ? s->activations[here.step] : 0;
  uint32_t a = s->activations[from.step];
  uint32_t depth = from.depth;
  while (a != 0 && !s->encloses(a, at)) {
    a = s->activationTable[a].parent;
    --depth;
  }
  o.floor = std::max<uint32_t>(depth, 1);
  return o;
}

// ---------------------------------------------------------------- the target's thread

ReplayEngine::Ended ReplayEngine::carryOut(const Move& move, RunControl& control) {
  if (growing_ && !niced_) {
    // Beside a task that never stops, replaying gives way to the task whenever both want a core:
    // a lower priority for this thread only (raising one's nice value needs no privilege).
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kNonstopNice);
    niced_ = true;
  }
  std::string error;
  bool atLiveEdge = false;
  std::optional<StopInfo> stop = execute(move, control, atLiveEdge, error);
  // (A pause asked for meanwhile stops the move here, at the live position.)
  if (atLiveEdge && !control.pauseRequested()) return Ended::AtLiveEdge;
  if (!stop && error == replay::Replayer::kCancelled) {
    // Beside a task that never stops, a pause shows the newest recorded position.
    // (Read again first: the task may have recorded cycles since this thread last looked.)
    if (growing_) {
      replayer_->refresh();
      const std::optional<replay::Position> end = replayer_->end();
      std::string why;
      if (end && !replayer_->seek(*end, why))
        listener_.output("stderr", fmt::format("the pause cannot show the newest recorded position: {}\n", why));
    }
    stop = StopInfo{StopReason::Pause, replayer_->task()};
  } else if (!stop) {
    // The move could not be made (a corrupt chunk on the way, say): it stops where the replayer is.
    listener_.output("stderr", fmt::format("the move failed: {}\n", error));
    stop = StopInfo{StopReason::Step, replayer_->task(), {}, error};
  }
  // A search cut short by a pause, or a move placing the position when it came: a pause.
  const RunControl::Published published =
      control.publish(*stop, checker_.generation(), {.mayGoOn = false, .pauseWins = true});
  return published == RunControl::Published::Stopped ? Ended::Stopped : Ended::Terminating;
}

std::optional<StopInfo> ReplayEngine::execute(const Move& move, RunControl& control, bool& atLiveEdge,
                                              std::string& error) {
  replay::Replayer& r = *replayer_;
  checker_.take(control.stops());
  if (growing_) {
    r.refresh();
    if (move.kind == Move::Kind::Start) {
      // The first recorded cycle may not be in the file yet.
      while (!r.start()) {
        if (!waitForGrowth(control) && !r.start()) {
          error = replay::Replayer::kCancelled;
          return std::nullopt;
        }
      }
      const std::optional<replay::Position> end = growFromNewest_ ? r.end() : std::nullopt;
      if (!r.seek(end ? *end : *r.start(), error)) return std::nullopt;
      // Attached to a runtime that has faulted: the session starts at the fault, shown as such.
      if (end && atFault(*end))
        return describe(replay::Stop{*end, replay::StopReason::End, -1, {}, {}, {}}, StopChecker::Search{});
      if (move.stopOnEntry) return StopInfo{StopReason::Entry, r.task()};
      // Attached to a runtime its operator paused: the session shows the paused state at once.
      if (end && sourcePaused_ && sourcePaused_()) return StopInfo{StopReason::Pause, r.task()};
      return moveFrom(Move::resumed(ResumeKind::Continue, 0), control, atLiveEdge, error);
    }
  }
  if (move.kind != Move::Kind::Resume) {
    std::optional<replay::Position> target =
        move.kind == Move::Kind::Jump ? std::optional(replay::Position{move.to.cycle, move.to.step}) : startAt_;
    if (!target) target = r.end();
    if (!target || !r.seek(*target, error)) return std::nullopt;
    if (move.kind == Move::Kind::Start && atFault(*target))
      return describe(replay::Stop{*target, replay::StopReason::End, -1, {}, {}, {}}, StopChecker::Search{});
    return StopInfo{move.kind == Move::Kind::Start ? StopReason::Entry : move.reason, r.task()};
  }
  return moveFrom(move, control, atLiveEdge, error);
}

std::optional<StopInfo> ReplayEngine::moveFrom(const Move& move, RunControl& control, bool& atLiveEdge,
                                               std::string& error) {
  replay::Replayer& r = *replayer_;
  // Logpoints print as a forward continue passes them; never going backwards, nor on a step.
  const bool continuing = move.resume == ResumeKind::Continue;
  StopChecker::Search search = checker_.search(r.program(), continuing);
  // Following a live task, the end is the live position: a forward move that gets there without a
  // reason to stop goes on live.
  // (The fault the live task is paused at is a stop of its own, the end of its history.)
  auto reachedLive = [&](const replay::Stop& s) {
    return endIsLive_ && !isReverse(move.resume) && s.reason == replay::StopReason::End && !atFault(s.position);
  };
  const replay::Position from = r.position();
  std::optional<replay::Stop> stop;
  if (move.isStep() && move.task != r.task()) {
    for (;;) {
      stop = stepOtherTask(move.resume, move.task, error);
      if (!growing_ || !stop || stop->reason != replay::StopReason::End || isReverse(move.resume)) break;
      const Retry retry = retryStepFrom(from, control, error);
      if (retry == Retry::Failed) return std::nullopt;
      if (retry == Retry::Ended) break;
    }
    if (!stop) return std::nullopt;
  } else {
    switch (move.resume) {
      case ResumeKind::Continue:
        for (;;) {
          stop = r.continueForward(search.breakpoints, search.watches, error);
          if (!stop) break;
          // The logpoints that stop here print (also beside a breakpoint that stops here, as live);
          // when only they stop here, the move goes on.
          for (const ResolvedBreakpoint* logpoint : search.logpoints(*stop)) checker_.log(*logpoint, r.vm());
          if (search.logpoint(*stop)) continue;
          // Beside a task that never stops: nothing up to the newest recorded position, so wait for
          // the task to record more, with the breakpoints set meanwhile.
          if (growing_ && stop && stop->reason == replay::StopReason::End && waitForGrowth(control)) {
            if (control.stopsGeneration() != checker_.generation()) {
              checker_.take(control.stops());
              search = checker_.search(r.program(), true);
            }
            continue;
          }
          break;
        }
        break;
      case ResumeKind::Next:
      case ResumeKind::StepIn:
      case ResumeKind::StepOut:
        for (;;) {
          if (move.resume == ResumeKind::Next) stop = r.stepOver(search.breakpoints, search.watches, error);
          if (move.resume == ResumeKind::StepIn) stop = r.stepIn(search.breakpoints, search.watches, error);
          if (move.resume == ResumeKind::StepOut) stop = r.stepOut(search.breakpoints, search.watches, error);
          if (!growing_ || !stop || stop->reason != replay::StopReason::End) break;
          const Retry retry = retryStepFrom(from, control, error);
          if (retry == Retry::Failed) return std::nullopt;
          if (retry == Retry::Ended) break;
          if (control.stopsGeneration() != checker_.generation()) {
            checker_.take(control.stops());
            search = checker_.search(r.program(), false);
          }
        }
        break;
      case ResumeKind::StepBack: stop = r.stepBack(search.breakpoints, error); break;
      case ResumeKind::ReverseContinue: stop = r.reverseContinue(search.breakpoints, search.watches, error); break;
      case ResumeKind::StepBackIn: stop = r.reverseStepIn(search.breakpoints, error); break;
      case ResumeKind::StepBackOut: stop = r.reverseStepOut(search.breakpoints, error); break;
    }
    if (!stop) return std::nullopt;
  }
  if ((atLiveEdge = reachedLive(*stop))) return StopInfo{StopReason::Step, r.task()};
  StopInfo info = describe(*stop, search);
  info.endsStep = move.isStep();
  return info;
}

StopInfo ReplayEngine::describe(const replay::Stop& stop, const StopChecker::Search& search) {
  StopInfo info;
  info.task = replayer_->task();
  switch (stop.reason) {
    case replay::StopReason::Breakpoint: info.reason = StopReason::Breakpoint; break;
    case replay::StopReason::DataWrite: info.reason = StopReason::DataBreakpoint; break;
    case replay::StopReason::Step:
    case replay::StopReason::Start:
    case replay::StopReason::End: info.reason = StopReason::Step; break;
  }
  info.breakpointIds = search.ids(stop);
  if (stop.reason == replay::StopReason::DataWrite && stop.change && !info.breakpointIds.empty()) {
    info.change = StopInfo::DataChange{info.breakpointIds.front(), stop.change->before,
                                       stop.change->byScanInputs ? UINT32_MAX : stop.change->statement};
    info.description = checker_.describe(replayer_->vm(), *info.change);
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
  } else if (!stop.note.empty() && !(endIsLive_ && stop.reason == replay::StopReason::End)) {
    listener_.output("console",
                     fmt::format("{} (cycle {}, step {})\n", stop.note, stop.position.cycle, stop.position.step));
  }
  if (info.reason == StopReason::Step && atFault(stop.position)) {
    // The last recorded statement is the one that faulted: shown as the fault it was.
    const trace::FaultData& fault = *replayer_->history().fault();
    info.reason = StopReason::Exception;
    info.description = fault.message;
    info.exceptionId = std::string(faultText(static_cast<FaultCode>(fault.code)));
  }
  return info;
}

std::optional<replay::Stop> ReplayEngine::stepOtherTask(ResumeKind move, uint32_t task, std::string& error) {
  replay::Replayer& r = *replayer_;
  const uint64_t cycle = r.position().cycle;
  const bool back = isReverse(move);
  const std::optional<uint64_t> other = back ? r.previousCycleOfTask(cycle, task) : r.nextCycleOfTask(cycle, task);
  if (!other) {
    // None recorded that way: the step stays here, at the start or end of what the recording holds.
    const std::string note = fmt::format("task {} has no recorded cycle {} this one", r.program().tasks.at(task).name,
                                         back ? "before" : "after");
    return replay::Stop{r.position(), back ? replay::StopReason::Start : replay::StopReason::End, -1, note, {}, {}};
  }
  uint64_t step = 0;
  if (back) {  // the last statement of that cycle
    const replay::CycleSteps* steps = r.steps(*other, error);
    if (!steps) return std::nullopt;
    step = steps->count() ? steps->count() - 1 : 0;
  }
  if (!r.seek(replay::Position{*other, step}, error)) return std::nullopt;
  return replay::Stop{r.position(), replay::StopReason::Step, -1, {}, {}, {}};
}

bool ReplayEngine::waitForGrowth(RunControl& control) {
  for (;;) {
    const bool ended = growthEnded_.load(std::memory_order_acquire);
    if (replayer_->refresh()) return true;
    if (ended) return false;  // (refreshed after the end: nothing more will come)
    if (control.sleepUntil(std::chrono::steady_clock::now() + kGrowthPoll)) return false;  // a pause, the end
  }
}

ReplayEngine::Retry ReplayEngine::retryStepFrom(const replay::Position& from, RunControl& control, std::string& error) {
  if (waitForGrowth(control)) return replayer_->seek(from, error) ? Retry::Again : Retry::Failed;
  if (control.pauseRequested() || control.terminating()) {
    error = replay::Replayer::kCancelled;
    return Retry::Failed;
  }
  return Retry::Ended;  // the trace is complete (the task has ended): the step ends at its end
}

bool ReplayEngine::atFault(const replay::Position& position) const {
  const std::optional<trace::FaultData>& fault = replayer_->history().fault();
  return fault && fault->cycle == position.cycle && fault->step > 0 && fault->step - 1 == position.step;
}

}  // namespace scanback::dap
