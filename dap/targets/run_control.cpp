#include "dap/targets/run_control.h"

#include <fmt/format.h>

#include "vm/base/assert.h"
#include "vm/base/out_of_memory.h"

namespace scanback::dap {

RunControl::RunControl(TargetListener& listener) : listener_(listener), stops_(std::make_shared<StopSet>()) {}

RunControl::~RunControl() { terminate(); }

bool RunControl::start(Move first, std::function<void()> body) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Configuring || terminating_) return false;
  state_ = State::Running;
  move_ = first;
  thread_ = std::thread([this, body = std::move(body)] {
    // An exception leaving a thread ends the process (std::terminate), and with it every session
    // of the server: this target ends alone, with a message (vm/base/out_of_memory.h).
    std::string failure;
    int exitCode = kExitOutOfMemory;
    try {
      body();
      return;
    } catch (const std::bad_alloc& e) {
      failure = outOfMemoryText(e, "running the debug target");
    } catch (const std::exception& e) {
      failure = fmt::format("the debug target failed: {}", e.what());
      exitCode = 70;  // EX_SOFTWARE (sysexits.h): a bug of ours
    }
    if (!finish()) return;  // the session is ending anyway
    listener_.output("stderr", fmt::format("scanback: {}; the program ends here\n", failure));
    listener_.exited(exitCode);
  });
  return true;
}

bool RunControl::post(Move move) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Paused || terminating_) return false;
  SB_ASSERT(thread_.joinable(), "a move posted to a target whose thread never started");
  move_ = move;
  state_ = State::Running;
  pauseRequested_.store(false, std::memory_order_relaxed);
  lastStop_.reset();
  wake_.notify_all();
  return true;
}

bool RunControl::pause(uint32_t task) {
  std::lock_guard lock(mutex_);
  if (state_ != State::Running) return false;
  pauseTask_.store(task, std::memory_order_relaxed);
  pauseRequested_.store(true, std::memory_order_release);
  wake_.notify_all();  // a pacing wait, a wait for the trace to grow
  return true;
}

void RunControl::setStops(std::shared_ptr<const StopSet> stops,
                          const std::function<void(const std::shared_ptr<const StopSet>&)>& whileParked) {
  std::lock_guard lock(mutex_);
  stops_ = std::move(stops);
  stopsGeneration_.store(stops_->generation, std::memory_order_release);
  if (whileParked && (state_ == State::Configuring || state_ == State::Paused)) whileParked(stops_);
}

bool RunControl::runIf(const std::function<void()>& f, bool configuring) const {
  std::lock_guard lock(mutex_);
  if (state_ != State::Paused && !(configuring && state_ == State::Configuring)) return false;
  f();
  return true;
}

RunControl::State RunControl::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

std::optional<StopInfo> RunControl::lastStop() const {
  std::lock_guard lock(mutex_);
  return lastStop_;
}

std::shared_ptr<const StopSet> RunControl::stops() const {
  std::lock_guard lock(mutex_);
  return stops_;
}

void RunControl::terminate() {
  {
    std::lock_guard lock(mutex_);
    terminating_ = true;
    pauseRequested_.store(true, std::memory_order_release);  // a replayer's search under way ends too
    wake_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  std::lock_guard lock(mutex_);
  state_ = State::Finished;
}

bool RunControl::terminating() const {
  std::lock_guard lock(mutex_);
  return terminating_;
}

std::optional<Move> RunControl::nextMove() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return terminating_ || move_.has_value(); });
  if (terminating_) return std::nullopt;
  std::optional<Move> move = move_;
  move_.reset();
  return move;
}

RunControl::Published RunControl::publish(StopInfo stop, uint64_t generation, StopRules rules) {
  std::lock_guard lock(mutex_);
  if (terminating_) return Published::Terminating;
  const bool pauseWanted = pauseRequested_.load(std::memory_order_relaxed);
  if ((stop.reason == StopReason::Breakpoint || stop.reason == StopReason::DataBreakpoint) &&
      stops_->generation != generation) {
    // The breakpoints changed while this one was being checked: it belongs to an old set.
    if (rules.mayGoOn && !pauseWanted) return Published::GoOn;
    stop.reason = pauseWanted ? StopReason::Pause : StopReason::Step;
    stop.breakpointIds.clear();
  }
  if (rules.pauseWins && pauseWanted && stop.reason != StopReason::Exception) {
    stop.reason = StopReason::Pause;
    stop.breakpointIds.clear();
  }
  pauseRequested_.store(false, std::memory_order_relaxed);
  state_ = State::Paused;
  lastStop_ = stop;
  listener_.stopped(stop);  // under the lock: setStops() waits for it (the generation rule)
  return Published::Stopped;
}

bool RunControl::finish() {
  std::lock_guard lock(mutex_);
  if (terminating_) return false;
  state_ = State::Finished;
  return true;
}

bool RunControl::sleepUntil(std::chrono::steady_clock::time_point due) {
  std::unique_lock lock(mutex_);
  return wake_.wait_until(lock, due, [&] { return terminating_ || pauseRequested_.load(std::memory_order_relaxed); });
}

}  // namespace scanback::dap
