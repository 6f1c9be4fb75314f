// What a runtime host publishes for its control clients, and the operator's switches they reach:
// the state (running, paused, faulted, stopped), the cycle count, the tasks' cycle times, the
// flight recorder's history and the recording's health, the fault and the I/O drivers' health.
// The scan thread writes (relaxed atomics and the cycle time histograms, which cost it an add);
// the control server's threads read, and never make the scan thread wait.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "control/server.h"
#include "recorder/recorder.h"
#include "runtime/io_driver.h"
#include "runtime/process_signals.h"
#include "vm/runtime/cycle_times.h"
#include "vm/runtime/runtime.h"

namespace scanback::runtime {

using control::json;

// Whether the host is to stop: asked through RuntimeHost::stop() (a control client's stop, the
// host's owner) or, when the host answers signals, by SIGINT, SIGTERM or SIGHUP.
class StopRequest {
 public:
  explicit StopRequest(bool signals) : signals_(signals) {}
  void request() { requested_.store(true); }
  bool requested() const { return requested_.load() || (signals_ && process_signals::interrupted()); }

 private:
  const bool signals_;
  std::atomic<bool> requested_{false};
};

// The recording's part of the status: path, state (ok or failing), error and sinceCycle while
// failing, lostCycles, failures (docs/control.md).
json recordingStatus(const std::string& path, const recorder::Recorder& recorder);

class PublishedRuntime final : public control::ControlledRuntime {
 public:
  enum class State { Running, Paused, Faulted, Stopped };

  PublishedRuntime(const Program& program, bool debugEnabled, StopRequest& stop,
                   std::vector<std::shared_ptr<IoDriver>> drivers);

  // `path`: the trace it writes (empty: its history is in memory only).
  void setRecorder(recorder::Recorder* rec, std::string path) {
    recorder_ = rec;
    recordPath_ = std::move(path);
  }
  // The scan thread:
  void cycleEnded(uint32_t task, uint64_t cycles, uint64_t ns) {
    cycleTimes_[task].record(ns);
    cycles_.store(cycles, std::memory_order_relaxed);
  }
  void faulted(const Runtime& rt);
  // An I/O driver's fault (a device with on_fault = "fault" failed) before cycle `cycle` ran.
  void faulted(const std::string& message, uint64_t cycle);
  void stopped();
  // Between cycles: holds while an operator has paused the runtime, keeping the history current
  // for readers. True when it held (the caller restarts its pacing). A signal cannot notify, so
  // the hold also looks at the stop request every 10 ms.
  bool holdWhilePaused(recorder::Recorder* rec);
  // Called on the scan thread every few milliseconds while it holds (paused, faulted), with the
  // state: the host keeps systemd's watchdog fed there, as the task is alive, only held. Set before
  // the scan thread runs.
  void setWhileHeld(std::function<void(State)> f) { whileHeld_ = std::move(f); }
  // After a fault: holds until the host is asked to stop, keeping the history current for a
  // debugger that attaches post-mortem (snapshot requests are marked here, as a cycle's start would).
  void holdWhileFaulted(recorder::Recorder* rec);

  // The runtime whose forces force, release and forced set and read (its requests are taken at its
  // cycle starts: thread-safe). Before the control server starts.
  void setForcing(Runtime* runtime) { forcing_ = runtime; }

  // ControlledRuntime, from the control server's threads:
  [[nodiscard]] bool setPaused(bool paused, std::string& error) override;
  [[nodiscard]] std::optional<json> force(const std::string& target, const std::string& value,
                                          std::string& error) override;
  [[nodiscard]] std::optional<json> release(const std::string& target, std::string& error) override;
  json forced() const override;
  json status() const override;
  recorder::Recorder* recorder() override { return recorder_; }
  void stop() override;

 private:
  // The tasks' cycle counts and times, read from the histograms at most every kStatisticsEvery.
  json taskStatistics() const;
  // While holding: lets the writer take the staged cycles (the lock released meanwhile), then waits
  // for a change or `wait`.
  void idleAndWait(std::unique_lock<std::mutex>& lock, recorder::Recorder* rec, std::chrono::milliseconds wait);
  // After a change the waiters' predicates read: taking the lock orders it before their next check.
  void wakePauseWaiters();

  const Program& program_;
  const bool debugEnabled_;
  StopRequest& stop_;
  const std::vector<std::shared_ptr<IoDriver>> drivers_;
  recorder::Recorder* recorder_ = nullptr;
  Runtime* forcing_ = nullptr;
  std::string recordPath_;
  std::vector<CycleTimes> cycleTimes_;
  std::atomic<uint64_t> cycles_{0};
  std::atomic<State> state_{State::Running};

  mutable std::mutex mutex_;
  json fault_;
  static constexpr std::chrono::milliseconds kStatisticsEvery{100};
  mutable std::mutex statisticsMutex_;
  mutable json statistics_;
  mutable std::optional<std::chrono::steady_clock::time_point> statisticsAt_;
  static constexpr std::chrono::seconds kPauseAnswerWithin{10};
  std::mutex pauseMutex_;
  std::condition_variable changed_;
  bool pauseWanted_ = false;
  std::function<void(State)> whileHeld_;
};

}  // namespace scanback::runtime
