// The live target: the program executing for real, on its own thread, paced by the task
// intervals (or as fast as it goes). Stops are taken at statement boundaries by a VmObserver that
// consults the StopSet (DESIGN.md invariants 3 and 4: breakpoints are a side table, not patched
// code); while stopped, the thread waits for resume() and the session reads the VM.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "dap/targets/target.h"
#include "vm/runtime/stimulus.h"

namespace scanback::dap {

struct LiveOptions {
  std::optional<uint64_t> cycles;  // end after this many cycles
  bool realtime = true;            // pace cycles by the task intervals
  std::optional<Stimulus> stimulus;
};

class LiveTarget final : public Target, private VmObserver {
 public:
  LiveTarget(std::shared_ptr<const Program> program, LiveOptions options, TargetListener& listener);
  ~LiveTarget() override;

  void setStops(std::shared_ptr<const StopSet> stops) override;
  void start(bool stopOnEntry) override;
  void resume(ResumeKind kind, uint32_t task) override;
  bool pause(uint32_t task) override;
  bool paused() const override;
  bool finished() const override;
  std::optional<StopInfo> lastStop() const override;
  const Vm& vm() const override { return runtime_.vm(); }
  bool write(ExternalWrite write, std::string& error) override;
  bool reload(ReloadRequest request, std::string& error) override;
  void terminate() override;

 private:
  enum class State { Configuring, Running, Paused, Finished };
  struct Step {
    ResumeKind kind = ResumeKind::Continue;
    uint32_t task = 0;
    uint64_t cycle = 0;
    uint32_t depth = 0;
  };

  void runLoop();
  bool onStatement(uint32_t statement, uint64_t step) override;
  // Publishes a stop and waits until resumed. False when terminated meanwhile.
  bool stopAndWait(const StopInfo& stop, std::unique_lock<std::mutex>& lock);
  // Waits until the wall-clock time of the next cycle, a pause request or termination.
  void pace(int64_t startNs);
  void refreshStops();
  // Swaps in the reloads requested so far (between cycles, or before the thread starts).
  void applyReloads(std::vector<ReloadRequest> reloads);
  void finish(int exitCode);

  LiveOptions options_;
  TargetListener& listener_;
  Runtime runtime_;
  std::thread thread_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  State state_ = State::Configuring;
  bool terminating_ = false;
  bool resumed_ = false;
  std::optional<StopInfo> lastStop_;
  std::shared_ptr<const StopSet> stops_;
  std::atomic<uint64_t> stopsGeneration_{0};
  std::atomic<bool> pauseRequested_{false};
  std::atomic<uint32_t> pauseTask_{0};
  std::optional<Step> step_;  // set by resume(), read by the thread
  std::vector<ReloadRequest> reloads_;  // taken by the thread at the next cycle start

  // ---- the execution thread only
  std::shared_ptr<const StopSet> cached_;
  uint64_t cachedGeneration_ = 0;
  bool entryPending_ = false;
  bool reanchor_ = true;
  std::chrono::steady_clock::time_point anchor_;  // wall time of virtual time 0
  std::vector<std::vector<uint8_t>> watchValues_;  // per data watch: the value at the last boundary
};

}  // namespace scanback::dap
