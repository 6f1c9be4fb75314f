// What every target shares of the Target interface, written once over its RunControl: the state
// (paused, finished, the last stop), start, resume, pause, setStops and terminate. A target adds
// what its thread does with a move (carryOut) and what it shows and accepts while paused.
#pragma once

#include <memory>
#include <optional>

#include "dap/targets/run_control.h"
#include "dap/targets/target.h"

namespace scanback::dap {

class ControlledTarget : public Target {
 public:
  void setStops(std::shared_ptr<const StopSet> stops) override;
  void start(bool stopOnEntry) override;
  void resume(ResumeKind kind, uint32_t task) override;
  bool pause(uint32_t task) override { return control_.pause(task); }
  bool paused() const override { return control_.paused(); }
  bool finished() const override { return control_.finished(); }
  std::optional<StopInfo> lastStop() const override { return control_.lastStop(); }
  // Ends the thread, then lets the target finish what it holds (ended()). A final target calls it
  // from its destructor, before its members go: the thread calls into them.
  void terminate() override;

 protected:
  explicit ControlledTarget(TargetListener& listener) : listener_(listener), control_(listener) {}
  ~ControlledTarget() override;

  // The target's thread: carries out one move, publishing where it stopped through control_.
  virtual void carryOut(const Move& move) = 0;
  // Under the control's lock with the thread parked (configuring, paused): the stops changed.
  virtual void stopsChanged(const std::shared_ptr<const StopSet>& /*stops*/) {}
  // Once, after the thread has ended.
  virtual void ended() {}

  TargetListener& listener_;
  RunControl control_;

 private:
  bool ended_ = false;
};

}  // namespace scanback::dap
