// The scan-cycle runtime: tasks on a virtual clock, the input image latched at cycle start, the
// output image written at cycle end, external writes applied at cycle start, faults.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"
#include "vm/exec/vm.h"
#include "vm/runtime/forces.h"
#include "vm/runtime/reload.h"
#include "vm/runtime/write_author.h"
#include "vm/source/source.h"

namespace scanback {

// A write from outside the program (stimulus, debugger, HMI) applied at the start of a cycle.
// A scan input (docs/architecture.md: determinism): recorded, and replayed at the same cycle.
struct ExternalWrite {
  uint32_t offset = 0;  // image offset
  int8_t bit = -1;      // >= 0: a single bit at `offset`
  std::vector<uint8_t> bytes;
  WriteAuthor author = WriteAuthor::Unknown;  // who made it: recorded, never read by replay
};

// What starts the next cycle.
struct CycleStart {
  uint64_t cycle = 0;
  uint32_t task = 0;
  int64_t startNs = 0;
};

struct TaskStatistics {
  uint64_t cycles = 0;
  uint64_t statements = 0;
  uint64_t maxStatements = 0;
};

class Runtime;

// The virtual clock runs from 0 to the largest LTIME, T#106751d23h47m16s854ms775us807ns (about
// 292 years). No cycle is released at or after its end: a release that would be there does not
// happen, and nextCycle() then returns a start at kClockEndNs (see Runtime::clockEnded()).
inline constexpr int64_t kClockEndNs = INT64_MAX;
// The longest INTERVAL a task may have: the clock must hold a thousand of its releases.
inline constexpr int64_t kMaxTaskIntervalNs = kClockEndNs / 1000;
// Load-time checks of the task table that the compiler leaves to the runtime: every INTERVAL is
// positive and at most kMaxTaskIntervalNs. Errors go to `diagnostics`, located at the task.
[[nodiscard]] bool checkSchedule(const Program& program, Diagnostics& diagnostics);

// Called around every cycle (the recorder's attachment point). Runs on the scan thread: must not
// block.
class CycleHooks {
 public:
  virtual ~CycleHooks() = default;
  // Before the cycle's scan inputs are applied: the image is as the previous cycle left it,
  // `Runtime::inputs()` holds the field inputs about to be latched, `pendingWrites()` the
  // external writes about to be applied, `forceTable()` the forces held before this cycle and
  // `forceChanges()` the forces set and released at its start.
  virtual void beforeCycle(const Runtime& runtime) = 0;
  // After the cycle ended (CycleDone) or faulted.
  virtual void afterCycle(const Runtime& runtime, RunStatus status) = 0;
};

class Runtime {
 public:
  explicit Runtime(std::shared_ptr<const Program> program);

  const Program& program() const { return vm_.program(); }
  Vm& vm() { return vm_; }
  const Vm& vm() const { return vm_; }

  // The field's view of the inputs: %I bytes, latched into the image at each cycle start.
  std::vector<uint8_t>& inputs() { return inputs_; }
  const std::vector<uint8_t>& inputs() const { return inputs_; }
  // The outputs as last written at a cycle end: %Q bytes.
  const std::vector<uint8_t>& outputs() const { return outputs_; }
  // Who changed the field inputs `inputs()[from .. from + size)` for the next latch (a Modbus
  // server's peer, a stimulus file's %I column): recorded with the %I changes (ImageWrite.author,
  // docs/explain.md) and forgotten once the cycle start latched them. Bytes no one noted are a
  // device's latch (WriteAuthor::Unknown). The scan thread only; no allocation once the area
  // was noted once.
  void noteInputAuthor(uint32_t from, uint32_t size, WriteAuthor author);
  // Who changed field input byte `index` since the last latch (Unknown: not noted).
  WriteAuthor inputAuthor(uint32_t index) const {
    return index < inputAuthors_.size() ? inputAuthors_[index] : WriteAuthor::Unknown;
  }
  // Whether anyone noted an author since the last latch (so a recorder looks at them at all).
  bool inputAuthorsNoted() const { return inputAuthorsNoted_; }
  void queueWrite(ExternalWrite write) { pendingWrites_.push_back(std::move(write)); }
  const std::vector<ExternalWrite>& pendingWrites() const { return pendingWrites_; }
  void setHooks(CycleHooks* hooks) { hooks_ = hooks; }

  // ---- forcing (vm/runtime/forces.h)
  // Any thread: a force set or released at the next cycle start. The scan thread takes the
  // requests without waiting (a request made while it looks is taken one cycle later).
  void requestForce(ForceChange change);
  // Any thread: forces `target` (a path or an address) to `value` from the next cycle start on,
  // resolved against the program running (a reload between cycles cannot race it). The force, or
  // nullopt with `error` (resolveForce's).
  [[nodiscard]] std::optional<Force> force(std::string_view target, std::string_view value, std::string& error);
  // Any thread: releases the force of `target` (empty: every force) at the next cycle start. The
  // targets released, or nullopt with `error` when `target` is not forced.
  [[nodiscard]] std::optional<std::vector<std::string>> release(std::string_view target, std::string& error);
  // Any thread: the forces held, as of the last cycle start (plus the requests not yet taken,
  // when `withRequested`).
  std::vector<Force> forces(bool withRequested = true) const;
  // The scan thread (and hooks): the forces held before the cycle under way, and the changes its
  // start applied (empty outside startCycle's hooks once the cycle runs: see forceChanges()).
  const ForceTable& forceTable() const { return forceTable_; }
  const std::vector<ForceChange>& forceChanges() const { return forceChanges_; }

  // The cycle that runs next (task order by release time, then PRIORITY, then declaration).
  CycleStart nextCycle() const;
  // True when no task has a release left before the end of the virtual clock (kClockEndNs). A
  // cycle started then runs at kClockEndNs: time stands still, it never wraps around.
  bool clockEnded() const { return nextCycle().startNs == kClockEndNs; }
  // Cycles completed since the start.
  uint64_t cycle() const { return cycle_; }
  // Moves the schedule, between cycles, to where the next cycle is cycle number `cycle`, the release
  // of `task` at `startNs` (a rerun that starts at a recorded keyframe, compare/rerun.h): every task
  // counts the releases the schedule makes before that one. False, with nothing changed, when
  // `task` is never released at `startNs`.
  bool startAt(uint64_t cycle, uint32_t task, int64_t startNs);

  // Latches inputs, applies queued writes and starts the next cycle; run() then executes it.
  void startCycle();
  // Runs the current cycle until it ends, pauses (observer) or faults. At the end of the cycle the
  // outputs are written and the schedule advances.
  RunStatus run();
  // startCycle() + run() to the end (or a fault).
  RunStatus runCycle();
  bool inCycle() const { return vm_.inCycle(); }
  const CycleStart& currentCycle() const { return current_; }

  bool faulted() const { return vm_.faulted(); }
  // "file:line:col: fault: <cause> (cycle N, task T)"
  std::string faultMessage() const;

  // Hot reload, between cycles only: `program` (whose task table is this one's, see
  // reloadBlocker) runs from the next cycle on, with the values `plan` keeps. The clock, the cycle
  // count and the schedule go on. Queued external writes move with the variables they write; the
  // number of writes dropped (their variable is gone or changed type) is returned. The field
  // inputs stay by address: the machine does not rewire because the program changed. Forces move
  // with what they name, found again by their target; those that cannot be are released and
  // counted with the dropped writes.
  size_t replaceProgram(std::shared_ptr<const Program> program, const ReloadPlan& plan);

  const std::vector<TaskStatistics>& statistics() const { return stats_; }
  uint64_t totalStatements() const { return totalStatements_; }

 private:
  Vm vm_;
  std::vector<uint8_t> inputs_;
  std::vector<uint8_t> outputs_;
  std::vector<ExternalWrite> pendingWrites_;
  std::vector<WriteAuthor> inputAuthors_;  // per field input byte, while inputAuthorsNoted_
  bool inputAuthorsNoted_ = false;
  std::vector<uint64_t> releases_;  // cycles released so far, per task
  std::vector<TaskStatistics> stats_;
  uint64_t cycle_ = 0;
  uint64_t totalStatements_ = 0;
  CycleStart current_;
  CycleHooks* hooks_ = nullptr;

  // ---- forcing: the scan thread's table and this cycle's changes; the requests from other
  // threads, and a copy of the table for them, under forceMutex_ (the scan thread only tries it)
  void takeForceRequests();
  ForceTable forceTable_;
  std::vector<ForceChange> forceChanges_;
  mutable std::mutex forceMutex_;
  std::vector<ForceChange> forceRequests_;
  std::vector<Force> forcesShown_;
  std::shared_ptr<const Program> forceProgram_;  // the program forces resolve against
  std::atomic<bool> forceRequested_{false};      // read once per cycle
  // The cycle whose start takes a request made now (a force requested shows it as sinceCycle).
  std::atomic<uint64_t> nextStart_{0};
};

// Applies a write to an image (also used by the replayer for recorded writes).
void applyWrite(uint8_t* image, uint32_t imageSize, const ExternalWrite& write);

}  // namespace scanback
