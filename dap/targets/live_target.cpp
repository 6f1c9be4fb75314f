#include "dap/targets/live_target.h"

#include <fmt/format.h>

namespace scanback::dap {

LiveTarget::LiveTarget(std::shared_ptr<const Program> program, LiveOptions options, TargetListener& listener)
    : ControlledTarget(listener), live_(std::move(program), std::move(options), control_, listener) {}

LiveTarget::~LiveTarget() { terminate(); }

void LiveTarget::carryOut(const Move& move) {
  int exitCode = 0;
  if (live_.run(move, std::nullopt, exitCode) == LiveEngine::Outcome::Ended && control_.finish())
    listener_.exited(exitCode);
}

namespace {

// A follower sees the recorded cycles within about this much time.
constexpr int64_t kFollowLatencyNs = 100'000'000;

class LiveFeed final : public HistoryFeed, private TargetListener {
 public:
  LiveFeed(std::shared_ptr<const Program> program, LiveOptions options, TargetListener& listener)
      : listener_(listener), task_(std::move(program), followed(std::move(options)), *this) {
    auto none = std::make_shared<StopSet>();
    none->stopOnFaults = false;
    task_.setStops(none);
  }
  bool startRecording(std::string& error) { return task_.task().startRecording(error); }

  std::string partialPath() const override { return task_.task().tracePaths().back() + ".partial"; }
  std::shared_ptr<const Program> program() const override { return task_.task().programPtr(); }
  const std::atomic<bool>* executing() const override { return &task_.task().executing(); }
  void start(std::function<void()> ended) override {
    ended_ = std::move(ended);
    task_.start(false);
  }
  std::optional<Timeline::CycleTime> cycleTime() const override { return task_.task().cycleTime(); }
  std::optional<Timeline::Recording> recording() const override { return task_.task().recording(); }
  void stop() override { task_.terminate(); }
  std::optional<Force> force(const std::string& target, const std::string& value, std::string& error) override {
    return task_.force(target, value, error);
  }
  std::optional<std::vector<std::string>> release(const std::string& target, std::string& error) override {
    return task_.release(target, error);
  }
  std::optional<std::vector<Force>> forced(std::string& error) override { return task_.task().forced(error); }

 private:
  static LiveOptions followed(LiveOptions options) {
    options.recordLatencyNs = kFollowLatencyNs;
    return options;
  }
  // The task's reports: it never stops; its end leaves the history open.
  void stopped(const StopInfo&) override {}
  void output(std::string_view category, const std::string& text) override { listener_.output(category, text); }
  void exited(int exitCode) override {
    listener_.output("console", fmt::format("the program has ended (exit code {}); its history stays open until the "
                                            "session ends\n",
                                            exitCode));
    if (ended_) ended_();
  }

  TargetListener& listener_;
  std::function<void()> ended_;
  LiveTarget task_;
};

}  // namespace

std::unique_ptr<HistoryFeed> liveFeed(std::shared_ptr<const Program> program, LiveOptions options,
                                      TargetListener& listener, std::string& error) {
  auto feed = std::make_unique<LiveFeed>(std::move(program), std::move(options), listener);
  if (!feed->startRecording(error)) return nullptr;
  return feed;
}

}  // namespace scanback::dap
