// The replayer: rebuilds the exact state at any position of a recorded trace and searches its
// history in both directions (docs/architecture.md: every invariant but the live task's).
//
// A position is (cycle, step): step k is the k-th statement boundary of the cycle (before that
// statement runs), and step == stepCount is the end of the cycle (the boundary before the next
// one). Every position is rebuilt the same way: the nearest checkpoint (an image at a cycle
// boundary; every chunk's keyframe is one) at or before the target cycle, whole cycles re-executed
// from their recorded scan inputs, then the target cycle run to the target step on a VM that
// pauses there. Fully re-executed cycles are checked against their recorded digest.
//
// Not thread-safe: one Replayer per thread. Several replayers may share one Program.
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "replayer/history.h"
#include "vm/exec/vm.h"
#include "vm/runtime/step_writes.h"
#include "vm/runtime/watch.h"

namespace scanback::replay {

// A set of cycle numbers as a bitmap from the first one added: one bit per recorded cycle (a
// std::set would cost ~48 bytes per cycle, 45 MB for a million cycles).
class CycleSet {
 public:
  // True when `cycle` was not in the set.
  bool insert(uint64_t cycle);
  bool contains(uint64_t cycle) const {
    const uint64_t word = cycle / 64;
    return word >= base_ && word - base_ < words_.size() && ((words_[word - base_] >> (cycle % 64)) & 1);
  }
  void clear() {
    words_.clear();
    base_ = 0;
  }

 private:
  uint64_t base_ = 0;  // the cycle of bit 0 (a multiple of 64)
  std::vector<uint64_t> words_;
};

struct Position {
  uint64_t cycle = 0;
  uint64_t step = 0;
  auto operator<=>(const Position&) const = default;
};

// A cycle of a task still being recorded that has begun and not ended: the debugger paused the
// task inside it. It replays from its keyframe (the image before it) and scan inputs up to
// `untilStep`, the position where the task is paused (see Recorder::sync()). A trace that
// finished while the task was paused ends with one (an OpenCycle block).
using OpenCycle = trace::OpenCycleData;

struct ReplayOptions {
  uint64_t checkpointBudgetBytes = 256ull << 20;
  // Replay with this program instead of compiling the trace's embedded sources; its hash must
  // equal the trace's.
  std::shared_ptr<const Program> program;
  // Data searches (reverse and forward data breakpoints, lastChanges, changesFrom, cycleEnds) skip
  // chunks whose write index says no statement or scan input of theirs wrote the watched bytes
  // (only in a trace whose header says its indexes are complete). Off: every cycle is
  // re-executed (what a trace without the index gets; benchmarks compare both).
  bool useWriteIndex = true;
};

// A replayed cycle that does not match its recording.
enum class DivergenceKind {
  StatementCount,  // the cycle ran a different number of statements
  ImageHash,       // the image at the end of the cycle hashes differently
  Fault,           // one of recording and replay faulted in the cycle, the other did not
  Keyframe,        // a chunk's keyframe differs from the image the previous chunk's cycles left
};
struct Divergence {
  Position position;  // the end of the cycle (or (cycle, 0) of the keyframe's cycle)
  DivergenceKind kind = DivergenceKind::ImageHash;
  std::string what;  // expected and actual values
};

// Every statement boundary of one cycle, as re-executed: which statement, in which activation.
// Activations are the calls of the cycle; all program bodies of the task count as one top-level
// activation (0), so stepping over the end of one program body goes on into the next.
struct CycleSteps {
  uint64_t cycle = 0;
  uint32_t task = 0;
  std::vector<uint32_t> statements;   // per boundary
  std::vector<uint32_t> activations;  // per boundary: innermost activation
  struct Activation {
    uint32_t parent = 0;
    uint32_t callStep = 0;  // the caller's boundary (the statement that made the call)
    uint32_t pou = 0;
  };
  std::vector<Activation> activationTable;  // [0] is the top level
  bool faulted = false;                     // the cycle ends in a fault at its last boundary
  bool open = false;                        // the open cycle: its last boundary is where it has got to
  uint32_t count() const { return static_cast<uint32_t>(statements.size()); }
  // True when activation `a` is `of` or one of its callers.
  bool encloses(uint32_t a, uint32_t of) const;
};

// A change of a watched range: the boundary right after the statement that wrote it (step 0 when
// the cycle's scan inputs wrote it), with the values before and after.
struct Change {
  Position position;
  std::vector<uint8_t> before, after;
  bool byScanInputs = false;
  uint32_t statement = UINT32_MAX;  // the writing statement (UINT32_MAX for scan inputs)
  uint32_t watch = 0;               // index into the watches searched
};

enum class StopReason { Step, Breakpoint, DataWrite, Start, End };

struct Stop {
  Position position;
  StopReason reason = StopReason::Step;
  int breakpoint = -1;  // index into the breakpoints given (Breakpoint) or the watches (DataWrite)
  std::string note;     // e.g. why the start or end of the recording was reached
  // Breakpoint, going forward: the other breakpoints that stop at the same position, in order.
  std::vector<int> others;
  // DataWrite: the change found (the value before it, the writing statement).
  std::optional<Change> change;
};

// A breakpoint the searches stop at: a statement, optionally only when `condition` holds (it is
// evaluated with the replayer paused at the statement) and only at the hits whose number passes
// `hitCondition`. A hit is a run of the statement with the condition holding; hits are numbered
// from 1 at the start of the recording, in order, over the recorded cycles (runs inside a gap are
// unknown and not counted). So a search stops where the breakpoint would have stopped had it been
// set before the recording began, whichever way the search goes.
struct Breakpoint {
  uint32_t statement = 0;
  std::function<bool(const Vm&)> condition;    // the VM paused at the statement
  std::function<bool(uint64_t)> hitCondition;  // the hit's number (from 1)
  // Where numbering starts: hits before this position are not counted, and a breakpoint with a
  // hit condition stops at none of them. A live session's breakpoint, set while the recording was
  // under way, counts its hits from where it was set, as the live task does (docs/dap.md); the
  // start of the recording otherwise.
  Position countFrom;
};

// A watched range of the image (vm/runtime/watch.h): what data searches compare.
using Watch = scanback::Watch;

class Replayer {
 public:
  [[nodiscard]] static std::unique_ptr<Replayer> open(const std::string& path, const ReplayOptions& options,
                                                      std::string& error);
  [[nodiscard]] static std::unique_ptr<Replayer> open(std::unique_ptr<trace::TraceReader> reader,
                                                      const ReplayOptions& options, std::string& error);

  const trace::HeaderData& header() const { return history_.header(); }
  const Program& program() const { return *program_; }
  const std::shared_ptr<const Program>& programPtr() const { return program_; }
  History& history() { return history_; }
  const History& history() const { return history_; }
  // Follows a trace still being recorded: picks up what was appended. True when anything new.
  bool refresh();
  // Appends the cycle under way after the recorded ones (null: none); it replaces the previous
  // one. Its last position, (cycle, untilStep), is then end().
  void setOpenCycle(const OpenCycle* open);
  // A live task paused right after the last recorded cycle ended (a data breakpoint on a write by
  // its last statement): without an open cycle, end() is then that cycle's end, (cycle,
  // stepCount), where the task is, rather than its last statement. Not for a cycle that faulted.
  void setEndAtCycleEnd(bool on) { endAtCycleEnd_ = on; }

  // The first and last positions a debugger stops at: (first cycle, 0) and the last statement
  // boundary of the last cycle (its faulting statement when the trace ends in a fault). The end of
  // the last cycle, (last cycle, stepCount), is a valid position too, but no statement is there.
  std::optional<Position> start() const;
  std::optional<Position> end();
  // The position before the first statement of the next recorded cycle after `cycle` of the given
  // task, if any (skipping gaps).
  std::optional<uint64_t> nextCycleOfTask(uint64_t cycle, uint32_t task);
  std::optional<uint64_t> previousCycleOfTask(uint64_t cycle, uint32_t task);

  // Rebuilds the state at `position`. False with `error` when the position is not in the
  // recording (a gap, after a corrupt block, a step past the cycle's end).
  [[nodiscard]] bool seek(Position position, std::string& error);
  Position position() const { return position_; }
  // The VM at the current position: paused at a boundary (frames(), image()) or between cycles at
  // the end of a cycle.
  const Vm& vm() const { return vm_; }
  // The statement about to run at the current position (UINT32_MAX at the end of a cycle).
  uint32_t statement() const;
  uint32_t task() const { return vm_.currentTask(); }

  // The boundaries of a cycle (re-executed once, cached).
  [[nodiscard]] const CycleSteps* steps(uint64_t cycle, std::string& error);

  // Moves. Each returns the stop (and leaves the replayer there), or nullopt with `error`.
  // Forward ones stop at any of `breakpoints` hit and any change of `watches` on the way (step
  // over/out too), the position a step ends at included: a step that ends at a breakpoint that
  // stops there, or right after a change, reports that (as a live task does).
  [[nodiscard]] std::optional<Stop> stepIn(const std::vector<Breakpoint>& breakpoints,
                                           const std::vector<Watch>& watches, std::string& error);
  [[nodiscard]] std::optional<Stop> stepOver(const std::vector<Breakpoint>& breakpoints,
                                             const std::vector<Watch>& watches, std::string& error);
  [[nodiscard]] std::optional<Stop> stepOut(const std::vector<Breakpoint>& breakpoints,
                                            const std::vector<Watch>& watches, std::string& error);
  [[nodiscard]] std::optional<Stop> continueForward(const std::vector<Breakpoint>& breakpoints,
                                                    const std::vector<Watch>& watches, std::string& error);
  // The mirrors: stepBack (reverse of stepOver), reverse step in, reverse step out, reverse continue.
  [[nodiscard]] std::optional<Stop> stepBack(const std::vector<Breakpoint>& breakpoints, std::string& error);
  [[nodiscard]] std::optional<Stop> reverseStepIn(const std::vector<Breakpoint>& breakpoints, std::string& error);
  [[nodiscard]] std::optional<Stop> reverseStepOut(const std::vector<Breakpoint>& breakpoints, std::string& error);
  [[nodiscard]] std::optional<Stop> reverseContinue(const std::vector<Breakpoint>& breakpoints,
                                                    const std::vector<Watch>& watches, std::string& error);

  // The last `count` changes of `watch` before `at`, newest first. Does not move the position.
  [[nodiscard]] std::vector<Change> lastChanges(const Watch& watch, Position at, size_t count, std::string& error);

  // Every change of `watches` from the start of cycle `fromCycle` (before its scan inputs) up to
  // `until` (excluded), in order, a change by the scan inputs at step 0 included; `found` returns
  // false to stop. `initial` gets each watch's value before `fromCycle` (width() bytes). Runs on
  // the scratch VM: the position does not move. False with `error`.
  [[nodiscard]] bool changesFrom(const std::vector<Watch>& watches, uint64_t fromCycle, Position until,
                                 std::vector<std::vector<uint8_t>>& initial,
                                 const std::function<bool(size_t, Change&&)>& found, std::string& error);
  // The end of every recorded cycle from `first` to `last` (inclusive; cycles in gaps are not
  // there), in order: `atEnd(cycle, startNs, image)` with the image at the end of the cycle (where
  // it stopped, for a cycle that faulted); false stops. A chunk in whose cycles no watched byte
  // changes (its write index says so) is not re-executed: `image` is then its keyframe, the same
  // in every watched byte. Runs on the scratch VM. False with `error` (or when stopped).
  [[nodiscard]] bool cycleEnds(const std::vector<Watch>& watches, uint64_t first, uint64_t last,
                               const std::function<bool(uint64_t, int64_t, const uint8_t*)>& atEnd, std::string& error);
  // Every run of any of `statements` in the recorded cycles `first` to `last` (inclusive), in
  // order: `hit(position, statement, vm)` with the VM paused there, before the statement runs;
  // false stops. The statement paths (the trace's statement-hit index) say which cycles run one:
  // a chunk in which none does is not re-executed, and a chunk's cycles after its last such cycle
  // neither (a chunk without paths is re-executed whole). Runs on the scratch VM: the position
  // does not move. False with `error` (or when stopped).
  [[nodiscard]] bool statementHits(const std::vector<uint32_t>& statements, uint64_t first, uint64_t last,
                                   const std::function<bool(Position, uint32_t, const Vm&)>& hit, std::string& error);
  // Cycles statementHits() re-executed since the replayer was opened (tests, benches).
  uint64_t hitCyclesRun() const { return hitCyclesRun_; }
  // Chunks the write index let data searches skip since the replayer was opened (tests, benches).
  uint64_t chunksSkipped() const { return chunksSkipped_; }

  // Re-executes every recorded cycle and checks every digest and keyframe. `progress` (if set)
  // gets (cycles done, cycles total) now and then.
  [[nodiscard]] std::vector<Divergence> verify(const std::function<void(uint64_t, uint64_t)>& progress,
                                               std::string& error);
  // The cycles the last verify() re-executed and checked against their digest. Fewer than the
  // recorded ones when an unreadable chunk stopped it or a cycle faulted before the trace's end.
  uint64_t verifiedCycles() const { return verifiedCycles_; }
  // Divergences met so far by any replay.
  const std::vector<Divergence>& divergences() const { return divergences_; }

  // A flag another thread sets to cut a long search short (a debugger's pause): the move in
  // progress then fails with `kCancelled` as its error, and the position does not change. Checked
  // before each cycle a search re-executes. Null: none.
  static constexpr const char* kCancelled = "cancelled";
  void setCancelFlag(const std::atomic<bool>* flag) { cancel_ = flag; }
  // A flag a live task beside this replayer sets while it executes a cycle (nonstop debugging):
  // before each cycle it re-executes, the replayer waits while it is set, so that replaying never
  // shares the machine's cores with the task's cycles. Null: none.
  void setGiveWayFlag(const std::atomic<bool>* flag) { giveWay_ = flag; }

  size_t checkpointCount() const { return checkpoints_.size(); }
  // The memory the checkpoints hold, bookkeeping included: what the budget limits.
  uint64_t checkpointBytes() const { return checkpoints_.size() * checkpointCost(); }

 private:
  Replayer(std::unique_ptr<trace::TraceReader> reader, std::shared_ptr<const Program> program,
           const ReplayOptions& options);
  // Leaves `vm` between cycles with the image before `cycle`.
  [[nodiscard]] bool restoreBefore(Vm& vm, uint64_t cycle, std::string& error);
  // cycleEnds found the image hash of cycle `to` differing (divergences_ from index `before` on):
  // re-executes cycles from..to-1 with every hash checked, so that the first divergence is known.
  [[nodiscard]] bool hashesCheckedBefore(uint64_t from, uint64_t to, size_t before, std::string& error);
  // Leaves `vm` paused at `target` (or at the end of its cycle).
  [[nodiscard]] bool seekOn(Vm& vm, Position target, std::string& error);
  // Starts `record`'s cycle on `vm` (scan inputs applied).
  [[nodiscard]] bool startCycle(Vm& vm, const CycleRecord& record, std::string& error);
  // vm.run(), applying the cycle's writes made at statement boundaries (a debugger's) on the way.
  RunStatus run(Vm& vm);
  StepWriter& stepWriter(const Vm& vm) { return &vm == &vm_ ? vmWrites_ : scratchWrites_; }
  // After a cycle ran to its end or fault: compares with the recorded digest (once per cycle).
  // `withHash` off: the statement count and the fault only (the image is not hashed, the cycle
  // not marked verified).
  void checkDigest(const Vm& vm, const CycleRecord& record, RunStatus status, bool withHash = true);
  void addCheckpoint(uint64_t cycle, const Vm& vm);
  // Drops what was cached about `cycle` (an open cycle, replaced): its steps, and the checkpoints
  // after it.
  void forgetCycle(uint64_t cycle);
  uint64_t checkpointCost() const;
  void trimCheckpoints(uint64_t around);
  // Moves to `target` and reports it as a stop.
  [[nodiscard]] std::optional<Stop> stopAt(Position target, StopReason reason, std::string& error, int breakpoint = -1,
                                           std::string note = {});
  // A step that has nowhere to go in the recording: to its end (the last recorded statement, the
  // fault when it ends in one) or start, never moving the other way.
  [[nodiscard]] std::optional<Stop> stopAtEdge(bool forward, std::string& error);
  // Going forward, the first breakpoint hit strictly between `from` and `to`; in reverse
  // (`to` < `from`), the last one strictly between them.
  [[nodiscard]] std::optional<Stop> breakpointBetween(const std::vector<Breakpoint>& breakpoints, Position from,
                                                      Position to, bool forward, std::string& error);
  [[nodiscard]] bool conditionHolds(const Breakpoint& bp, Position at, std::string& error);
  // The recorded cycles of a chunk in which any of `statements` may run, ascending: those whose
  // path runs one, those without a path, or all of them when the chunk has no paths.
  static std::vector<uint64_t> candidateCycles(const trace::ChunkData& chunk, const std::vector<uint32_t>& statements);
  // The number of hits of `bp` at positions before `p` (see Breakpoint).
  [[nodiscard]] std::optional<uint64_t> hitsBefore(const Breakpoint& bp, Position p, std::string& error);
  // The innermost activation at `step` of a cycle (the top level at its end).
  static uint32_t activationAt(const CycleSteps& s, uint64_t step);
  // Moves back to `target` (nullopt: there is none after the start of the recording), unless
  // one of `breakpoints` is hit on the way.
  [[nodiscard]] std::optional<Stop> moveBackTowards(std::optional<Position> target,
                                                    const std::vector<Breakpoint>& breakpoints, std::string& error);
  // Moves forward to `target` (nullopt: the end of the recording), unless one of `breakpoints` is
  // hit or one of `watches` changes on the way, at `target` included.
  [[nodiscard]] std::optional<Stop> moveForwardTowards(std::optional<Position> target,
                                                       const std::vector<Breakpoint>& breakpoints,
                                                       const std::vector<Watch>& watches, std::string& error);
  [[nodiscard]] std::optional<Position> lastBoundary(uint64_t cycle, std::string& error);
  // Replays from `from` towards `until` (excluded), calling `found` for every change of a watch
  // after `from`, in order; `found` returns false to stop. Runs on the scratch VM.
  [[nodiscard]] bool scanChanges(const std::vector<Watch>& watches, Position from, Position until,
                                 const std::function<bool(size_t, Change&&)>& found, std::string& error);
  // Every change from the start of `fromCycle` (a recorded cycle, with the cycle before it in the
  // same chunk or a keyframe) up to `until`, including those its scan inputs made.
  [[nodiscard]] bool scanChangesFrom(const std::vector<Watch>& watches, uint64_t fromCycle, Position until,
                                     std::vector<Change>& out, std::string& error);
  // The last `count` changes before `before` and not before `notBefore`, newest first.
  [[nodiscard]] std::vector<Change> lastChangesOf(const std::vector<Watch>& watches, Position before, size_t count,
                                                  Position notBefore, std::string& error);

  // Whether chunk `index` may hold a change of one of `watches` (no write index: it may).
  bool chunkMayChange(size_t index, const std::vector<Watch>& watches);

  History history_;
  std::shared_ptr<const Program> program_;
  uint64_t chunksSkipped_ = 0;
  uint64_t hitCyclesRun_ = 0;
  ReplayOptions options_;
  Vm vm_;                                // at the current position
  Vm scratch_;                           // searches and analyses, so that they never disturb the current position
  StepWriter vmWrites_, scratchWrites_;  // the cycle under way on each
  Position position_;
  bool positioned_ = false;
  bool endAtCycleEnd_ = false;
  std::map<uint64_t, std::vector<uint8_t>> checkpoints_;  // image before the cycle
  CycleSet verified_;                                     // cycles whose digest was checked
  uint64_t verifiedCycles_ = 0;                           // by the last verify()
  std::vector<Divergence> divergences_;
  std::list<CycleSteps> stepsCache_;  // most recent first
  const std::atomic<bool>* cancel_ = nullptr;
  const std::atomic<bool>* giveWay_ = nullptr;
  std::map<std::pair<size_t, uint32_t>, uint64_t> runsInChunk_;  // (chunk, statement) -> runs, from paths
};

}  // namespace scanback::replay
