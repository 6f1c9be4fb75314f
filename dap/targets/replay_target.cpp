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
