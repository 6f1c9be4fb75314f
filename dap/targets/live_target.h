// The live target: the program executing for real on the target's thread (dap/targets/
// live_engine.h), paused and resumed by the one state machine (run_control.h). It keeps no
// history (history() is null); with LiveOptions::recordPath it records as it runs, which is what
// a nonstop session's feed is (liveFeed below). RecordedLiveTarget adds history to a live task.
#pragma once

#include <memory>

#include "dap/targets/controlled_target.h"
#include "dap/targets/history_feed.h"
#include "dap/targets/live_engine.h"

namespace scanback::dap {

class LiveTarget final : public ControlledTarget {
 public:
  LiveTarget(std::shared_ptr<const Program> program, LiveOptions options, TargetListener& listener);
  ~LiveTarget() override;

  const Vm& vm() const override { return live_.vm(); }
  [[nodiscard]] bool write(ExternalWrite write, std::string& error) override {
    return live_.write(std::move(write), error);
  }
  [[nodiscard]] bool reload(ReloadRequest request, std::string& error) override {
    return live_.reload(std::move(request), error);
  }

  [[nodiscard]] std::optional<Force> force(const std::string& target, const std::string& value,
                                           std::string& error) override {
    return live_.force(target, value, error);
  }
  [[nodiscard]] std::optional<std::vector<std::string>> release(const std::string& target,
                                                                std::string& error) override {
    return live_.release(target, error);
  }
  [[nodiscard]] std::optional<ForcesShown> forced(std::string& error) override {
    std::optional<std::vector<Force>> forces = live_.forced(error);
    if (!forces) return std::nullopt;
    return ForcesShown{std::move(*forces), std::nullopt};
  }

  // The task itself (recording, cycle times): before start(), or as its accessors allow.
  LiveEngine& task() { return live_; }
  const LiveEngine& task() const { return live_; }

 private:
  void carryOut(const Move& move) override;
  void stopsChanged(const std::shared_ptr<const StopSet>& stops) override { live_.takeStops(stops); }
  void ended() override { live_.end(); }

  LiveEngine live_;
};

// A nonstop session's feed: `program` runs live, recording to `options.recordPath` as the session
// follows it, and is never halted, not even at a fault (the program then ends, as without a
// debugger). Its output goes to `listener`. Null with `error` when the trace cannot be created.
[[nodiscard]] std::unique_ptr<HistoryFeed> liveFeed(std::shared_ptr<const Program> program, LiveOptions options,
                                                    TargetListener& listener, std::string& error);

}  // namespace scanback::dap
