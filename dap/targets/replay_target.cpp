#include "dap/targets/replay_target.h"

namespace scanback::dap {

std::unique_ptr<ReplayTarget> ReplayTarget::open(const std::string& path, TargetListener& listener,
                                                 std::string& error) {
  std::unique_ptr<ReplayEngine> replay = ReplayEngine::open(path, listener, error);
  if (!replay) return nullptr;
  std::unique_ptr<ReplayTarget> target(new ReplayTarget(std::move(replay), listener));
  target->path_ = path;
  return target;
}

std::unique_ptr<ReplayTarget> ReplayTarget::follow(std::unique_ptr<HistoryFeed> feed, TargetListener& listener,
                                                   std::string& error, bool fromNewest) {
  std::unique_ptr<ReplayEngine> replay = ReplayEngine::follow(feed->partialPath(), feed->program(), listener, error);
  if (!replay) return nullptr;
  replay->followGrowth(feed->executing(), fromNewest, [f = feed.get()] { return f->paused(); });
  std::unique_ptr<ReplayTarget> target(new ReplayTarget(std::move(replay), listener));
  target->feed_ = std::move(feed);
  return target;
}

ReplayTarget::ReplayTarget(std::unique_ptr<ReplayEngine> replay, TargetListener& listener)
    : ControlledTarget(listener), replay_(std::move(replay)) {
  replay_->setControl(control_);
}

ReplayTarget::~ReplayTarget() { terminate(); }

void ReplayTarget::start(bool stopOnEntry) {
  if (control_.state() == RunControl::State::Configuring) {
    for (const std::string& warning : replay_->warnings()) listener_.output("console", warning + "\n");
    if (feed_) feed_->start([replay = replay_.get()] { replay->growthEnded(); });
  }
  ControlledTarget::start(stopOnEntry);
}

bool ReplayTarget::write(ExternalWrite, std::string& error) {
  error = readOnlyReason_;
  return false;
}

bool ReplayTarget::reload(ReloadRequest, std::string& error) {
  error = readOnlyReason_;
  return false;
}

std::optional<Force> ReplayTarget::force(const std::string& target, const std::string& value, std::string& error) {
  if (feed_) return feed_->force(target, value, error);
  error = kForcesNeedALiveTask;
  return std::nullopt;
}

std::optional<std::vector<std::string>> ReplayTarget::release(const std::string& target, std::string& error) {
  if (feed_) return feed_->release(target, error);
  error = kForcesNeedALiveTask;
  return std::nullopt;
}

std::optional<ForcesShown> ReplayTarget::forced(std::string& error) {
  std::optional<ForcesShown> shown;
  bool wasPaused = control_.whilePaused([&] {
    std::optional<std::vector<Force>> held = replay_->forcesHeld(error);
    if (held) shown = ForcesShown{std::move(*held), replay_->position()};
  });
  if (wasPaused) return shown;
  if (!feed_) {
    error = "the replay is moving: the forces are shown where it stops";
    return std::nullopt;
  }
  std::optional<std::vector<Force>> live = feed_->forced(error);
  if (!live) return std::nullopt;
  return ForcesShown{std::move(*live), std::nullopt};
}

std::optional<Timeline> ReplayTarget::timeline(std::string& error) {
  std::optional<Timeline> t = replay_->timeline(error);
  if (t && feed_) {
    t->cycleTime = feed_->cycleTime();
    t->recording = feed_->recording();
  }
  return t;
}

void ReplayTarget::ended() {
  if (feed_) feed_->stop();
}

}  // namespace scanback::dap
