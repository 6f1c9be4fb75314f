#include "runtime/published.h"

#include <fmt/format.h>

namespace scanback::runtime {

json recordingStatus(const std::string& path, const recorder::Recorder& recorder) {
  const recorder::RecordingHealth h = recorder.health();
  json r{
      {"path", path}, {"state", h.failing ? "failing" : "ok"}, {"lostCycles", h.lostCycles}, {"failures", h.failures}};
  if (h.failing) {
    r["error"] = h.error;
    r["sinceCycle"] = h.sinceCycle;
  }
  return r;
}

PublishedRuntime::PublishedRuntime(const Program& program, bool debugEnabled, StopRequest& stop,
                                   std::vector<std::shared_ptr<IoDriver>> drivers)
    : program_(program),
      debugEnabled_(debugEnabled),
      stop_(stop),
      drivers_(std::move(drivers)),
      cycleTimes_(program.tasks.size()) {}

void PublishedRuntime::faulted(const Runtime& rt) {
  const FaultInfo& f = rt.vm().fault();
  json fault{
      {"message", rt.faultMessage()}, {"code", std::string(faultText(f.code))}, {"cycle", rt.currentCycle().cycle}};
  if (f.statement < program_.statements.size()) {
    const SourceSpan& span = program_.statements[f.statement].span;
    fault["file"] = program_.sources.file(span.file).path;
    fault["line"] = span.line;
    fault["column"] = span.column;
  }
  {
    std::lock_guard lock(mutex_);
    fault_ = std::move(fault);
  }
  cycles_.store(rt.currentCycle().cycle + 1, std::memory_order_relaxed);  // the faulted one ran too
  state_.store(State::Faulted, std::memory_order_release);
  wakePauseWaiters();
}

void PublishedRuntime::faulted(const std::string& message, uint64_t cycle) {
  {
    std::lock_guard lock(mutex_);
    fault_ = json{{"message", message}, {"code", "io"}, {"cycle", cycle}};
  }
  cycles_.store(cycle, std::memory_order_relaxed);
  state_.store(State::Faulted, std::memory_order_release);
  wakePauseWaiters();
}

void PublishedRuntime::stopped() {
  state_.store(State::Stopped, std::memory_order_release);
  wakePauseWaiters();
}

bool PublishedRuntime::holdWhilePaused(recorder::Recorder* rec) {
  std::unique_lock lock(pauseMutex_);
  if (!pauseWanted_) return false;
  const uint64_t cyclesRun = cycles_.load(std::memory_order_relaxed);  // this thread stored it
  // `paused` is said once the history held reaches the hold (asked to, the writer puts the cycles
  // it has into a block at once), so that a debugger attaching to a paused runtime gets every
  // cycle it ran. The task holds meanwhile anyway; the wait is bounded in case cycles were dropped.
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (rec && pauseWanted_ && !stop_.requested() && rec->held().endCycle < cyclesRun &&
         std::chrono::steady_clock::now() < giveUp)
    idleAndWait(lock, rec, std::chrono::milliseconds(5));
  state_.store(State::Paused, std::memory_order_release);
  changed_.notify_all();
  while (pauseWanted_ && !stop_.requested()) idleAndWait(lock, rec, std::chrono::milliseconds(10));
  state_.store(State::Running, std::memory_order_release);
  changed_.notify_all();
  return true;
}

void PublishedRuntime::holdWhileFaulted(recorder::Recorder* rec) {
  std::unique_lock lock(pauseMutex_);
  while (!stop_.requested()) idleAndWait(lock, rec, std::chrono::milliseconds(10));
}

// A pause is answered once the task holds (between cycles: after the cycle under way, or in real
// time after the next one when it is waiting for that one's start), so that the status read next
// says `paused`; a resume at once.
bool PublishedRuntime::setPaused(bool paused, std::string& error) {
  std::unique_lock lock(pauseMutex_);
  const State state = state_.load(std::memory_order_acquire);
  if (state == State::Faulted) {
    error = "the runtime has faulted: it runs no cycle to pause or resume (scanback ctl stop ends it)";
    return false;
  }
  if (state == State::Stopped || stop_.requested()) {
    error = "the runtime is stopping";
    return false;
  }
  pauseWanted_ = paused;
  changed_.notify_all();
  if (!paused) return true;
  if (!changed_.wait_for(lock, kPauseAnswerWithin, [this] {
        const State s = state_.load(std::memory_order_acquire);
        return s != State::Running || stop_.requested();
      })) {
    error = fmt::format(
        "the pause is requested, but the task has not reached the end of its cycle within {} s; it holds there "
        "when it does (scanback ctl status shows it)",
        kPauseAnswerWithin.count());
    return false;
  }
  if (state_.load(std::memory_order_acquire) != State::Paused) {
    error = "the runtime stopped or faulted before it could hold";
    return false;
  }
  return true;
}

std::optional<json> PublishedRuntime::force(const std::string& target, const std::string& value, std::string& error) {
  if (!forcing_) return ControlledRuntime::force(target, value, error);
  const std::optional<Force> f = forcing_->force(target, value, error);
  if (!f) return std::nullopt;
  return json{{"target", f->target}, {"value", f->value}, {"type", f->type}};
}

std::optional<json> PublishedRuntime::release(const std::string& target, std::string& error) {
  if (!forcing_) return ControlledRuntime::release(target, error);
  const std::optional<std::vector<std::string>> released = forcing_->release(target, error);
  if (!released) return std::nullopt;
  return json(*released);
}

json PublishedRuntime::forced() const {
  json list = json::array();
  if (forcing_)
    for (const Force& f : forcing_->forces())
      list.push_back(json{{"target", f.target}, {"value", f.value}, {"type", f.type}, {"sinceCycle", f.sinceCycle}});
  return list;
}

json PublishedRuntime::status() const {
  static constexpr const char* kStates[] = {"running", "paused", "faulted", "stopped"};
  const State state = state_.load(std::memory_order_acquire);
  json s{{"state", kStates[static_cast<int>(state)]},
         {"cycles", cycles_.load(std::memory_order_relaxed)},
         {"debugEnabled", debugEnabled_}};
  s["tasks"] = taskStatistics();
  s["forced"] = forced();
  if (recorder_) {
    const recorder::HeldHistory held = recorder_->held();
    const recorder::RecorderStats stats = recorder_->stats();
    json ring{{"chunks", held.chunks}, {"bytes", held.bytes}, {"cyclesDropped", stats.cyclesDropped}};
    if (held.chunks) {
      ring["firstCycle"] = held.firstCycle;
      ring["lastCycle"] = held.endCycle - 1;
    }
    s["ring"] = std::move(ring);
    if (!recordPath_.empty()) s["recording"] = recordingStatus(recordPath_, *recorder_);
  }
  if (!drivers_.empty()) {
    json io = json::array();
    for (const std::shared_ptr<IoDriver>& d : drivers_) {
      const IoHealth h = d->health();
      json driver{{"device", h.device},
                  {"state", h.state.empty() ? (h.ok ? "ok" : "failing") : h.state},
                  {"failures", h.failures}};
      if (!h.error.empty()) driver["error"] = h.error;
      if (!h.endpoint.empty()) {
        driver["endpoint"] = h.endpoint;
        driver["requests"] = h.requests;
        driver["requestRate"] = h.requestRate;
      }
      if (h.roundTripP50Ns)
        driver["roundTripNs"] = json{{"p50", *h.roundTripP50Ns}, {"p99", h.roundTripP99Ns.value_or(0)}};
      if (h.clients) {
        driver["clients"] = *h.clients;
        driver["requests"] = h.requests;
      }
      io.push_back(std::move(driver));
    }
    s["io"] = std::move(io);
  }
  if (state == State::Faulted) {
    std::lock_guard lock(mutex_);
    s["fault"] = fault_;
  }
  return s;
}

// Read from the histograms at most every kStatisticsEvery however many clients ask
// (docs/control.md, "Limits"): a reading walks some 3,800 counters a task — microseconds of a
// server thread — and pulls into its cache the lines the scan thread writes at each cycle's end,
// which that thread must then fetch back.
json PublishedRuntime::taskStatistics() const {
  std::lock_guard lock(statisticsMutex_);
  const auto now = std::chrono::steady_clock::now();
  if (statisticsAt_ && now - *statisticsAt_ < kStatisticsEvery) return statistics_;
  json tasks = json::array();
  for (size_t t = 0; t < program_.tasks.size(); ++t) {
    const CycleTimes& c = cycleTimes_[t];
    tasks.push_back(
        json{{"name", program_.tasks[t].name},
             {"intervalNs", program_.tasks[t].intervalNs},
             {"cycles", c.count()},
             {"cycleTimeNs", json{{"median", c.quantileNs(0.5)}, {"p99", c.quantileNs(0.99)}, {"max", c.maxNs()}}}});
  }
  statistics_ = tasks;
  statisticsAt_ = now;
  return tasks;
}

void PublishedRuntime::stop() {
  stop_.request();
  wakePauseWaiters();
}

void PublishedRuntime::idleAndWait(std::unique_lock<std::mutex>& lock, recorder::Recorder* rec,
                                   std::chrono::milliseconds wait) {
  if (rec || whileHeld_) {
    lock.unlock();
    if (rec) {
      rec->idle();
      rec->flushSoon();
    }
    if (whileHeld_) whileHeld_(state_.load(std::memory_order_relaxed));
    lock.lock();
  }
  changed_.wait_for(lock, wait);
}

void PublishedRuntime::wakePauseWaiters() {
  { std::lock_guard lock(pauseMutex_); }
  changed_.notify_all();
}

}  // namespace scanback::runtime
