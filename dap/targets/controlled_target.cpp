#include "dap/targets/controlled_target.h"

namespace scanback::dap {

ControlledTarget::~ControlledTarget() { control_.terminate(); }

void ControlledTarget::setStops(std::shared_ptr<const StopSet> stops) {
  control_.setStops(std::move(stops), [this](const std::shared_ptr<const StopSet>& s) { stopsChanged(s); });
}

void ControlledTarget::start(bool stopOnEntry) {
  control_.start(Move::start(stopOnEntry), [this] {
    while (const std::optional<Move> move = control_.nextMove()) carryOut(*move);
  });
}

void ControlledTarget::resume(ResumeKind kind, uint32_t task) { control_.post(Move::resumed(kind, task)); }

void ControlledTarget::terminate() {
  control_.terminate();
  if (ended_) return;
  ended_ = true;
  ended();
}

}  // namespace scanback::dap
