#include "compare/rerun.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>

#include "compare/compared_set.h"
#include "compare/cycle_stream.h"
#include "compare/statement_map.h"
#include "recorder/recorder.h"
#include "replayer/replayer.h"
#include "vm/exec/iec_text.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/values.h"

namespace scanback::compare {

namespace {

using replay::CycleRecord;
using replay::Position;
using replay::Replayer;

// A %I, %Q or %M area of both versions: a place in it is the same address in both.
struct AreaPair {
  char letter;
  IoArea from, to;
};

// Where the recorded scan inputs go in the new version's image: each place mapped once, and what
// has no place there counted for the report.
class InputMap {
 public:
  InputMap(const Program& from, const Program& to, const ReloadPlan& plan, bool identity)
      : from_(from), to_(to), plan_(plan), identity_(identity) {
    areas_[0] = {'I', from.input, to.input};
    areas_[1] = {'Q', from.output, to.output};
    areas_[2] = {'M', from.memory, to.memory};
    if (identity) return;
    scalars_ = allScalars(from);
    std::sort(scalars_.begin(), scalars_.end(),
              [](const VariableLocation& a, const VariableLocation& b) { return a.offset < b.offset; });
  }

  // A recorded %I change: its bytes go into `field` (the new version's %I area about to be
  // latched), with their author noted in `rt` (the rerun's trace names it the same); bytes beyond
  // that area are dropped.
  void inputChange(const trace::ImageWriteData& w, std::vector<uint8_t>& field, Runtime& rt, uint64_t cycle) {
    const IoArea& in = from_.input;
    if (w.offset < in.offset) return;  // validated traces hold none (inputs are %I bytes)
    const uint32_t rel = w.offset - in.offset;
    for (size_t j = 0; j < w.bytes.size(); ++j) {
      const uint64_t at = uint64_t{rel} + j;
      if (at < field.size()) {
        field[at] = w.bytes[j];
        if (w.author != WriteAuthor::Unknown) rt.noteInputAuthor(static_cast<uint32_t>(at), 1, w.author);
        continue;
      }
      drop(fmt::format("%IB{}", at), fmt::format("outside the new version's %I area ({} bytes)", to_.input.size),
           cycle);
    }
  }

  // A recorded external write, where the new version has the same variable (or address); false
  // when it has none (counted).
  bool write(const trace::ImageWriteData& w, ExternalWrite& out, uint64_t cycle) {
    out.bytes = w.bytes;
    out.bit = w.bit;
    out.offset = w.offset;
    out.author = w.author;  // who made it in the recording: the rerun's trace names it the same
    if (identity_) return true;
    const auto key = std::make_tuple(w.offset, w.bit, static_cast<uint32_t>(w.bytes.size()));
    auto it = known_.find(key);
    if (it == known_.end()) it = known_.emplace(key, place(w)).first;
    const Place& p = it->second;
    if (!p.ok) {
      drop(p.what, p.why, cycle);
      return false;
    }
    out.offset = p.offset;
    out.bit = p.bit;
    return true;
  }

  void drop(const std::string& what, const std::string& why, uint64_t cycle) {
    DroppedInput& d = dropped_[what];
    if (d.cycles == 0) {
      d.what = what;
      d.why = why;
      d.firstCycle = cycle;
    } else if (lastCycle_[what] == cycle) {
      return;
    }
    lastCycle_[what] = cycle;
    ++d.cycles;
  }

  std::vector<DroppedInput> dropped() const {
    std::vector<DroppedInput> out;
    for (const auto& [what, d] : dropped_) out.push_back(d);
    std::sort(out.begin(), out.end(),
              [](const DroppedInput& a, const DroppedInput& b) { return a.firstCycle < b.firstCycle; });
    return out;
  }

 private:
  struct Place {
    bool ok = false;
    uint32_t offset = 0;
    int8_t bit = -1;
    std::string what, why;  // when not ok
  };

  // The variable of the old version at `offset` (the innermost scalar holding it), or null.
  const VariableLocation* scalarAt(uint32_t offset, int8_t bit) const {
    auto it = std::upper_bound(scalars_.begin(), scalars_.end(), offset,
                               [](uint32_t o, const VariableLocation& v) { return o < v.offset; });
    while (it != scalars_.begin()) {
      --it;
      const uint32_t size = it->bit >= 0 ? 1 : std::max<uint32_t>(it->type ? it->type->size : 1, 1);
      if (offset < it->offset + size && (it->bit < 0 || bit < 0 || it->bit == bit)) return &*it;
      if (offset >= it->offset + 64) break;  // no scalar is that large and holds it
    }
    return nullptr;
  }

  Place place(const trace::ImageWriteData& w) const {
    Place p;
    const uint32_t size = w.bit >= 0 ? 1u : static_cast<uint32_t>(std::max<size_t>(w.bytes.size(), 1));
    for (const AreaPair& a : areas_) {
      if (!a.from.size || w.offset < a.from.offset || w.offset - a.from.offset >= a.from.size) continue;
      const uint32_t rel = w.offset - a.from.offset;
      if (uint64_t{rel} + size <= a.to.size) {
        p.ok = true;
        p.offset = a.to.offset + rel;
        p.bit = w.bit;
        return p;
      }
      p.what = w.bit >= 0 ? fmt::format("%{}X{}.{}", a.letter, rel, w.bit) : fmt::format("%{}B{}", a.letter, rel);
      p.why = fmt::format("outside the new version's %{} area ({} bytes)", a.letter, a.to.size);
      return p;
    }
    if (w.bit >= 0) {  // a located BOOL keeps its bit; a bit of a variable stays that bit
      for (const ReloadPlan::Copy& c : plan_.copies) {
        if (c.fromBit == w.bit && c.from == w.offset) {
          p.ok = true;
          p.offset = c.to;
          p.bit = c.toBit;
          return p;
        }
      }
    }
    if (const std::optional<uint32_t> to = plan_.relocate(w.offset, size)) {
      p.ok = true;
      p.offset = *to;
      p.bit = w.bit;
      return p;
    }
    const VariableLocation* v = scalarAt(w.offset, w.bit);
    if (!v) {
      p.what = fmt::format("image offset {}", w.offset);
      p.why = "no variable of the recorded version is there";
      return p;
    }
    p.what = v->path;
    std::string ignored;
    const std::optional<VariableLocation> now = findVariable(to_, v->path, ignored);
    p.why = !now ? fmt::format("the new version has no {}", v->path)
                 : fmt::format("its type changed ({} -> {})", v->type ? v->type->name : "?",
                               now->type ? now->type->name : "?");
    return p;
  }

  const Program& from_;
  const Program& to_;
  const ReloadPlan& plan_;
  bool identity_;
  AreaPair areas_[3];
  std::vector<VariableLocation> scalars_;
  std::map<std::tuple<uint32_t, int8_t, uint32_t>, Place> known_;
  std::map<std::string, DroppedInput> dropped_;
  std::map<std::string, uint64_t> lastCycle_;
};

// A debugger's write made inside a recorded cycle, where it goes in the new version's cycle: the
// boundary at which the same statement runs for the same time (its `occurrence`-th run), or, for
// the same program, the same boundary.
struct StepTarget {
  uint64_t step = 0;                // the same program: this boundary
  uint32_t statement = UINT32_MAX;  // else: this statement's ...
  uint32_t occurrence = 0;          // ... occurrence-th run in the cycle (from 1)
  ExternalWrite write;
};

// Pauses the new version's cycle at each target in turn.
class StepPauser final : public VmObserver {
 public:
  explicit StepPauser(const std::vector<StepTarget>& targets, bool bySteps) : targets_(targets), bySteps_(bySteps) {}
  bool onStatement(uint32_t statement, uint64_t step) override {
    if (next_ >= targets_.size()) return false;
    if (!bySteps_) ++runs_[statement];
    const StepTarget& t = targets_[next_];
    const bool here = bySteps_ ? step == t.step : statement == t.statement && runs_[statement] == t.occurrence;
    if (here) pausedAt_ = step;
    return here;
  }
  size_t next() const { return next_; }
  uint64_t pausedAt() const { return pausedAt_; }
  void passed() { ++next_; }

 private:
  const std::vector<StepTarget>& targets_;
  bool bySteps_;
  size_t next_ = 0;
  uint64_t pausedAt_ = 0;
  std::map<uint32_t, uint32_t> runs_;
};

// The image before `cycle` of the recording: its chunk's keyframe, or the recorded cycles before it
// replayed from there.
[[nodiscard]] bool imageBefore(Replayer& r, uint64_t cycle, std::vector<uint8_t>& image, std::string& error) {
  replay::History& h = r.history();
  const std::optional<size_t> index = h.chunkOf(cycle, error);
  if (!index) return false;
  std::shared_ptr<const trace::ChunkData> chunk = h.chunk(*index, error);
  if (!chunk) return false;
  if (chunk->firstCycle == cycle) {
    image = chunk->keyframe;
    return true;
  }
  std::shared_ptr<const trace::ChunkData> held;
  CycleRecord before;
  if (!h.cycle(cycle - 1, held, before, error) || !r.seek(Position{cycle - 1, before.stepCount}, error)) return false;
  image.assign(r.vm().image(), r.vm().image() + r.vm().imageSize());
  return true;
}

int32_t taskNamed(const Program& p, const std::string& name) {
  for (size_t t = 0; t < p.tasks.size(); ++t)
    if (equalsIgnoreCase(p.tasks[t].name, name)) return static_cast<int32_t>(t);
  return -1;
}

// Starts the new version's schedule at recorded cycle `cycle` (task `task` at `startNs`): at that
// release when it has it, else at its first release at or after `startNs`. False when it has none.
bool startSchedule(Runtime& rt, uint64_t cycle, const std::string& task, int64_t startNs, bool& aligned) {
  const Program& p = rt.program();
  const int32_t t = taskNamed(p, task);
  aligned = t >= 0 && rt.startAt(cycle, static_cast<uint32_t>(t), startNs);
  if (aligned) return true;
  uint32_t best = 0;
  int64_t bestNs = INT64_MAX;
  for (uint32_t i = 0; i < p.tasks.size(); ++i) {
    const int64_t interval = p.tasks[i].intervalNs;
    const int64_t k = startNs / interval + (startNs % interval != 0 ? 1 : 0);
    if (k > (kClockEndNs - 1) / interval) continue;
    const int64_t at = k * interval;
    if (at < bestNs || (at == bestNs && p.tasks[i].priority < p.tasks[best].priority)) {
      best = i;
      bestNs = at;
    }
  }
  return bestNs != INT64_MAX && rt.startAt(cycle, best, bestNs);
}

class Rerun {
 public:
  Rerun(const RerunOptions& options, RerunResult& result) : options_(options), result_(result) {}

  [[nodiscard]] bool run(const std::string& tracePath, std::string& error);

 private:
  [[nodiscard]] bool prepare(const std::string& tracePath, std::string& error);
  // The scan inputs of recorded cycle `record` for the new version's next cycle (start-of-cycle
  // ones into the runtime, those inside the cycle into `targets`).
  void takeInputs(const CycleRecord& record, bool atCycleStart, std::vector<uint8_t>& field);
  RunStatus runCycle();
  bool checkDivergence(uint64_t cycle, const CycleRecord* record, RunStatus status);

  const RerunOptions& options_;
  RerunResult& result_;
  std::unique_ptr<Replayer> replayer_;
  std::unique_ptr<Replayer> reference_;  // stopOnDivergence: the recording replayed for its values
  std::shared_ptr<const Program> from_, to_;
  std::unique_ptr<StatementMap> statements_;
  std::unique_ptr<InputMap> inputs_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<recorder::Recorder> recorder_;
  std::vector<StepTarget> targets_;
  ComparedSet compared_;
  std::unique_ptr<CycleStream> stream_;
  std::shared_ptr<const CycleBatch> batch_;
  std::vector<uint8_t> sample_;
  uint64_t first_ = 0, last_ = 0;
  int64_t lastStartNs_ = 0;  // the virtual start of recorded cycle last_
  // Per task of the recording, the new version's task of the same name (-1: none): compared
  // every cycle, by index rather than by name.
  std::vector<int32_t> sameTask_;

  bool inGap(uint64_t cycle) const {
    for (const trace::GapData& g : replayer_->history().gaps())
      if (cycle >= g.firstCycle && cycle - g.firstCycle < g.cycleCount) return true;
    return false;
  }
  // Ends a rerun that met an unreadable part of the recording: an error, and no output left (a
  // rerun that silently stopped early would look like one that ran every cycle asked for).
  [[nodiscard]] bool unreadable(uint64_t cycle, const std::string& why, std::string& error) {
    error = fmt::format("cycle {} of the recording cannot be read: {}", cycle, why);
    if (stream_) {
      stream_->stop();
      stream_.reset();
    }
    if (recorder_) {
      // The recording is being thrown away (removed just below): how it ended does not matter.
      std::string ignored;
      static_cast<void>(recorder_->finish(ignored));
      recorder_.reset();
      std::error_code removeError;
      std::filesystem::remove(options_.record, removeError);
    }
    return false;
  }
};

bool Rerun::prepare(const std::string& tracePath, std::string& error) {
  replayer_ = Replayer::open(tracePath, replay::ReplayOptions{}, error);
  if (!replayer_) return false;
  replay::History& h = replayer_->history();
  if (h.empty()) {
    error = "the trace holds no recorded cycle";
    return false;
  }
  result_.warnings = h.warnings();
  from_ = replayer_->programPtr();
  to_ = options_.program;
  result_.programHash[0] = from_->hash;
  result_.programHash[1] = to_->hash;
  // The recorded cycles rerun: the range asked for, in the recording (an open cycle, which has
  // not ended, is not one).
  uint64_t end = h.endCycle();
  if (h.hasOpenChunk()) --end;
  first_ = std::max(options_.firstCycle.value_or(0), h.firstCycle());
  last_ = std::min(options_.lastCycle.value_or(UINT64_MAX), end - 1);
  if (end <= h.firstCycle() || first_ > last_) {
    error = fmt::format("cycles {}..{} are not in the recording (it holds cycles {}..{})", first_,
                        options_.lastCycle ? fmt::format("{}", *options_.lastCycle) : std::string("end"),
                        h.firstCycle(), end - 1);
    return false;
  }
  std::shared_ptr<const trace::ChunkData> held;
  CycleRecord record;
  if (!h.cycle(first_, held, record, error)) return false;

  {
    std::shared_ptr<const trace::ChunkData> lastHeld;
    CycleRecord lastRecord;
    if (!h.cycle(last_, lastHeld, lastRecord, error)) return false;
    lastStartNs_ = lastRecord.startNs;
  }
  std::vector<uint8_t> image;
  if (!imageBefore(*replayer_, first_, image, error)) return false;
  result_.firstCycle = first_;
  result_.sameProgram = sameSources(*from_, *to_);
  result_.coldStart = first_ == 0 && image == from_->initialImage;
  runtime_ = std::make_unique<Runtime>(to_);
  Runtime& rt = *runtime_;
  if (h.header().options.statementBudget) rt.vm().setStatementBudget(h.header().options.statementBudget);
  if (!result_.sameProgram) result_.plan = planReload(*from_, *to_);
  if (!result_.coldStart) {
    if (result_.sameProgram) {
      std::memcpy(rt.vm().image(), image.data(), image.size());
    } else {
      // The I/O areas by address, then every variable whose name and type stayed.
      const IoArea pairs[3][2] = {
          {from_->input, to_->input}, {from_->output, to_->output}, {from_->memory, to_->memory}};
      for (const auto& pair : pairs) {
        const uint32_t n = std::min(pair[0].size, pair[1].size);
        if (n) std::memcpy(rt.vm().image() + pair[1].offset, image.data() + pair[0].offset, n);
      }
      applyReload(result_.plan, image.data(), static_cast<uint32_t>(image.size()), rt.vm().image(),
                  rt.vm().imageSize());
    }
  }
  if (to_->input.size) std::memcpy(rt.inputs().data(), rt.vm().image() + to_->input.offset, to_->input.size);
  const std::string recordedTask = record.task < from_->tasks.size() ? from_->tasks[record.task].name : "";
  bool aligned = false;
  if (!startSchedule(rt, first_, recordedTask, record.startNs, aligned)) {
    error = fmt::format("the new version has no task released at or after {}, where cycle {} starts",
                        formatDuration(record.startNs), first_);
    return false;
  }
  if (!aligned) {
    result_.scheduleSplit = first_;
    const CycleStart next = rt.nextCycle();
    result_.scheduleNote =
        fmt::format("cycle {}: the recording runs task {} at {}, the new version task {} at {}", first_, recordedTask,
                    formatDuration(record.startNs), to_->tasks[next.task].name, formatDuration(next.startNs));
  }
  for (const TaskInfo& t : from_->tasks) sameTask_.push_back(taskNamed(*to_, t.name));
  statements_ = std::make_unique<StatementMap>(*from_, *to_);
  inputs_ = std::make_unique<InputMap>(*from_, *to_, result_.plan, result_.sameProgram);

  if (options_.stopOnDivergence) {
    reference_ = Replayer::open(tracePath, replay::ReplayOptions{}, error);
    if (!reference_) return false;
    if (!makeComparedSet(*from_, *to_, CompareChoice{}, compared_, error)) return false;
    sample_.resize(compared_.width);
    stream_ = std::make_unique<CycleStream>(*reference_, compared_, Side::A, first_, last_);
  }
  if (!options_.record.empty()) {
    recorder::RecorderOptions ro;
    ro.path = options_.record;
    ro.keyframeEvery = h.header().options.keyframeEvery ? h.header().options.keyframeEvery : 1000;
    ro.zstdLevel = h.header().options.zstdLevel;
    ro.statements = true;
    ro.flushEveryNs = 0;  // offline: whole chunks (the file is synced when it is closed)
    ro.fsync = false;
    recorder_ = recorder::Recorder::start(rt, ro, error);
    if (!recorder_) {
      error = fmt::format("cannot record to {}: {}", options_.record, error);
      return false;
    }
  }
  return true;
}

void Rerun::takeInputs(const CycleRecord& record, bool atCycleStart, std::vector<uint8_t>& field) {
  Runtime& rt = *runtime_;
  for (const trace::ImageWriteData* w : record.inputChanges) inputs_->inputChange(*w, field, rt, record.cycle);
  std::map<uint32_t, uint32_t> runs;  // per statement of the recorded path: its runs so far
  size_t walked = 0;
  for (const trace::ImageWriteData* w : record.writes) {
    ExternalWrite mapped;
    if (!inputs_->write(*w, mapped, record.cycle)) continue;
    if (w->atStep == trace::ImageWriteData::kAtCycleStart || atCycleStart) {
      rt.queueWrite(std::move(mapped));
      continue;
    }
    StepTarget t;
    t.write = std::move(mapped);
    t.step = static_cast<uint64_t>(w->atStep);
    if (!result_.sameProgram) {
      // The statement about to run at that boundary, and how often it had run in the cycle.
      if (!record.path || t.step >= record.path->size()) {
        inputs_->drop(fmt::format("a debugger's write at step {} of a cycle", t.step),
                      "the recording has no statement path to find its statement in the new version by", record.cycle);
        continue;
      }
      for (; walked <= t.step; ++walked) ++runs[(*record.path)[walked]];
      const uint32_t statement = (*record.path)[t.step];
      t.statement = statements_->toB(statement);
      t.occurrence = runs[statement];
      if (t.statement == kNoStatement) {
        inputs_->drop(fmt::format("a debugger's write before {}", statementLocation(*from_, statement)),
                      "the new version has no such statement", record.cycle);
        continue;
      }
    }
    targets_.push_back(std::move(t));
  }
  // The forces held: at the cycle start after the writes, as the recording applied them (each
  // cycle, as a write of the new version's storage: the rerun's own trace records them so).
  for (const trace::ForceData* f : record.forces) {
    ExternalWrite mapped;
    trace::ImageWriteData forced{0, f->offset, f->bit, f->bytes};
    forced.author = WriteAuthor::Force;
    if (inputs_->write(forced, mapped, record.cycle)) rt.queueWrite(std::move(mapped));
  }
}

RunStatus Rerun::runCycle() {
  Runtime& rt = *runtime_;
  rt.startCycle();
  if (targets_.empty()) return rt.run();
  StepPauser pauser(targets_, result_.sameProgram);
  rt.vm().setObserver(&pauser);
  RunStatus status;
  while ((status = rt.run()) == RunStatus::Paused) {
    StepTarget& t = targets_[pauser.next()];
    applyWrite(rt.vm().image(), rt.vm().imageSize(), t.write);
    if (recorder_) recorder_->noteWrite(t.write, pauser.pausedAt());
    pauser.passed();
  }
  rt.vm().setObserver(nullptr);
  for (size_t i = pauser.next(); i < targets_.size(); ++i)
    inputs_->drop(fmt::format("a debugger's write at step {} of a cycle", targets_[i].step),
                  "the new version's cycle did not reach the statement it was made before", rt.currentCycle().cycle);
  targets_.clear();
  return status;
}

bool Rerun::checkDivergence(uint64_t cycle, const CycleRecord* record, RunStatus status) {
  const auto& fault = replayer_->history().fault();
  const bool recordedFault = fault && fault->cycle == cycle;
  if (recordedFault != (status == RunStatus::Faulted)) {
    result_.divergenceCycle = cycle;
    result_.divergence = recordedFault ? "the recording faulted in this cycle, the new version did not"
                                       : "the new version faulted in this cycle, the recording did not";
    return true;
  }
  if (!record) {
    result_.divergenceCycle = cycle;
    result_.divergence = "the new version's schedule differs from the recording's here";
    return true;
  }
  // The recording's values at the end of the same cycle.
  while (!batch_ || batch_->first + batch_->count <= cycle) {
    batch_ = stream_->next();
    if (!batch_) return false;  // none (read to its end, or unreadable: said after the run)
  }
  if (cycle < batch_->first) return false;  // a gap in the recording
  const uint8_t* recorded = batch_->sample(static_cast<uint32_t>(cycle - batch_->first));
  compared_.gather(Side::B, runtime_->vm().image(), sample_.data());
  if (std::memcmp(recorded, sample_.data(), compared_.width) == 0) return false;
  std::string differ;
  size_t n = 0;
  for (size_t i = 0; i < compared_.values.size(); ++i) {
    if (compared_.same(i, recorded, sample_.data())) continue;
    if (++n <= 3)
      differ += fmt::format("{}{} (recorded {}, now {})", n > 1 ? ", " : "", compared_.values[i].name,
                            compared_.format(Side::A, i, recorded), compared_.format(Side::B, i, sample_.data()));
  }
  if (n == 0) return false;
  if (n > 3) differ += fmt::format(" and {} more", n - 3);
  result_.divergenceCycle = cycle;
  result_.divergence = "values differ at its end: " + differ;
  return true;
}

bool Rerun::run(const std::string& tracePath, std::string& error) {
  if (!prepare(tracePath, error)) return false;
  Runtime& rt = *runtime_;
  replay::History& h = replayer_->history();
  // The recorded cycles are read in order from here: each next chunk is decoded on the second core
  // while this one runs the cycles of the chunk before it.
  h.readAhead(true);
  const auto& fault = h.fault();
  if (fault && fault->cycle >= first_ && fault->cycle <= last_) result_.recordedFault = fault->message;
  std::vector<uint8_t>& field = rt.inputs();
  uint64_t recorded = first_;  // the next recorded cycle whose scan inputs are not taken yet
  std::shared_ptr<const trace::ChunkData> held;
  CycleRecord record;
  bool aligned = !result_.scheduleSplit;
  for (;;) {
    const CycleStart next = rt.nextCycle();
    if (next.startNs == kClockEndNs) {
      result_.ended = "the virtual clock ends";
      break;
    }
    if (field.size() && to_->input.size)
      std::memcpy(field.data(), rt.vm().image() + to_->input.offset, to_->input.size);
    if (aligned) {
      if (recorded > last_) {
        result_.ended = last_ + 1 < h.endCycle() ? fmt::format("cycle {} was the last asked for", last_)
                                                 : std::string("the recording ends");
        break;
      }
      std::string why;
      if (!h.cycle(recorded, held, record, why)) {
        // A gap (cycles the recorder had to drop) has no scan inputs to take: the rerun ends
        // there. Anything else is a trace that cannot be read where it claims cycles.
        if (!inGap(recorded)) return unreadable(recorded, why, error);
        result_.ended = why;
        break;
      }
      const bool sameTask = record.task < sameTask_.size() && sameTask_[record.task] == static_cast<int32_t>(next.task);
      if (sameTask && record.startNs == next.startNs) {
        takeInputs(record, false, field);
        ++recorded;
      } else {
        const std::string task = record.task < from_->tasks.size() ? from_->tasks[record.task].name : "";
        aligned = false;
        result_.scheduleSplit = next.cycle;
        result_.scheduleNote =
            fmt::format("cycle {}: the recording runs task {} at {}, the new version task {} at {}", next.cycle, task,
                        formatDuration(record.startNs), to_->tasks[next.task].name, formatDuration(next.startNs));
      }
    }
    if (!aligned) {
      // By virtual time: the scan inputs of every recorded cycle that started by now, up to the
      // start of the last cycle rerun (what came after it was not recorded).
      if (next.startNs > lastStartNs_) {
        result_.ended = last_ + 1 < h.endCycle() ? fmt::format("cycle {} was the last asked for", last_)
                                                 : std::string("the recording ends");
        break;
      }
      bool any = false;
      while (recorded <= last_) {
        std::string why;
        if (!h.cycle(recorded, held, record, why)) {
          if (!inGap(recorded)) return unreadable(recorded, why, error);
          if (!any) result_.ended = why;
          break;
        }
        if (record.startNs > next.startNs) break;
        takeInputs(record, true, field);
        ++recorded;
        any = true;
      }
      if (!any && (recorded > last_ || !result_.ended.empty())) {
        if (result_.ended.empty()) result_.ended = "the recording ends";
        break;
      }
      result_.ended.clear();
    }
    const RunStatus status = runCycle();
    ++result_.cycles;
    if (options_.progress) options_.progress(next.cycle);
    if (recorder_)
      while (recorder_->backlogged()) recorder_->waitUntilNotBacklogged(std::chrono::milliseconds(100));
    if (stream_ && checkDivergence(next.cycle, aligned ? &record : nullptr, status)) {
      result_.ended = "it diverged from the recording (--stop-on-divergence)";
      if (status == RunStatus::Faulted) result_.fault = rt.faultMessage();
      break;
    }
    if (status == RunStatus::Faulted) {
      result_.fault = rt.faultMessage();
      result_.ended = "the new version faulted";
      break;
    }
  }
  result_.dropped = inputs_->dropped();
  if (stream_) {
    stream_->stop();
    if (!stream_->error().empty() && !result_.divergenceCycle) {
      error = fmt::format("the recording cannot be replayed to compare with: {}", stream_->error());
      stream_.reset();
      if (recorder_) {
        // The rerun already failed with `error`; the recording's own end is secondary to it.
        std::string ignored;
        static_cast<void>(recorder_->finish(ignored));
      }
      return false;
    }
    stream_.reset();
  }
  if (recorder_) {
    std::string why;
    const bool ok = recorder_->finish(why);
    const recorder::RecorderStats s = recorder_->stats();
    result_.bytesWritten = s.bytesWritten;
    result_.chunks = s.chunks;
    if (!ok) {
      error = fmt::format("recording to {} failed: {}", options_.record, why);
      return false;
    }
  }
  return true;
}

}  // namespace

bool rerun(const std::string& tracePath, const RerunOptions& options, RerunResult& result, std::string& error) {
  result = RerunResult{};
  if (!options.program) {
    error = "no program to rerun the trace with";
    return false;
  }
  Rerun r(options, result);
  return r.run(tracePath, error);
}

}  // namespace scanback::compare
