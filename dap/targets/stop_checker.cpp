#include "dap/targets/stop_checker.h"

#include <fmt/format.h>

namespace scanback::dap {

void StopChecker::take(std::shared_ptr<const StopSet> stops, const Vm* vm) {
  stops_ = std::move(stops);
  at_.clear();
  widths_.clear();
  size_t total = 0;
  for (const DataWatch& w : stops_->dataWatches) {
    at_.push_back(total);
    widths_.push_back(vm ? w.width(vm->imageSize()) : 0);
    total += widths_.back();
  }
  watched_.assign(total, 0);
  for (size_t i = 0; vm && i < stops_->dataWatches.size(); ++i)
    if (widths_[i]) stops_->dataWatches[i].read(vm->image(), watched_.data() + at_[i]);
}

bool StopChecker::holds(const ResolvedBreakpoint& bp, const Vm& vm) const {
  if (!bp.condition) return true;
  std::string error;
  const std::optional<bool> holds = bp.condition(vm, error);
  if (holds) return *holds;
  if (!bp.conditionErrorLogged) {
    bp.conditionErrorLogged = true;
    listener_.output("console", fmt::format("breakpoint {}: the condition cannot be evaluated ({}); it does not "
                                            "stop, and this is reported once\n",
                                            bp.id, error));
  }
  return false;
}

void StopChecker::log(const ResolvedBreakpoint& bp, const Vm& vm) const {
  listener_.output("console", bp.logMessage(vm) + "\n");
}

std::optional<StopInfo> StopChecker::atStatement(const Vm& vm, uint32_t statement, uint64_t step) {
  const StopSet& stops = *stops_;
  const uint32_t task = vm.currentTask();
  std::optional<StopInfo> stop;
  if (statement < stops.statementHasBreakpoint.size() && stops.statementHasBreakpoint[statement]) {
    std::vector<int64_t> ids;
    for (const auto& bp : stops.breakpoints) {
      if (bp->statement != statement || !holds(*bp, vm)) continue;
      const uint64_t hit = ++bp->hits;
      if (bp->hitCondition && !bp->hitCondition(hit)) continue;
      if (bp->logMessage) {
        log(*bp, vm);
        continue;
      }
      ids.push_back(bp->id);
    }
    if (!ids.empty()) stop = StopInfo{StopReason::Breakpoint, task, std::move(ids), {}};
  }
  if (!stops.dataWatches.empty()) {
    std::vector<int64_t> ids;
    for (size_t i = 0; i < stops.dataWatches.size(); ++i) {
      const DataWatch& w = stops.dataWatches[i];
      uint8_t* last = watched_.data() + at_[i];
      if (widths_[i] == 0 || w.holds(vm.image(), last)) continue;
      w.read(vm.image(), last);
      if (step > 0) ids.push_back(w.id);
    }
    if (!ids.empty() && !stop) stop = StopInfo{StopReason::DataBreakpoint, task, std::move(ids), {}};
  }
  return stop;
}

StopChecker::Search StopChecker::search(const Program& program, bool withLogpoints) const {
  Search out;
  if (!resolvedFor(program)) return out;
  auto add = [&](const std::shared_ptr<const ResolvedBreakpoint>& bp) {
    replay::Breakpoint b;
    b.statement = bp->statement;
    b.hitCondition = bp->hitCondition;
    if (bp->condition) b.condition = [this, bp](const Vm& vm) { return holds(*bp, vm); };
    out.breakpoints.push_back(std::move(b));
  };
  for (const auto& bp : stops_->breakpoints) {
    if (bp->logMessage) continue;
    add(bp);
    out.breakpointIds_.push_back(bp->id);
  }
  for (const auto& bp : stops_->breakpoints) {
    if (!withLogpoints || !bp->logMessage) continue;
    add(bp);
    out.logpoints_.push_back(bp.get());
  }
  for (const DataWatch& w : stops_->dataWatches) {
    out.watches.push_back(w);
    out.watchIds_.push_back(w.id);
  }
  return out;
}

const ResolvedBreakpoint* StopChecker::Search::logpoint(const replay::Stop& stop) const {
  if (stop.reason != replay::StopReason::Breakpoint || stop.breakpoint < 0) return nullptr;
  const size_t at = static_cast<size_t>(stop.breakpoint);
  if (at < breakpointIds_.size() || at - breakpointIds_.size() >= logpoints_.size()) return nullptr;
  return logpoints_[at - breakpointIds_.size()];
}

std::vector<int64_t> StopChecker::Search::ids(const replay::Stop& stop) const {
  if (stop.breakpoint < 0) return {};
  const size_t at = static_cast<size_t>(stop.breakpoint);
  if (stop.reason == replay::StopReason::Breakpoint && at < breakpointIds_.size()) return {breakpointIds_[at]};
  if (stop.reason == replay::StopReason::DataWrite && at < watchIds_.size()) return {watchIds_[at]};
  return {};
}

}  // namespace scanback::dap
