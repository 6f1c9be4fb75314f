#include "dap/targets/stop_checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "vm/debug/evaluator.h"
#include "vm/runtime/values.h"

namespace scanback::dap {

void StopChecker::take(std::shared_ptr<const StopSet> stops, const Vm* vm) {
  stops_ = std::move(stops);
  at_.clear();
  widths_.clear();
  watched_.clear();
  if (vm) rebase(vm->image(), vm->imageSize());
}

void StopChecker::rebase(const uint8_t* image, uint32_t imageSize) {
  at_.clear();
  widths_.clear();
  size_t total = 0;
  for (const DataWatch& w : stops_->dataWatches) {
    at_.push_back(total);
    widths_.push_back(w.width(imageSize));
    total += widths_.back();
  }
  watched_.assign(total, 0);
  for (size_t i = 0; i < stops_->dataWatches.size(); ++i)
    if (widths_[i]) stops_->dataWatches[i].read(image, watched_.data() + at_[i]);
}

void StopChecker::countHitsFrom(uint64_t cycle, uint64_t step) const {
  for (const auto& bp : stops_->breakpoints)
    if (!bp->countedFrom) bp->countedFrom = std::pair{cycle, step};
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

std::optional<StopInfo> StopChecker::atStatement(const Vm& vm, uint32_t statement, uint64_t step, uint32_t previous) {
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
  if (!widths_.empty()) {
    std::optional<StopInfo::DataChange> change;
    std::vector<int64_t> ids = changedWatches(vm.image(), change);
    if (!ids.empty() && !stop) {
      stop = StopInfo{StopReason::DataBreakpoint, task, std::move(ids), {}};
      // A change seen at step 0 was made by the scan inputs; later, by the statement before.
      change->statement = step == 0 ? UINT32_MAX : previous;
      stop->description = describe(vm, *change);
      stop->change = std::move(change);
    }
  }
  return stop;
}

std::vector<int64_t> StopChecker::atCycleEnd(const Vm& vm, uint32_t last, std::optional<StopInfo::DataChange>& change) {
  std::vector<int64_t> ids = changedWatches(vm.image(), change);
  if (change) change->statement = last;
  return ids;
}

std::vector<int64_t> StopChecker::changedWatches(const uint8_t* image, std::optional<StopInfo::DataChange>& change) {
  std::vector<int64_t> ids;
  for (size_t i = 0; i < widths_.size(); ++i) {
    const DataWatch& w = stops_->dataWatches[i];
    uint8_t* last = watched_.data() + at_[i];
    if (widths_[i] == 0 || w.holds(image, last)) continue;
    if (!change) change = StopInfo::DataChange{w.id, std::vector<uint8_t>(last, last + widths_[i]), UINT32_MAX};
    w.read(image, last);
    ids.push_back(w.id);
  }
  return ids;
}

std::string StopChecker::describe(const Vm& vm, const StopInfo::DataChange& change) const {
  const auto w = std::ranges::find(stops_->dataWatches, change.watch, &DataWatch::id);
  if (w == stops_->dataWatches.end()) return {};
  const Program& program = vm.program();
  // The watch's type, from its name (as setDataBreakpoints resolved it); the values are read at
  // its offset, the one before from a copy of the memory that holds it again.
  std::string error;
  const std::unique_ptr<debug::Expression> e = debug::Expression::compile(program, UINT32_MAX, w->name, error);
  debug::EvalResult where;
  if (!e || !e->evaluate(vm.memory(), vm.memorySize(), {}, where, error) || !where.type || !where.offset ||
      *where.offset != w->offset || change.before.empty() || w->width(vm.memorySize()) != change.before.size())
    return w->name + " changed";
  std::vector<uint8_t> earlier(vm.memory(), vm.memory() + vm.memorySize());
  if (w->bit >= 0)
    earlier[w->offset] =
        static_cast<uint8_t>((earlier[w->offset] & ~(1u << w->bit)) | ((change.before[0] & 1u) << w->bit));
  else
    std::memcpy(earlier.data() + w->offset, change.before.data(), change.before.size());
  const std::string before = formatValue(program, earlier.data(), w->offset, w->bit, *where.type);
  const std::string now = formatValue(program, vm.memory(), w->offset, w->bit, *where.type);
  std::string writer = "scan inputs";
  if (change.statement < program.statements.size()) {
    const SourceSpan& span = program.statements[change.statement].span;
    const std::string& path = span.file < program.sources.size() ? program.sources.file(span.file).path : std::string();
    writer = fmt::format("{}:{}", std::filesystem::path(path).filename().string(), span.line);
  }
  return fmt::format("{}: {} \u2192 {} ({})", w->name, before, now, writer);
}

StopChecker::Search StopChecker::search(const Program& program, bool withLogpoints) const {
  Search out;
  if (!resolvedFor(program)) return out;
  auto add = [&](const std::shared_ptr<const ResolvedBreakpoint>& bp) {
    replay::Breakpoint b;
    b.statement = bp->statement;
    b.hitCondition = bp->hitCondition;
    if (bp->countedFrom) b.countFrom = replay::Position{bp->countedFrom->first, bp->countedFrom->second};
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

std::vector<const ResolvedBreakpoint*> StopChecker::Search::logpoints(const replay::Stop& stop) const {
  std::vector<const ResolvedBreakpoint*> out;
  if (stop.reason != replay::StopReason::Breakpoint || stop.breakpoint < 0) return out;
  std::vector<int> all{stop.breakpoint};
  all.insert(all.end(), stop.others.begin(), stop.others.end());
  for (const int i : all) {
    const size_t at = static_cast<size_t>(i);
    if (at >= breakpointIds_.size() && at - breakpointIds_.size() < logpoints_.size())
      out.push_back(logpoints_[at - breakpointIds_.size()]);
  }
  return out;
}

std::vector<int64_t> StopChecker::Search::ids(const replay::Stop& stop) const {
  if (stop.breakpoint < 0) return {};
  const size_t at = static_cast<size_t>(stop.breakpoint);
  if (stop.reason == replay::StopReason::DataWrite)
    return at < watchIds_.size() ? std::vector{watchIds_[at]} : std::vector<int64_t>{};
  if (stop.reason != replay::StopReason::Breakpoint) return {};
  std::vector<int64_t> out;
  std::vector<int> all{stop.breakpoint};
  all.insert(all.end(), stop.others.begin(), stop.others.end());
  for (const int i : all)
    if (static_cast<size_t>(i) < breakpointIds_.size()) out.push_back(breakpointIds_[static_cast<size_t>(i)]);
  return out;
}

}  // namespace scanback::dap
