#include "vm/runtime/runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "vm/exec/iec_text.h"

namespace scanback {

Runtime::Runtime(std::shared_ptr<const Program> program) : vm_(program), forceProgram_(std::move(program)) {
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

void Runtime::requestForce(ForceChange change) {
  std::lock_guard lock(forceMutex_);
  forceRequests_.push_back(std::move(change));
  forceRequested_.store(true, std::memory_order_release);
}

std::optional<Force> Runtime::force(std::string_view target, std::string_view value, std::string& error) {
  std::lock_guard lock(forceMutex_);
  std::optional<Force> f = resolveForce(*forceProgram_, target, value, error);
  if (!f) return std::nullopt;
  f->sinceCycle = nextStart_.load(std::memory_order_relaxed);
  forceRequests_.push_back(ForceChange{false, *f});
  forceRequested_.store(true, std::memory_order_release);
  return f;
}

std::optional<std::vector<std::string>> Runtime::release(std::string_view target, std::string& error) {
  std::lock_guard lock(forceMutex_);
  ForceTable table;
  table.assign(forcesShown_);
  for (const ForceChange& c : forceRequests_) static_cast<void>(table.change(c));  // (a release of nothing is none)
  std::vector<Force> released;
  if (target.empty()) {
    released = table.forces();
  } else {
    std::string why;
    const std::optional<VariableLocation> loc = findWritableScalar(*forceProgram_, target, why);
    for (const Force& f : table.forces())
      if (equalsIgnoreCase(f.target, target) || (loc && f.offset == loc->offset && f.bit == loc->bit))
        released.push_back(f);
    if (released.empty()) {
      error = loc ? fmt::format("cannot release '{}': it is not forced", target)
                  : fmt::format("cannot release '{}': {}", target, why);
      return std::nullopt;
    }
  }
  std::vector<std::string> names;
  for (Force& f : released) {
    names.push_back(f.target);
    forceRequests_.push_back(ForceChange{true, std::move(f)});
  }
  if (!names.empty()) forceRequested_.store(true, std::memory_order_release);
  return names;
}

std::vector<Force> Runtime::forces(bool withRequested) const {
  std::lock_guard lock(forceMutex_);
  if (!withRequested || forceRequests_.empty()) return forcesShown_;
  ForceTable table;
  table.assign(forcesShown_);
  for (const ForceChange& c : forceRequests_) static_cast<void>(table.change(c));  // (a release of nothing is none)
  return table.forces();
}

void Runtime::takeForceRequests() {
  // The scan thread never waits: when another thread holds the lock, the requests wait a cycle.
  std::unique_lock lock(forceMutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  forceRequested_.store(false, std::memory_order_relaxed);
  for (ForceChange& c : forceRequests_) {
    c.force.sinceCycle = current_.cycle;
    // A release of storage not forced (released twice, or never forced) changes nothing: not a
    // scan input, not recorded.
    ForceTable after;
    after.assign(forcesShown_);
    if (!after.change(c)) continue;
    forcesShown_ = after.forces();
    forceChanges_.push_back(std::move(c));
  }
  forceRequests_.clear();
}

void Runtime::noteInputAuthor(uint32_t from, uint32_t size, WriteAuthor author) {
  if (from >= inputs_.size()) return;
  const uint32_t end = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{from} + size, inputs_.size()));
  if (inputAuthors_.size() != inputs_.size()) inputAuthors_.assign(inputs_.size(), WriteAuthor::Unknown);
  std::fill(inputAuthors_.begin() + from, inputAuthors_.begin() + end, author);
  inputAuthorsNoted_ = true;
}

void Runtime::startCycle() {
  const Program& p = vm_.program();
  current_ = nextCycle();
  nextStart_.store(current_.cycle + 1, std::memory_order_relaxed);
  forceChanges_.clear();
  if (forceRequested_.load(std::memory_order_acquire)) [[unlikely]]
    takeForceRequests();
  if (hooks_) hooks_->beforeCycle(*this);
  uint8_t* image = vm_.image();
  if (p.input.size) std::memcpy(image + p.input.offset, inputs_.data(), p.input.size);
  if (inputAuthorsNoted_) [[unlikely]] {  // latched: their authors are the recorder's now (beforeCycle)
    std::fill(inputAuthors_.begin(), inputAuthors_.end(), WriteAuthor::Unknown);
    inputAuthorsNoted_ = false;
  }
  for (const ExternalWrite& w : pendingWrites_) applyWrite(image, vm_.imageSize(), w);
  pendingWrites_.clear();
  // Forces last, so that neither the field nor an external write overrides them (a release leaves
  // the forced value in place).
  if (!forceChanges_.empty()) [[unlikely]]
    for (const ForceChange& c : forceChanges_) static_cast<void>(forceTable_.change(c));  // (checked when taken)
  if (!forceTable_.empty()) [[unlikely]]
    forceTable_.apply(image, vm_.imageSize());
  vm_.beginCycle(current_.task, current_.startNs);
}

RunStatus Runtime::run() {
  const RunStatus status = vm_.run();
  if (status == RunStatus::CycleDone) {
    const Program& p = vm_.program();
    if (p.output.size) std::memcpy(outputs_.data(), vm_.image() + p.output.offset, p.output.size);
    // A forced output reaches the field with its forced value, whatever the program wrote (the
    // image keeps what the program wrote until the next cycle start forces it again: the image
    // stays a function of the scan inputs, docs/architecture.md: determinism).
    if (!forceTable_.empty()) [[unlikely]]
      forceTable_.applyToArea(outputs_, p.output.offset);
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
  // Forces stay on what they name: each is found again in the new program by its target (an
  // address stays where it is); one whose target is gone or changed size is released.
  std::vector<Force> kept;
  for (const Force& f : forceTable_.forces()) {
    std::string ignored;  // (counted with the dropped writes)
    const std::optional<VariableLocation> loc = findWritableScalar(p, f.target, ignored);
    if (!loc || loc->bit != f.bit || (f.bit < 0 && loc->type->size != f.bytes.size())) {
      ++dropped;
      continue;
    }
    kept.push_back(f);
    kept.back().offset = loc->offset;
  }
  forceTable_.assign(kept);
  {
    std::lock_guard lock(forceMutex_);
    forcesShown_ = std::move(kept);
    forceProgram_ = next.programPtr();
  }
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
