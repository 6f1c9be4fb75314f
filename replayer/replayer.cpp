#include "replayer/replayer.h"

#include <thread>

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "vm/base/assert.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"

namespace scanback::replay {

namespace {

constexpr size_t kCachedCycleSteps = 8;

// Pauses at one boundary.
class PauseAt final : public VmObserver {
 public:
  explicit PauseAt(uint64_t step) : step_(step) {}
  bool onStatement(uint32_t, uint64_t step) override { return step == step_; }

 private:
  uint64_t step_;
};

// Records every boundary of a cycle with its activation.
class StepsRecorder final : public VmObserver {
 public:
  // `limit`: pauses there, recording the boundaries before it only (an open cycle's end).
  explicit StepsRecorder(CycleSteps& out, uint64_t limit = UINT64_MAX) : out_(out), limit_(limit) {
    out_.activationTable.push_back({0, 0, UINT32_MAX});
  }
  bool onStatement(uint32_t statement, uint64_t step) override {
    if (step >= limit_) return true;
    if (!stack_.empty()) stack_.back().current = static_cast<uint32_t>(out_.statements.size());
    out_.statements.push_back(statement);
    out_.activations.push_back(stack_.empty() ? 0 : stack_.back().id);
    return false;
  }
  void onCall(uint32_t pou) override {
    if (stack_.empty()) {  // a program body, called by the task: the top level
      stack_.push_back({0, 0});
      return;
    }
    const uint32_t id = static_cast<uint32_t>(out_.activationTable.size());
    // The caller is at the statement that makes the call.
    out_.activationTable.push_back({stack_.back().id, stack_.back().current, pou});
    stack_.push_back({id, 0});
  }
  void onReturn(uint32_t) override {
    if (!stack_.empty()) stack_.pop_back();
  }

 private:
  struct Level {
    uint32_t id;
    uint32_t current;  // its latest boundary
  };
  CycleSteps& out_;
  uint64_t limit_;
  std::vector<Level> stack_;
};

// The watched bytes (one 0/1 byte for a bit); empty when the range is outside the image.
std::vector<uint8_t> readWatch(const Vm& vm, const Watch& w) {
  std::vector<uint8_t> value(w.width(vm.imageSize()));
  if (!value.empty()) w.read(vm.image(), value.data());
  return value;
}

// Runs beside a replay on the scratch VM and reports every boundary at which a watched range
// differs from the boundary before. The values are compared in place against one flat copy: the
// common case (nothing changed) allocates nothing.
class ChangeScan final : public VmObserver {
 public:
  using Found = std::function<bool(size_t, Change&&)>;  // false: stop
  ChangeScan(const Vm& vm, const std::vector<Watch>& watches, Position until, const Found& found)
      : vm_(vm), watches_(watches), until_(until), found_(found) {
    size_t total = 0;
    for (const Watch& w : watches) {
      at_.push_back(total);
      sizes_.push_back(w.width(vm.imageSize()));
      total += sizes_.back();
    }
    last_.resize(total);
  }
  // Takes the current values as the reference (the values where the scan starts).
  void snapshot() {
    for (size_t i = 0; i < watches_.size(); ++i)
      if (sizes_[i]) watches_[i].read(vm_.image(), last_.data() + at_[i]);
  }
  // The replay enters `cycle` (paused at `statement` when it is resumed in the middle).
  void enter(uint64_t cycle, uint32_t statement) {
    cycle_ = cycle;
    lastStatement_ = statement;
  }
  bool onStatement(uint32_t statement, uint64_t step) override {
    // At boundary `step` the statement before it has run (at step 0: the scan inputs).
    report(Position{cycle_, step}, step == 0, step == 0 ? UINT32_MAX : lastStatement_);
    lastStatement_ = statement;
    return stopped_;
  }
  // The cycle ran to its end after `steps` boundaries.
  void endOfCycle(uint64_t steps) { report(Position{cycle_, steps}, false, lastStatement_); }
  bool stopped() const { return stopped_; }

 private:
  void report(Position p, bool byScanInputs, uint32_t statement) {
    for (size_t i = 0; i < watches_.size(); ++i) {
      const size_t n = sizes_[i];
      if (n == 0) continue;
      uint8_t* last = last_.data() + at_[i];
      if (watches_[i].holds(vm_.image(), last)) continue;
      Change c{p, std::vector<uint8_t>(last, last + n), {}, byScanInputs, statement, static_cast<uint32_t>(i)};
      watches_[i].read(vm_.image(), last);
      c.after.assign(last, last + n);
      if (!stopped_ && p < until_ && !found_(i, std::move(c))) stopped_ = true;
    }
  }
  const Vm& vm_;
  const std::vector<Watch>& watches_;
  Position until_;
  const Found& found_;
  std::vector<size_t> at_;       // per watch: its place in last_
  std::vector<uint32_t> sizes_;  // per watch: bytes compared (0: outside the image)
  std::vector<uint8_t> last_;
  uint64_t cycle_ = 0;
  uint32_t lastStatement_ = UINT32_MAX;
  bool stopped_ = false;
};

std::string hex32(uint32_t v) { return fmt::format("{:08x}", v); }

}  // namespace

bool CycleSet::insert(uint64_t cycle) {
  const uint64_t word = cycle / 64;
  if (words_.empty()) base_ = word;
  if (word < base_) {
    words_.insert(words_.begin(), base_ - word, 0);
    base_ = word;
  }
  if (word - base_ >= words_.size()) words_.resize(word - base_ + 1, 0);
  uint64_t& w = words_[word - base_];
  const uint64_t bit = uint64_t{1} << (cycle % 64);
  if (w & bit) return false;
  w |= bit;
  return true;
}

bool CycleSteps::encloses(uint32_t a, uint32_t of) const {
  for (uint32_t x = of;; x = activationTable[x].parent) {
    if (x == a) return true;
    if (x == 0) return false;
  }
}

// ---------------------------------------------------------------- opening

std::unique_ptr<Replayer> Replayer::open(const std::string& path, const ReplayOptions& options, std::string& error) {
  std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::open(path, error);
  if (!reader) return nullptr;
  return open(std::move(reader), options, error);
}

std::unique_ptr<Replayer> Replayer::open(std::unique_ptr<trace::TraceReader> reader, const ReplayOptions& options,
                                         std::string& error) {
  const trace::HeaderData& h = reader->header();
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind == trace::BlockKind::ProgramChange) {
      error = fmt::format(
          "the trace changes program at cycle {} (hot reload): replaying program changes is not "
          "supported yet",
          b.firstCycle);
      return nullptr;
    }
  }
  std::shared_ptr<const Program> program = options.program;
  if (!program) {
    SourceSet sources;
    for (const SourceFile& f : h.sources) sources.add(f.path, f.text);
    Diagnostics diagnostics;
    CompileOptions compileOptions;
    compileOptions.test = h.options.test;  // a unit test's recording (scanback test --record-failures)
    compileOptions.recordedImageSize = h.imageSize;
    // A dialect only accepts or rejects, never changes a program's meaning: the most accepting one
    // compiles whatever was recorded, in whichever dialect.
    compileOptions.dialect = Dialect::Rusty;
    program = compileProject(sources, diagnostics, compileOptions);
    if (!program) {
      error = "the program recorded in the trace does not compile with this scanback:\n" + diagnostics.format(sources);
      return nullptr;
    }
  }
  if (h.formatVersion < trace::kFirstCodesysStringsVersion && program->storesStrings()) {
    error = fmt::format(
        "the trace was recorded by scanback {} (trace format version {}), which stored a STRING as a "
        "2-byte length and then its characters; this scanback stores it as CODESYS does (the "
        "characters, then a 0 byte; format version {}) and cannot replay a program with strings "
        "recorded the old way: replay it with scanback {}",
        h.scanbackVersion.empty() ? "(unknown)" : h.scanbackVersion, h.formatVersion, trace::kFormatVersion,
        h.scanbackVersion.empty() ? "of that version" : h.scanbackVersion);
    return nullptr;
  }
  if (program->hash != h.programHash) {
    error = fmt::format(
        "the program does not match the trace: the trace was recorded with program {}, this program "
        "is {}",
        h.programHash, program->hash);
    return nullptr;
  }
  if (program->imageSize() != h.imageSize || program->statements.size() != h.statementCount) {
    error = fmt::format(
        "the program compiles differently from the recording: image {} bytes and {} statements "
        "recorded, {} bytes and {} statements now",
        h.imageSize, h.statementCount, program->imageSize(), program->statements.size());
    return nullptr;
  }
  return std::unique_ptr<Replayer>(new Replayer(std::move(reader), std::move(program), options));
}

Replayer::Replayer(std::unique_ptr<trace::TraceReader> reader, std::shared_ptr<const Program> program,
                   const ReplayOptions& options)
    : history_(std::move(reader)), program_(program), options_(options), vm_(program), scratch_(program) {
  const uint64_t budget = history_.header().options.statementBudget;
  if (budget) {
    vm_.setStatementBudget(budget);
    scratch_.setStatementBudget(budget);
  }
}

// ---------------------------------------------------------------- re-execution

bool Replayer::startCycle(Vm& vm, const CycleRecord& record, std::string& error) {
  // Only searches (on the scratch VM) are cut short: the current position is never left half-built.
  if (giveWay_) {
    // A live cycle takes tens of microseconds: wait it out (a replayed cycle takes about one).
    while (giveWay_->load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  if (cancel_ && &vm == &scratch_ && cancel_->load(std::memory_order_relaxed)) {
    error = kCancelled;
    return false;
  }
  if (record.task >= program_->tasks.size()) {
    error = fmt::format("cycle {} names task {}, but the program has {} tasks", record.cycle, record.task,
                        program_->tasks.size());
    return false;
  }
  const uint32_t size = vm.imageSize();
  for (const trace::ImageWriteData* w : record.inputChanges)
    applyWrite(vm.image(), size, ExternalWrite{w->offset, w->bit, w->bytes});
  std::vector<StepWrite> atSteps;  // a debugger's writes inside the cycle: at their boundary
  for (const trace::ImageWriteData* w : record.writes) {
    if (w->atStep == trace::ImageWriteData::kAtCycleStart)
      applyWrite(vm.image(), size, ExternalWrite{w->offset, w->bit, w->bytes});
    else
      atSteps.push_back({static_cast<uint64_t>(w->atStep), ExternalWrite{w->offset, w->bit, w->bytes}});
  }
  // The forces held, last, as Runtime::startCycle applies them.
  for (const trace::ForceData* f : record.forces)
    applyWrite(vm.image(), size, ExternalWrite{f->offset, f->bit, f->bytes});
  stepWriter(vm) = StepWriter(std::move(atSteps));
  vm.beginCycle(record.task, record.startNs);
  return true;
}

RunStatus Replayer::run(Vm& vm) { return stepWriter(vm).run(vm); }

void Replayer::checkDigest(const Vm& vm, const CycleRecord& record, RunStatus status, bool withHash) {
  if (record.open) return;  // it has not ended: there is nothing to compare with yet
  if (withHash ? !verified_.insert(record.cycle) : verified_.contains(record.cycle)) return;
  std::string what;
  DivergenceKind kind = DivergenceKind::StatementCount;
  if (vm.steps() != record.stepCount) {
    what = fmt::format("statement count: recorded {}, replayed {}", record.stepCount, vm.steps());
  } else if (const uint32_t hash = withHash ? static_cast<uint32_t>(XXH3_64bits(vm.image(), vm.imageSize())) : 0;
             withHash && status == RunStatus::CycleDone && hash != record.imageHash) {
    kind = DivergenceKind::ImageHash;
    what = fmt::format("image hash: recorded {}, replayed {}", hex32(record.imageHash), hex32(hash));
  }
  const bool recordedFault = history_.fault() && history_.fault()->cycle == record.cycle;
  if (what.empty() && (status == RunStatus::Faulted) != recordedFault) {
    kind = DivergenceKind::Fault;
    what = status == RunStatus::Faulted
               ? fmt::format("the replay faulted ({}), the recording did not", faultText(vm.fault().code))
               : "the recording faulted here, the replay did not";
  }
  if (!what.empty()) divergences_.push_back({Position{record.cycle, record.stepCount}, kind, what});
}

bool Replayer::restoreBefore(Vm& vm, uint64_t cycle, std::string& error) {
  const std::optional<size_t> index = history_.chunkOf(cycle, error);
  if (!index) return false;
  std::shared_ptr<const trace::ChunkData> chunk = history_.chunk(*index, error);
  if (!chunk) return false;
  if (chunk->keyframe.size() != vm.imageSize()) {
    error = fmt::format("the keyframe of the chunk at byte offset {} has {} bytes, the image {}",
                        history_.chunkBlock(*index).offset, chunk->keyframe.size(), vm.imageSize());
    return false;
  }
  vm.reset();
  uint64_t from = chunk->firstCycle;
  auto it = checkpoints_.upper_bound(cycle);
  if (it != checkpoints_.begin() && std::prev(it)->first >= chunk->firstCycle) {
    --it;
    from = it->first;
    std::memcpy(vm.image(), it->second.data(), vm.imageSize());
  } else {
    std::memcpy(vm.image(), chunk->keyframe.data(), vm.imageSize());
  }
  // Re-execution starts inside the chunk that holds `cycle`, at or before it: every cycle in
  // between is in that chunk, and has its scan inputs there.
  SB_ASSERT(from >= chunk->firstCycle && from <= cycle && cycle - chunk->firstCycle < chunk->cycleCount(),
            "restoring cycle {} from cycle {} in the chunk of cycles {}+{}", cycle, from, chunk->firstCycle,
            chunk->cycleCount());
  for (uint64_t c = from; c < cycle; ++c) {
    std::shared_ptr<const trace::ChunkData> held;
    CycleRecord record;
    if (!history_.cycle(c, held, record, error) || !startCycle(vm, record, error)) return false;
    vm.setObserver(nullptr);
    const RunStatus status = run(vm);
    checkDigest(vm, record, status);
    if (status != RunStatus::CycleDone) {
      error = fmt::format("cycle {} faulted on replay, but the recording goes on to cycle {}: the replay diverged", c,
                          cycle);
      return false;
    }
    // Checkpoints thin out with the distance to the target: 1, 2, 4, 8, ... cycles before it.
    const uint64_t distance = cycle - (c + 1);
    if (distance == 0 || (distance & (distance - 1)) == 0) addCheckpoint(c + 1, vm);
  }
  SB_ASSERT(!vm.inCycle(), "restored the image before cycle {} inside a cycle", cycle);
  return true;
}

void Replayer::addCheckpoint(uint64_t cycle, const Vm& vm) {
  if (checkpoints_.count(cycle)) return;
  try {
    checkpoints_.emplace(cycle, std::vector<uint8_t>(vm.image(), vm.image() + vm.imageSize()));
  } catch (const std::bad_alloc&) {
    // A checkpoint only saves re-execution: without the memory for it the ones held go too, and
    // the replay goes on from keyframes (slower, never wrong).
    checkpoints_.clear();
    return;
  }
  trimCheckpoints(cycle);
}

uint64_t Replayer::checkpointCost() const {
  // The image plus its bookkeeping: a std::map node with the vector (~80 bytes with malloc's
  // header and rounding) and the image's own allocation header (~16).
  constexpr uint64_t kBookkeepingBytes = 96;
  return uint64_t{program_->imageSize()} + kBookkeepingBytes;
}

void Replayer::trimCheckpoints(uint64_t around) {
  while (!checkpoints_.empty() && checkpoints_.size() * checkpointCost() > options_.checkpointBudgetBytes) {
    // Forget the one farthest from where the work is.
    auto first = checkpoints_.begin();
    auto last = std::prev(checkpoints_.end());
    const uint64_t dFirst = around > first->first ? around - first->first : first->first - around;
    const uint64_t dLast = around > last->first ? around - last->first : last->first - around;
    checkpoints_.erase(dFirst >= dLast ? first : last);
  }
}

bool Replayer::seekOn(Vm& vm, Position target, std::string& error) {
  std::shared_ptr<const trace::ChunkData> held;
  CycleRecord record;
  if (!history_.cycle(target.cycle, held, record, error)) return false;
  const bool faulted = history_.fault() && history_.fault()->cycle == target.cycle;
  const bool noEnd = faulted || record.open;  // a faulted cycle has no end; an open one none yet
  const uint64_t last = noEnd ? record.stepCount - 1 : record.stepCount;
  if (target.step > last || (noEnd && record.stepCount == 0)) {
    const char* why = faulted       ? " and ends in a fault"
                      : record.open ? " and has gone no further (the recording finished inside it)"
                                    : "";
    error =
        fmt::format("cycle {} has {} steps{}: step {} is not in it", target.cycle, record.stepCount, why, target.step);
    return false;
  }
  if (!restoreBefore(vm, target.cycle, error) || !startCycle(vm, record, error)) return false;
  if (target.step == record.stepCount) {
    vm.setObserver(nullptr);
    const RunStatus status = run(vm);
    checkDigest(vm, record, status);
    return true;
  }
  PauseAt pause(target.step);
  vm.setObserver(&pause);
  const RunStatus status = run(vm);
  vm.setObserver(nullptr);
  if (status != RunStatus::Paused) {
    checkDigest(vm, record, status);
    error = fmt::format("cycle {} ended after {} steps on replay before reaching step {}: the replay diverged",
                        target.cycle, vm.steps(), target.step);
    return false;
  }
  // Paused by PauseAt, at a boundary: what statement() and the debugger's frames read.
  SB_ASSERT(vm.inCycle() && vm.pausedStatement() != UINT32_MAX, "seek to ({}, {}) did not stop at a statement",
            target.cycle, target.step);
  return true;
}

bool Replayer::seek(Position target, std::string& error) {
  if (seekOn(vm_, target, error)) {
    position_ = target;
    positioned_ = true;
    return true;
  }
  // A seek can fail after it moved the VM (a cycle that replays shorter than recorded): back to
  // where position() says, so that the state shown is still the state of that position.
  if (positioned_) {
    std::string again;
    if (!seekOn(vm_, position_, again)) positioned_ = false;
  }
  return false;
}

uint32_t Replayer::statement() const { return positioned_ && vm_.inCycle() ? vm_.pausedStatement() : UINT32_MAX; }

const CycleSteps* Replayer::steps(uint64_t cycle, std::string& error) {
  for (auto it = stepsCache_.begin(); it != stepsCache_.end(); ++it) {
    if (it->cycle == cycle) {
      stepsCache_.splice(stepsCache_.begin(), stepsCache_, it);
      return &stepsCache_.front();
    }
  }
  std::shared_ptr<const trace::ChunkData> held;
  CycleRecord record;
  if (!history_.cycle(cycle, held, record, error)) return nullptr;
  if (!restoreBefore(scratch_, cycle, error) || !startCycle(scratch_, record, error)) return nullptr;
  CycleSteps s;
  s.cycle = cycle;
  s.task = record.task;
  StepsRecorder recorder(s, record.open ? record.stepCount : UINT64_MAX);
  scratch_.setObserver(&recorder);
  const RunStatus status = run(scratch_);
  scratch_.setObserver(nullptr);
  checkDigest(scratch_, record, status);
  s.faulted = status == RunStatus::Faulted && !record.open;
  s.open = record.open;
  // An open cycle is replayed up to where it has got: StepsRecorder stops it there.
  SB_ASSERT(!s.open || s.count() <= record.stepCount, "open cycle {}: {} boundaries, {} recorded", cycle, s.count(),
            record.stepCount);
  SB_ASSERT(s.activations.size() == s.statements.size(), "cycle {}: {} activations for {} boundaries", cycle,
            s.activations.size(), s.statements.size());
  stepsCache_.push_front(std::move(s));
  if (stepsCache_.size() > kCachedCycleSteps) stepsCache_.pop_back();
  return &stepsCache_.front();
}

void Replayer::setOpenCycle(const OpenCycle* open) {
  if (history_.hasOpenChunk()) forgetCycle(history_.endCycle() - 1);
  history_.setOpenChunk(open ? History::openChunk(*open) : nullptr);
}

bool Replayer::refresh() {
  const std::optional<uint64_t> open = history_.hasOpenChunk() ? std::optional(history_.endCycle() - 1) : std::nullopt;
  if (!history_.refresh()) return false;
  if (open) forgetCycle(*open);  // recorded now, or to be replaced
  return true;
}

void Replayer::forgetCycle(uint64_t cycle) {
  stepsCache_.remove_if([&](const CycleSteps& s) { return s.cycle == cycle; });
  runsInChunk_.clear();  // chunk indexes may have shifted
  for (auto it = checkpoints_.upper_bound(cycle); it != checkpoints_.end();) it = checkpoints_.erase(it);
}

// ---------------------------------------------------------------- the recording's extent

std::optional<Position> Replayer::start() const {
  if (history_.empty()) return std::nullopt;
  return Position{history_.firstCycle(), 0};
}

std::optional<Position> Replayer::lastBoundary(uint64_t cycle, std::string& error) {
  std::shared_ptr<const trace::ChunkData> held;
  CycleRecord record;
  if (!history_.cycle(cycle, held, record, error)) return std::nullopt;
  return Position{cycle, record.stepCount ? record.stepCount - 1 : 0};
}

std::optional<Position> Replayer::end() {
  if (history_.empty()) return std::nullopt;
  std::string error;
  const uint64_t last = history_.endCycle() - 1;
  std::shared_ptr<const trace::ChunkData> held;
  CycleRecord record;
  if (!history_.cycle(last, held, record, error)) return std::nullopt;
  const bool faulted = history_.fault() && history_.fault()->cycle == last;
  if (endAtCycleEnd_ && !record.open && !faulted) return Position{last, record.stepCount};
  return Position{last, record.stepCount ? record.stepCount - 1 : 0};
}

std::optional<uint64_t> Replayer::nextCycleOfTask(uint64_t cycle, uint32_t task) {
  std::string error;
  for (size_t i = 0; i < history_.chunkCount(); ++i) {
    const trace::BlockInfo& b = history_.chunkBlock(i);
    if (b.firstCycle + b.cycleCount <= cycle + 1) continue;
    std::shared_ptr<const trace::ChunkData> chunk = history_.chunk(i, error);
    if (!chunk) return std::nullopt;
    for (uint64_t c = std::max(cycle + 1, chunk->firstCycle); c < chunk->firstCycle + chunk->cycleCount(); ++c)
      if (chunk->tasks[c - chunk->firstCycle] == task) return c;
  }
  return std::nullopt;
}

std::optional<uint64_t> Replayer::previousCycleOfTask(uint64_t cycle, uint32_t task) {
  std::string error;
  for (size_t i = history_.chunkCount(); i-- > 0;) {
    const trace::BlockInfo& b = history_.chunkBlock(i);
    if (b.firstCycle >= cycle) continue;
    std::shared_ptr<const trace::ChunkData> chunk = history_.chunk(i, error);
    if (!chunk) return std::nullopt;
    for (uint64_t c = std::min(cycle, chunk->firstCycle + chunk->cycleCount()); c-- > chunk->firstCycle;)
      if (chunk->tasks[c - chunk->firstCycle] == task) return c;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- stops

std::optional<Stop> Replayer::stopAt(Position target, StopReason reason, std::string& error, int breakpoint,
                                     std::string note) {
  if (!seek(target, error)) return std::nullopt;
  return Stop{target, reason, breakpoint, std::move(note), {}, {}};
}

bool Replayer::conditionHolds(const Breakpoint& bp, Position at, std::string& error) {
  if (!bp.condition) return true;
  if (!seekOn(scratch_, at, error)) return false;
  return bp.condition(scratch_);
}

std::vector<uint64_t> Replayer::candidateCycles(const trace::ChunkData& chunk,
                                                const std::vector<uint32_t>& statements) {
  std::vector<uint64_t> candidates;
  if (chunk.paths.empty()) {
    for (uint32_t k = 0; k < chunk.cycleCount(); ++k) candidates.push_back(chunk.firstCycle + k);
    return candidates;
  }
  for (const auto& [cycle, count] : trace::cyclesExecuting(chunk, statements)) candidates.push_back(cycle);
  for (uint32_t k = 0; k < chunk.cycleCount(); ++k)  // cycles whose path was too long to record
    if (chunk.paths[k] == trace::kNoPath) candidates.push_back(chunk.firstCycle + k);
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

std::optional<uint64_t> Replayer::hitsBefore(const Breakpoint& bp, Position p, std::string& error) {
  uint64_t hits = 0;
  const Position from = bp.countFrom;  // hits before it are not counted
  if (!(from < p)) return hits;
  const std::vector<uint32_t> statements{bp.statement};
  // The runs in one recorded cycle at steps [first, below), each checked against the condition.
  auto countIn = [&](uint64_t cycle, uint64_t first, uint64_t below) -> bool {
    const CycleSteps* s = steps(cycle, error);
    if (!s) return false;
    const CycleSteps copy = *s;  // steps() may evict while conditions seek
    for (uint64_t k = first; k < std::min<uint64_t>(below, copy.count()); ++k) {
      if (copy.statements[k] != bp.statement) continue;
      const bool holds = conditionHolds(bp, Position{cycle, k}, error);
      if (!error.empty()) return false;
      hits += holds;
    }
    return true;
  };
  for (size_t i = 0; i < history_.chunkCount(); ++i) {
    const trace::BlockInfo& b = history_.chunkBlock(i);
    if (b.firstCycle > p.cycle) break;
    if (b.firstCycle + b.cycleCount <= from.cycle) continue;
    const bool whole = b.firstCycle + b.cycleCount <= p.cycle && from <= Position{b.firstCycle, 0};
    std::shared_ptr<const trace::ChunkData> chunk;
    // Without a condition, a whole chunk with complete paths counts from its paths alone.
    if (whole && !bp.condition) {
      if (auto it = runsInChunk_.find({i, bp.statement}); it != runsInChunk_.end()) {
        hits += it->second;
        continue;
      }
      if (!(chunk = history_.chunk(i, error))) return std::nullopt;
      const bool complete = !chunk->paths.empty() &&
                            std::find(chunk->paths.begin(), chunk->paths.end(), trace::kNoPath) == chunk->paths.end();
      if (complete) {
        uint64_t runs = 0;
        for (const auto& [cycle, count] : trace::cyclesExecuting(*chunk, bp.statement)) runs += count;
        runsInChunk_[{i, bp.statement}] = runs;
        hits += runs;
        continue;
      }
    }
    if (!chunk && !(chunk = history_.chunk(i, error))) return std::nullopt;
    for (uint64_t cycle : candidateCycles(*chunk, statements)) {
      if (cycle > p.cycle) break;
      if (cycle < from.cycle) continue;
      if (!countIn(cycle, cycle == from.cycle ? from.step : 0, cycle == p.cycle ? p.step : UINT64_MAX))
        return std::nullopt;
    }
  }
  return hits;
}

std::optional<Stop> Replayer::breakpointBetween(const std::vector<Breakpoint>& breakpoints, Position from, Position to,
                                                bool forward, std::string& error) {
  if (breakpoints.empty() || history_.empty()) return std::nullopt;
  std::vector<uint32_t> statements;
  for (const Breakpoint& bp : breakpoints) statements.push_back(bp.statement);
  std::sort(statements.begin(), statements.end());
  statements.erase(std::unique(statements.begin(), statements.end()), statements.end());
  const Position lo = forward ? from : to, hi = forward ? to : from;  // search strictly between lo and hi
  // Hit numbers of the breakpoints with a hit condition: going forward, the hits up to lo, counted
  // up at each hit; going back, the hits before hi, counted down. Found when first needed.
  std::vector<std::optional<uint64_t>> hitCounts(breakpoints.size());
  auto stopsAt = [&](size_t j, Position at) -> bool {
    const Breakpoint& bp = breakpoints[j];
    // Numbered hits begin where the breakpoint was set: one with a hit condition stops at none before.
    if (bp.hitCondition && at < bp.countFrom) return false;
    const bool holds = conditionHolds(bp, at, error);
    if (!error.empty() || !holds) return false;
    if (!bp.hitCondition) return true;
    std::optional<uint64_t>& count = hitCounts[j];
    if (!count) {
      count = hitsBefore(bp, forward ? Position{lo.cycle, lo.step + 1} : hi, error);
      if (!count) return false;
    }
    const uint64_t number = forward ? ++*count : (*count)--;
    return bp.hitCondition(number);
  };
  const size_t chunks = history_.chunkCount();
  for (size_t n = 0; n < chunks; ++n) {
    const size_t i = forward ? n : chunks - 1 - n;
    const trace::BlockInfo& b = history_.chunkBlock(i);
    if (b.firstCycle + b.cycleCount <= lo.cycle || b.firstCycle > hi.cycle) continue;
    std::shared_ptr<const trace::ChunkData> chunk = history_.chunk(i, error);
    if (!chunk) return std::nullopt;
    // Only the cycles whose recorded path runs a breakpoint's statement are replayed.
    std::vector<uint64_t> candidates = candidateCycles(*chunk, statements);
    if (!forward) std::reverse(candidates.begin(), candidates.end());
    for (uint64_t cycle : candidates) {
      if (cycle < lo.cycle || cycle > hi.cycle) continue;
      const CycleSteps* s = steps(cycle, error);
      if (!s) return std::nullopt;
      const int64_t first = cycle == lo.cycle ? static_cast<int64_t>(lo.step) + 1 : 0;
      const int64_t last = cycle == hi.cycle ? static_cast<int64_t>(hi.step) - 1 : int64_t{s->count()} - 1;
      const CycleSteps copy = *s;  // steps() may evict while conditions seek
      for (int64_t k = forward ? first : last; forward ? k <= last : k >= first; k += forward ? 1 : -1) {
        const uint32_t statement = copy.statements[static_cast<size_t>(k)];
        if (!std::binary_search(statements.begin(), statements.end(), statement)) continue;
        std::vector<int> stopping;
        for (size_t j = 0; j < breakpoints.size(); ++j) {
          if (breakpoints[j].statement != statement) continue;
          // Every breakpoint on the statement is evaluated (its hit count moves) even after one stops.
          const bool stops = stopsAt(j, Position{cycle, static_cast<uint64_t>(k)});
          if (!error.empty()) return std::nullopt;
          if (stops) stopping.push_back(static_cast<int>(j));
        }
        if (!stopping.empty()) {
          Stop hit{Position{cycle, static_cast<uint64_t>(k)}, StopReason::Breakpoint, stopping.front(), {}, {}, {}};
          hit.others.assign(stopping.begin() + 1, stopping.end());
          return hit;
        }
      }
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- forward

namespace {
const char* kEndNote = "the end of the recording was reached";
const char* kStartNote = "the start of the recording was reached";
}  // namespace

uint32_t Replayer::activationAt(const CycleSteps& s, uint64_t step) {
  return step < s.count() ? s.activations[step] : 0;  // the end of a cycle is at the top level
}

std::optional<Stop> Replayer::moveBackTowards(std::optional<Position> target,
                                              const std::vector<Breakpoint>& breakpoints, std::string& error) {
  // Without a target the move runs to the start of the recording; a breakpoint on the way stops it
  // first.
  const Position bound = target ? *target : Position{history_.firstCycle(), 0};
  if (auto hit = breakpointBetween(breakpoints, position_, bound, false, error))
    return stopAt(hit->position, StopReason::Breakpoint, error, hit->breakpoint);
  if (!error.empty()) return std::nullopt;
  if (!target) return stopAtEdge(false, error);
  return stopAt(*target, StopReason::Step, error);
}

std::optional<Stop> Replayer::moveForwardTowards(std::optional<Position> target,
                                                 const std::vector<Breakpoint>& breakpoints,
                                                 const std::vector<Watch>& watches, std::string& error) {
  const std::optional<Position> last = end();
  if (!last) {
    error = "the trace has no recorded cycle";
    return std::nullopt;
  }
  // One boundary past the target (or the end), so that a stop there is reported as what it is.
  const Position until = target ? *target : *last;
  const Position bound{until.cycle, until.step + 1};
  std::optional<Stop> hit = breakpointBetween(breakpoints, position_, bound, true, error);
  if (!error.empty()) return std::nullopt;
  if (!watches.empty()) {
    std::optional<Change> change;
    if (!scanChanges(
            watches, position_, hit ? hit->position : bound,
            [&](size_t, Change&& c) {
              change = std::move(c);
              return false;
            },
            error))
      return std::nullopt;
    // (A change found at a breakpoint's position is not looked for: the breakpoint stops there.)
    if (change) {
      std::optional<Stop> stop =
          stopAt(change->position, StopReason::DataWrite, error, static_cast<int>(change->watch));
      if (stop) stop->change = std::move(change);
      return stop;
    }
  }
  if (hit) {
    std::optional<Stop> stop = stopAt(hit->position, StopReason::Breakpoint, error, hit->breakpoint);
    if (stop) stop->others = std::move(hit->others);
    return stop;
  }
  if (!target) return stopAtEdge(true, error);  // never backwards, from past the last statement
  return stopAt(*target, StopReason::Step, error);
}

std::optional<Stop> Replayer::stopAtEdge(bool forward, std::string& error) {
  const std::optional<Position> edge = forward ? end() : start();
  Position to = position_;
  if (edge && (forward ? *edge > position_ : *edge < position_)) to = *edge;
  return stopAt(to, forward ? StopReason::End : StopReason::Start, error, -1, forward ? kEndNote : kStartNote);
}

std::optional<Stop> Replayer::stepIn(const std::vector<Breakpoint>& breakpoints, const std::vector<Watch>& watches,
                                     std::string& error) {
  const CycleSteps* s = steps(position_.cycle, error);
  if (!s) return std::nullopt;
  std::optional<Position> target;
  if (position_.step + 1 < s->count())
    target = Position{position_.cycle, position_.step + 1};
  else if (const std::optional<uint64_t> next = nextCycleOfTask(position_.cycle, s->task))
    target = Position{*next, 0};
  return moveForwardTowards(target, breakpoints, watches, error);
}

std::optional<Stop> Replayer::stepOver(const std::vector<Breakpoint>& breakpoints, const std::vector<Watch>& watches,
                                       std::string& error) {
  const CycleSteps* s = steps(position_.cycle, error);
  if (!s) return std::nullopt;
  const uint32_t here = activationAt(*s, position_.step);
  std::optional<Position> target;
  for (uint64_t q = position_.step + 1; q < s->count(); ++q) {
    if (s->encloses(s->activations[q], here)) {
      target = Position{position_.cycle, q};
      break;
    }
  }
  const uint32_t task = s->task;
  if (!target) {
    if (const std::optional<uint64_t> next = nextCycleOfTask(position_.cycle, task)) target = Position{*next, 0};
  }
  return moveForwardTowards(target, breakpoints, watches, error);
}

std::optional<Stop> Replayer::stepOut(const std::vector<Breakpoint>& breakpoints, const std::vector<Watch>& watches,
                                      std::string& error) {
  const CycleSteps* s = steps(position_.cycle, error);
  if (!s) return std::nullopt;
  const uint32_t here = activationAt(*s, position_.step);
  std::optional<Position> target;
  if (here != 0) {
    for (uint64_t q = position_.step + 1; q < s->count(); ++q) {
      if (s->activations[q] != here && s->encloses(s->activations[q], here)) {
        target = Position{position_.cycle, q};
        break;
      }
    }
  }
  const uint32_t task = s->task;
  if (!target) {
    if (const std::optional<uint64_t> next = nextCycleOfTask(position_.cycle, task)) target = Position{*next, 0};
  }
  return moveForwardTowards(target, breakpoints, watches, error);
}

std::optional<Stop> Replayer::continueForward(const std::vector<Breakpoint>& breakpoints,
                                              const std::vector<Watch>& watches, std::string& error) {
  return moveForwardTowards(std::nullopt, breakpoints, watches, error);
}

// ---------------------------------------------------------------- backward

std::optional<Stop> Replayer::stepBack(const std::vector<Breakpoint>& breakpoints, std::string& error) {
  const CycleSteps* s = steps(position_.cycle, error);
  if (!s) return std::nullopt;
  const uint32_t here = activationAt(*s, position_.step);
  std::optional<Position> target;
  for (uint64_t q = std::min<uint64_t>(position_.step, s->count()); q-- > 0;) {
    if (s->encloses(s->activations[q], here)) {
      target = Position{position_.cycle, q};
      break;
    }
  }
  const uint32_t task = s->task;
  if (!target) {
    // The last top-level statement of the task's previous cycle.
    if (const std::optional<uint64_t> previous = previousCycleOfTask(position_.cycle, task)) {
      const CycleSteps* p = steps(*previous, error);
      if (!p) return std::nullopt;
      for (uint64_t q = p->count(); q-- > 0;) {
        if (p->activations[q] == 0) {
          target = Position{*previous, q};
          break;
        }
      }
    }
  }
  return moveBackTowards(target, breakpoints, error);
}

std::optional<Stop> Replayer::reverseStepIn(const std::vector<Breakpoint>&, std::string& error) {
  const CycleSteps* s = steps(position_.cycle, error);
  if (!s) return std::nullopt;
  if (position_.step > 0) {
    return stopAt({position_.cycle, std::min<uint64_t>(position_.step, s->count()) - 1}, StopReason::Step, error);
  }
  const std::optional<uint64_t> previous = previousCycleOfTask(position_.cycle, s->task);
  if (!previous) return stopAtEdge(false, error);
  const std::optional<Position> last = lastBoundary(*previous, error);
  if (!last) return std::nullopt;
  return stopAt(*last, StopReason::Step, error);
}

std::optional<Stop> Replayer::reverseStepOut(const std::vector<Breakpoint>& breakpoints, std::string& error) {
  const CycleSteps* s = steps(position_.cycle, error);
  if (!s) return std::nullopt;
  const uint32_t here = activationAt(*s, position_.step);
  std::optional<Position> target;
  if (here != 0) {
    target = Position{position_.cycle, s->activationTable[here].callStep};
  } else if (position_.step > 0) {
    target = Position{position_.cycle, 0};
  } else if (const std::optional<uint64_t> previous = previousCycleOfTask(position_.cycle, s->task)) {
    target = Position{*previous, 0};
  }
  return moveBackTowards(target, breakpoints, error);
}

std::optional<Stop> Replayer::reverseContinue(const std::vector<Breakpoint>& breakpoints,
                                              const std::vector<Watch>& watches, std::string& error) {
  const std::optional<Position> first = start();
  if (!first) {
    error = "the trace has no recorded cycle";
    return std::nullopt;
  }
  // Positions before (first cycle, 0) do not exist: search strictly between "one before" and here.
  std::optional<Stop> hit;
  if (position_ > *first) {
    hit = breakpointBetween(breakpoints, position_, *first, false, error);
    if (!error.empty()) return std::nullopt;
    if (!hit) {  // the first boundary itself
      const CycleSteps* s = steps(first->cycle, error);
      if (!s) return std::nullopt;
      for (size_t j = 0; j < breakpoints.size() && s->count() > 0; ++j) {
        const Breakpoint& bp = breakpoints[j];
        if (bp.statement != s->statements[0]) continue;
        const bool holds = conditionHolds(bp, *first, error);
        if (!error.empty()) return std::nullopt;
        // The recording's first hit (none is numbered when the breakpoint was set after it).
        if (holds && (!bp.hitCondition || (!(*first < bp.countFrom) && bp.hitCondition(1)))) {
          hit = Stop{*first, StopReason::Breakpoint, static_cast<int>(j), {}, {}, {}};
          break;
        }
      }
    }
  }
  if (!watches.empty()) {
    std::vector<Change> changes = lastChangesOf(watches, position_, 1, hit ? hit->position : *first, error);
    if (!error.empty()) return std::nullopt;
    if (!changes.empty() && (!hit || changes.front().position > hit->position)) {
      std::optional<Stop> stop =
          stopAt(changes.front().position, StopReason::DataWrite, error, static_cast<int>(changes.front().watch));
      if (stop) stop->change = std::move(changes.front());
      return stop;
    }
  }
  if (hit) return stopAt(hit->position, StopReason::Breakpoint, error, hit->breakpoint);
  return stopAt(*first, StopReason::Start, error, -1, kStartNote);
}

// ---------------------------------------------------------------- data changes

bool Replayer::scanChanges(const std::vector<Watch>& watches, Position from, Position until,
                           const std::function<bool(size_t, Change&&)>& found, std::string& error) {
  if (!seekOn(scratch_, from, error)) return false;
  ChangeScan scan(scratch_, watches, until, found);
  scan.snapshot();
  uint64_t cycle = from.cycle;
  scan.enter(cycle, scratch_.inCycle() ? scratch_.pausedStatement() : UINT32_MAX);
  scratch_.setObserver(&scan);
  auto finishCycle = [&]() -> bool {
    // Runs the current cycle to its end, reporting changes at every boundary and at the end.
    const RunStatus status = run(scratch_);
    if (status == RunStatus::Paused) return false;  // stopped by `found`
    std::shared_ptr<const trace::ChunkData> held;
    CycleRecord record;
    if (history_.cycle(cycle, held, record, error)) {
      scan.endOfCycle(scratch_.steps());
      checkDigest(scratch_, record, status);
    }
    return status == RunStatus::CycleDone && !scan.stopped();
  };
  bool ok = true;
  if (scratch_.inCycle()) ok = finishCycle();
  while (ok) {
    uint64_t next = cycle + 1;
    if (!(Position{next, 0} < until)) break;
    // Whole chunks in which no watched byte changes are passed over (the write index): the next
    // chunk's keyframe is the image they leave, so the values compared against stay the same.
    uint64_t pastSkipped = next;
    for (;;) {
      std::string notThere;
      const std::optional<size_t> index = history_.chunkOf(pastSkipped, notThere);
      if (!index || history_.chunkBlock(*index).firstCycle != pastSkipped || chunkMayChange(*index, watches)) break;
      pastSkipped += history_.chunkBlock(*index).cycleCount;
    }
    if (pastSkipped != next) {
      if (!(Position{pastSkipped, 0} < until)) break;
      std::string notThere;
      if (history_.chunkOf(pastSkipped, notThere)) {
        scratch_.setObserver(nullptr);
        if (!restoreBefore(scratch_, pastSkipped, error)) return false;
        scratch_.setObserver(&scan);
        cycle = pastSkipped - 1;
        continue;
      }
      cycle = pastSkipped - 1;  // a gap or the end follows: handled below as from the cycle before it
      next = pastSkipped;
    }
    std::string ignored;
    std::shared_ptr<const trace::ChunkData> held;
    CycleRecord record;
    if (!history_.cycle(next, held, record, ignored)) {
      // A gap or the end: go on after the gap from its keyframe (a change inside a gap is unknown).
      std::optional<uint64_t> after;
      for (size_t i = 0; i < history_.chunkCount(); ++i)
        if (history_.chunkBlock(i).firstCycle > next) {
          after = history_.chunkBlock(i).firstCycle;
          break;
        }
      if (!after || !(Position{*after, 0} < until)) break;
      scratch_.setObserver(nullptr);
      if (!restoreBefore(scratch_, *after, error)) return false;
      scratch_.setObserver(&scan);
      scan.snapshot();
      cycle = *after;
      if (!history_.cycle(cycle, held, record, error)) break;
    } else {
      cycle = next;
    }
    if (!startCycle(scratch_, record, error)) {
      scratch_.setObserver(nullptr);
      return false;
    }
    scan.enter(cycle, UINT32_MAX);
    ok = finishCycle();
  }
  scratch_.setObserver(nullptr);
  return error.empty();
}

std::vector<Change> Replayer::lastChangesOf(const std::vector<Watch>& watches, Position before, size_t count,
                                            Position notBefore, std::string& error) {
  // Newest first, in windows going back: first the few cycles just before `before` (a recent
  // write is found there, and the checkpoints near the current position make it cheap), then the
  // rest of each chunk in one pass from its keyframe.
  constexpr uint64_t kRecentCycles = 32;
  std::vector<Change> result;
  bool recentWindow = true;
  for (size_t n = history_.chunkCount(); n-- > 0 && result.size() < count;) {
    const trace::BlockInfo& b = history_.chunkBlock(n);
    if (b.firstCycle > before.cycle) continue;
    if (b.firstCycle + b.cycleCount <= notBefore.cycle) break;
    if (!chunkMayChange(n, watches)) {
      recentWindow = false;
      continue;
    }
    Position end = std::min(before, Position{b.firstCycle + b.cycleCount, 0});
    while (result.size() < count && Position{b.firstCycle, 0} < end) {
      const uint64_t lastCycle = end.step > 0 ? end.cycle : end.cycle - 1;
      uint64_t from = b.firstCycle;
      if (recentWindow && lastCycle + 1 - b.firstCycle > kRecentCycles) from = lastCycle + 1 - kRecentCycles;
      recentWindow = false;
      if (notBefore.cycle <= lastCycle) from = std::max(from, notBefore.cycle);
      std::vector<Change> inWindow;
      if (!scanChangesFrom(watches, from, end, inWindow, error)) return result;
      for (auto it = inWindow.rbegin(); it != inWindow.rend() && result.size() < count; ++it)
        if (!(it->position < notBefore) && it->position < before) result.push_back(std::move(*it));
      if (from == b.firstCycle || from <= notBefore.cycle) break;
      end = Position{from, 0};
    }
  }
  return result;
}

bool Replayer::scanChangesFrom(const std::vector<Watch>& watches, uint64_t fromCycle, Position until,
                               std::vector<Change>& out, std::string& error) {
  // The image before `fromCycle`, then every change from its first boundary on.
  if (!restoreBefore(scratch_, fromCycle, error)) return false;
  std::vector<std::vector<uint8_t>> before;
  for (const Watch& w : watches) before.push_back(readWatch(scratch_, w));
  std::string local;
  if (!seekOn(scratch_, Position{fromCycle, 0}, local)) {
    error = local;
    return false;
  }
  // What the first cycle's scan inputs changed.
  for (size_t i = 0; i < watches.size(); ++i) {
    const std::vector<uint8_t> now = readWatch(scratch_, watches[i]);
    if (now != before[i] && Position{fromCycle, 0} < until)
      out.push_back(Change{Position{fromCycle, 0}, before[i], now, true, UINT32_MAX, static_cast<uint32_t>(i)});
  }
  return scanChanges(
      watches, Position{fromCycle, 0}, until,
      [&](size_t, Change&& c) {
        out.push_back(std::move(c));
        return true;
      },
      error);
}

bool Replayer::chunkMayChange(size_t index, const std::vector<Watch>& watches) {
  if (!options_.useWriteIndex) return true;
  const trace::WriteIndex* written = history_.writeIndex(index);
  if (!written) return true;
  for (const Watch& w : watches)
    if (trace::writeIndexTouches(*written, w.offset, w.bit >= 0 ? 1u : std::max<uint32_t>(w.size, 1))) return true;
  ++chunksSkipped_;
  return false;
}

bool Replayer::changesFrom(const std::vector<Watch>& watches, uint64_t fromCycle, Position until,
                           std::vector<std::vector<uint8_t>>& initial,
                           const std::function<bool(size_t, Change&&)>& found, std::string& error) {
  if (!restoreBefore(scratch_, fromCycle, error)) return false;
  initial.clear();
  for (const Watch& w : watches) initial.push_back(readWatch(scratch_, w));
  if (!seekOn(scratch_, Position{fromCycle, 0}, error)) return false;
  // What the first cycle's scan inputs changed.
  for (size_t i = 0; i < watches.size(); ++i) {
    std::vector<uint8_t> now = readWatch(scratch_, watches[i]);
    if (now != initial[i] && Position{fromCycle, 0} < until &&
        !found(i,
               Change{Position{fromCycle, 0}, initial[i], std::move(now), true, UINT32_MAX, static_cast<uint32_t>(i)}))
      return true;
  }
  return scanChanges(watches, Position{fromCycle, 0}, until, found, error);
}

bool Replayer::cycleEnds(const std::vector<Watch>& watches, uint64_t first, uint64_t last,
                         const std::function<bool(uint64_t, int64_t, const uint8_t*)>& atEnd, std::string& error) {
  for (size_t n = 0; n < history_.chunkCount(); ++n) {
    const trace::BlockInfo& b = history_.chunkBlock(n);
    if (b.firstCycle + b.cycleCount <= first) continue;
    if (b.firstCycle > last) break;
    const uint64_t from = std::max(first, b.firstCycle);
    const uint64_t to = std::min(last, b.firstCycle + b.cycleCount - 1);
    std::shared_ptr<const trace::ChunkData> chunk = history_.chunk(n, error);
    if (!chunk) return false;
    if (!chunkMayChange(n, watches)) {
      if (chunk->keyframe.size() != scratch_.imageSize()) {
        error = fmt::format("the keyframe of the chunk at byte offset {} has {} bytes, the image {}", b.offset,
                            chunk->keyframe.size(), scratch_.imageSize());
        return false;
      }
      for (uint64_t c = from; c <= to; ++c)
        if (!atEnd(c, chunk->startTimes[c - b.firstCycle], chunk->keyframe.data())) return false;
      continue;
    }
    if (!restoreBefore(scratch_, from, error)) return false;
    // The image is hashed at the end of the chunk's last cycle here, not at every cycle's (hashing
    // the plant's image costs a sixth of re-executing its cycle; a diff re-executes every cycle of
    // two traces); every cycle's statement count and fault are checked. A hash that differs there
    // sends the chunk's cycles through once more with every hash checked, so that the divergence
    // reported is the first one, as a replay would find it.
    const size_t before = divergences_.size();
    for (uint64_t c = from; c <= to; ++c) {
      std::shared_ptr<const trace::ChunkData> held;
      CycleRecord record;
      if (!history_.cycle(c, held, record, error) || !startCycle(scratch_, record, error)) return false;
      scratch_.setObserver(nullptr);
      if (record.open) {
        // The open cycle ends where the task is paused.
        PauseAt pause(record.stepCount - 1);
        scratch_.setObserver(&pause);
        run(scratch_);
        scratch_.setObserver(nullptr);
      } else {
        checkDigest(scratch_, record, run(scratch_), c == to);
      }
      if (!atEnd(c, record.startNs, scratch_.image())) return false;
    }
    if (divergences_.size() > before && divergences_.back().kind == DivergenceKind::ImageHash &&
        divergences_.back().position.cycle == to && from < to && !hashesCheckedBefore(from, to, before, error))
      return false;
  }
  return true;
}

bool Replayer::hashesCheckedBefore(uint64_t from, uint64_t to, size_t before, std::string& error) {
  // What the first pass found before `to` (statement counts, faults) is found again, in order.
  Divergence atEnd = std::move(divergences_.back());
  divergences_.resize(before);
  if (!restoreBefore(scratch_, from, error)) return false;
  for (uint64_t c = from; c < to; ++c) {
    std::shared_ptr<const trace::ChunkData> held;
    CycleRecord record;
    if (!history_.cycle(c, held, record, error) || !startCycle(scratch_, record, error)) return false;
    scratch_.setObserver(nullptr);
    checkDigest(scratch_, record, run(scratch_));
  }
  divergences_.push_back(std::move(atEnd));
  return true;
}

namespace {

// Pauses at every boundary of one of the statements (sorted).
class PauseAtStatements final : public VmObserver {
 public:
  explicit PauseAtStatements(const std::vector<uint32_t>& sorted) : statements_(sorted) {}
  bool onStatement(uint32_t statement, uint64_t step) override {
    if (!std::binary_search(statements_.begin(), statements_.end(), statement)) return false;
    statement_ = statement;
    step_ = step;
    return true;
  }
  uint32_t statement_ = UINT32_MAX;
  uint64_t step_ = 0;

 private:
  const std::vector<uint32_t>& statements_;
};

}  // namespace

bool Replayer::statementHits(const std::vector<uint32_t>& statements, uint64_t first, uint64_t last,
                             const std::function<bool(Position, uint32_t, const Vm&)>& hit, std::string& error) {
  std::vector<uint32_t> sorted = statements;
  std::sort(sorted.begin(), sorted.end());
  for (size_t n = 0; n < history_.chunkCount(); ++n) {
    const trace::BlockInfo& b = history_.chunkBlock(n);
    if (b.firstCycle + b.cycleCount <= first) continue;
    if (b.firstCycle > last) break;
    std::shared_ptr<const trace::ChunkData> chunk = history_.chunk(n, error);
    if (!chunk) return false;
    std::vector<uint64_t> candidates = candidateCycles(*chunk, sorted);
    std::erase_if(candidates, [&](uint64_t c) { return c < first || c > last; });
    if (candidates.empty()) continue;
    if (!restoreBefore(scratch_, candidates.front(), error)) return false;
    size_t next = 0;  // the next candidate
    for (uint64_t c = candidates.front(); c <= candidates.back(); ++c) {
      std::shared_ptr<const trace::ChunkData> held;
      CycleRecord record;
      if (!history_.cycle(c, held, record, error) || !startCycle(scratch_, record, error)) return false;
      ++hitCyclesRun_;
      const bool candidate = next < candidates.size() && candidates[next] == c;
      if (candidate) ++next;
      PauseAtStatements pause(sorted);
      scratch_.setObserver(candidate ? &pause : nullptr);
      // An open cycle goes no further than where the task is paused: its last boundary.
      const uint64_t end = record.open ? record.stepCount - 1 : UINT64_MAX;
      RunStatus status = run(scratch_);
      while (status == RunStatus::Paused) {
        if (pause.step_ > end) break;
        if (!hit(Position{c, pause.step_}, pause.statement_, scratch_)) {
          scratch_.setObserver(nullptr);
          return false;
        }
        status = run(scratch_);
      }
      scratch_.setObserver(nullptr);
      if (record.open) break;
      checkDigest(scratch_, record, status);
      if (status != RunStatus::CycleDone) {
        if (c == candidates.back()) break;  // the recording ends in the fault
        error = fmt::format("cycle {} faulted on replay, but the recording goes on: the replay diverged", c);
        return false;
      }
    }
  }
  return true;
}

std::vector<Change> Replayer::lastChanges(const Watch& watch, Position at, size_t count, std::string& error) {
  const std::optional<Position> first = start();
  if (!first) {
    error = "the trace has no recorded cycle";
    return {};
  }
  return lastChangesOf({watch}, at, count, *first, error);
}

// ---------------------------------------------------------------- verify

std::vector<Divergence> Replayer::verify(const std::function<void(uint64_t, uint64_t)>& progress, std::string& error) {
  const uint64_t total = [&] {
    uint64_t n = 0;
    for (size_t i = 0; i < history_.chunkCount(); ++i) n += history_.chunkBlock(i).cycleCount;
    return n;
  }();
  uint64_t& done = verifiedCycles_;
  done = 0;
  const size_t before = divergences_.size();
  // What was found up to here, also when an unreadable chunk ends the check early.
  auto found = [&] {
    return std::vector<Divergence>(divergences_.begin() + static_cast<ptrdiff_t>(before), divergences_.end());
  };
  verified_.clear();
  for (size_t i = 0; i < history_.chunkCount(); ++i) {
    std::shared_ptr<const trace::ChunkData> chunk = history_.chunk(i, error);
    if (!chunk) return found();
    if (!restoreBefore(scratch_, chunk->firstCycle, error)) return found();
    for (uint64_t c = chunk->firstCycle; c < chunk->firstCycle + chunk->cycleCount(); ++c) {
      std::shared_ptr<const trace::ChunkData> held;
      CycleRecord record;
      if (!history_.cycle(c, held, record, error) || !startCycle(scratch_, record, error)) return found();
      const RunStatus status = run(scratch_);
      checkDigest(scratch_, record, status);
      ++done;
      if (status != RunStatus::CycleDone) break;
      if (done % 4096 == 0 && progress) progress(done, total);
    }
    // A chunk that continues the previous one must start from the image its last cycle left.
    if (history_.contiguous(i)) {
      std::string e2;
      std::shared_ptr<const trace::ChunkData> next = history_.chunk(i + 1, e2);
      if (next && next->keyframe.size() == scratch_.imageSize() &&
          std::memcmp(next->keyframe.data(), scratch_.image(), scratch_.imageSize()) != 0) {
        uint32_t at = 0;
        while (next->keyframe[at] == scratch_.image()[at]) ++at;
        divergences_.push_back({Position{next->firstCycle, 0}, DivergenceKind::Keyframe,
                                fmt::format("the keyframe of cycle {} differs from the replayed image (first at "
                                            "byte {}: recorded {:02x}, replayed {:02x})",
                                            next->firstCycle, at, next->keyframe[at], scratch_.image()[at])});
      }
    }
  }
  if (progress) progress(total, total);
  return found();
}

}  // namespace scanback::replay
