#include "vm/runtime/runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "vm/exec/iec_text.h"

namespace scanback {

Runtime::Runtime(std::shared_ptr<const Program> program) : vm_(std::move(program)) {
  const Program& p = vm_.program();
  inputs_.assign(p.input.size, 0);
  outputs_.assign(p.output.size, 0);
  releases_.assign(p.tasks.size(), 0);
  stats_.assign(p.tasks.size(), TaskStatistics{});
}

namespace {

// The k-th release of a task (k from 0): k * interval, or the clock's end when that does not fit
// in it. Never overflows, whatever the interval and however long the run.
int64_t releaseTime(uint64_t k, int64_t intervalNs) {
  int64_t release = 0;
  if (__builtin_mul_overflow(k, intervalNs, &release) || release < 0 || release > kClockEndNs) return kClockEndNs;
  return release;
}

}  // namespace

bool checkSchedule(const Program& program, Diagnostics& diagnostics) {
  bool ok = true;
  for (const TaskInfo& t : program.tasks) {
    if (t.intervalNs > kMaxTaskIntervalNs) {
      diagnostics.error(t.span,
                        fmt::format("task '{}': INTERVAL {} is too long: the virtual clock ends at {}, and every "
                                    "task must be released at least {} times before that (an INTERVAL of at most {})",
                                    t.name, formatDuration(t.intervalNs), formatDuration(kClockEndNs),
                                    kClockEndNs / kMaxTaskIntervalNs, formatDuration(kMaxTaskIntervalNs)));
      ok = false;
    } else if (t.intervalNs <= 0) {
      diagnostics.error(t.span, fmt::format("task '{}': INTERVAL must be positive", t.name));
      ok = false;
    }
  }
  return ok;
}

CycleStart Runtime::nextCycle() const {
  const Program& p = vm_.program();
  uint32_t best = 0;
  int64_t bestTime = INT64_MAX;
  for (uint32_t t = 0; t < p.tasks.size(); ++t) {
    const int64_t release = releaseTime(releases_[t], p.tasks[t].intervalNs);
    if (release < bestTime || (release == bestTime && p.tasks[t].priority < p.tasks[best].priority)) {
      best = t;
      bestTime = release;
    }
  }
  return CycleStart{cycle_, best, bestTime};
}

bool Runtime::startAt(uint64_t cycle, uint32_t task, int64_t startNs) {
  const Program& p = vm_.program();
  if (task >= p.tasks.size() || startNs < 0 || startNs == kClockEndNs || startNs % p.tasks[task].intervalNs != 0)
    return false;
  std::vector<uint64_t> releases(p.tasks.size());
  for (uint32_t t = 0; t < p.tasks.size(); ++t) {
    // Releases before startNs, and the one at startNs when the tie goes to t (nextCycle(): the
    // lower PRIORITY, then the task declared first).
    const int64_t interval = p.tasks[t].intervalNs;
    uint64_t n = static_cast<uint64_t>(startNs / interval + (startNs % interval != 0 ? 1 : 0));
    const bool first =
        p.tasks[t].priority < p.tasks[task].priority || (p.tasks[t].priority == p.tasks[task].priority && t < task);
    if (startNs % interval == 0 && first) ++n;
    releases[t] = n;
  }
  const std::vector<uint64_t> saved = releases_;
  const uint64_t savedCycle = cycle_;
  releases_ = std::move(releases);
  cycle_ = cycle;
  const CycleStart next = nextCycle();
  if (next.task != task || next.startNs != startNs) {
    releases_ = saved;
    cycle_ = savedCycle;
    return false;
  }
  return true;
}

void applyWrite(uint8_t* image, uint32_t imageSize, const ExternalWrite& w) {
  if (w.offset >= imageSize || w.bytes.size() > imageSize - w.offset) return;
  if (w.bit >= 0) {
    const uint8_t mask = static_cast<uint8_t>(1u << w.bit);
    image[w.offset] = (!w.bytes.empty() && w.bytes[0]) ? (image[w.offset] | mask) : (image[w.offset] & ~mask);
    return;
  }
  // An empty write (a trace may hold one) writes nothing; memcpy must not see its null data.
  if (!w.bytes.empty()) std::memcpy(image + w.offset, w.bytes.data(), w.bytes.size());
}

void Runtime::startCycle() {
  const Program& p = vm_.program();
  current_ = nextCycle();
  if (hooks_) hooks_->beforeCycle(*this);
  uint8_t* image = vm_.image();
  if (p.input.size) std::memcpy(image + p.input.offset, inputs_.data(), p.input.size);
  for (const ExternalWrite& w : pendingWrites_) applyWrite(image, vm_.imageSize(), w);
  pendingWrites_.clear();
  vm_.beginCycle(current_.task, current_.startNs);
}

RunStatus Runtime::run() {
  const RunStatus status = vm_.run();
  if (status == RunStatus::CycleDone) {
    const Program& p = vm_.program();
    if (p.output.size) std::memcpy(outputs_.data(), vm_.image() + p.output.offset, p.output.size);
    TaskStatistics& s = stats_[current_.task];
    ++s.cycles;
    s.statements += vm_.steps();
    s.maxStatements = std::max(s.maxStatements, vm_.steps());
    totalStatements_ += vm_.steps();
    ++releases_[current_.task];
    ++cycle_;
  }
  if (hooks_ && status != RunStatus::Paused) hooks_->afterCycle(*this, status);
  return status;
}

RunStatus Runtime::runCycle() {
  startCycle();
  return run();
}

size_t Runtime::replaceProgram(std::shared_ptr<const Program> program, const ReloadPlan& plan) {
  Vm next(std::move(program));
  const Program& p = next.program();
  applyReload(plan, vm_.image(), vm_.imageSize(), next.image(), next.imageSize());
  next.setObserver(vm_.observer());
  next.setStatementBudget(vm_.statementBudget());
  size_t dropped = 0;
  std::vector<ExternalWrite> moved;
  for (ExternalWrite& w : pendingWrites_) {
    std::optional<uint32_t> to;
    if (w.bit >= 0) {  // a located BOOL: kept when its bit is
      for (const ReloadPlan::Copy& c : plan.copies)
        if (c.fromBit == w.bit && c.from == w.offset) {
          to = c.to;
          w.bit = c.toBit;
        }
    } else {
      to = plan.relocate(w.offset, static_cast<uint32_t>(std::max<size_t>(w.bytes.size(), 1)));
    }
    if (!to) {
      ++dropped;
      continue;
    }
    w.offset = *to;
    moved.push_back(std::move(w));
  }
  pendingWrites_ = std::move(moved);
  vm_ = std::move(next);
  inputs_.resize(p.input.size, 0);
  outputs_.assign(p.output.size, 0);
  if (p.output.size) std::memcpy(outputs_.data(), vm_.image() + p.output.offset, p.output.size);
  return dropped;
}

std::string Runtime::faultMessage() const {
  const Program& p = vm_.program();
  const FaultInfo& f = vm_.fault();
  std::string where;
  if (f.statement < p.statements.size()) {
    const SourceSpan& s = p.statements[f.statement].span;
    where = fmt::format("{}:{}:{}: ", p.sources.file(s.file).path, s.line, s.column);
  }
  std::string cause(faultText(f.code));
  if (!f.detail.empty()) cause += " (" + f.detail + ")";
  return fmt::format("{}fault: {} (cycle {}, task {})", where, cause, current_.cycle, p.tasks[current_.task].name);
}

}  // namespace scanback
