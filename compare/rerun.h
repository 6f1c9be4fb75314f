// `scanback rerun TRACE FILES...`: what another version of the program would have done with the
// scan inputs a trace recorded (docs/compare.md).
//
// The recorded scan inputs drive the new version cycle by cycle: the %I bytes by address (the field
// does not rewire because the program changed), external writes (stimulus, forces, HMI and
// debugger writes) to the variable of the same name and type, a debugger's write inside a cycle at
// the boundary of the same statement (compare/statement_map.h), the task releases and virtual
// times as the new version's own schedule makes them. While its tasks are those of the recording,
// that schedule is the recorded one; when they changed, it differs from some cycle on, and from
// there the recorded scan inputs are applied by virtual time (those of every recorded cycle that
// started at or before a cycle's start, at that cycle's start). Inputs the new version no longer
// has are reported once each, with how often they occurred.
//
// A rerun from the recording's first cycle, when that is cycle 0 and the recording started from
// the initial values, starts the new version from its own initial values (a cold start, as `run`
// does). From any later cycle (--cycles A..B) it starts from the recorded state there, carried over
// by name and type as hot reload keeps it (vm/runtime/reload.h), with what was reset listed.
//
// The new version runs under the recorder (recorder/recorder.h), so the result is an ordinary
// trace: replay, time travel, export and `trace diff` work on it. Rerunning the same program
// reproduces the recording exactly, cycle for cycle and digest for digest.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"
#include "vm/runtime/reload.h"

namespace scanback::compare {

struct RerunOptions {
  std::shared_ptr<const Program> program;  // the version to run
  std::string record;                      // the trace to write (empty: none)
  std::optional<uint64_t> firstCycle, lastCycle;
  // Compare every cycle with the recording (its outputs and the variables both versions have, as
  // `trace diff` does by default) and stop at the end of the first that differs.
  bool stopOnDivergence = false;
  std::function<void(uint64_t cycle)> progress;  // after each cycle (may be null)
};

// Recorded scan inputs the new version has no place for.
struct DroppedInput {
  std::string what;  // "%IB6", "Line.oldSetpoint", "a debugger's write at step 12 of a cycle"
  std::string why;   // "outside the new version's %I area (6 bytes)", "the new version has no Line.oldSetpoint"
  uint64_t cycles = 0;
  uint64_t firstCycle = 0;
};

struct RerunResult {
  std::string programHash[2];  // the recording's and the new version's
  uint64_t firstCycle = 0;
  uint64_t cycles = 0;       // cycles run
  bool coldStart = false;    // from the new version's initial values
  bool sameProgram = false;  // the new version has the recording's source texts
  ReloadPlan plan;           // the state carried over (when not a cold start), and what was reset
  std::vector<DroppedInput> dropped;
  // From this cycle on the new version's schedule differs from the recording's (its tasks
  // changed); what it runs there and what the recording ran.
  std::optional<uint64_t> scheduleSplit;
  std::string scheduleNote;
  std::string ended;                         // why the rerun ended there ("the recording ends", ...)
  std::optional<std::string> fault;          // the new version faulted
  std::optional<std::string> recordedFault;  // the recording's fault, within the cycles rerun
  // (stopOnDivergence) the first cycle that differs from the recording, and how.
  std::optional<uint64_t> divergenceCycle;
  std::string divergence;
  // The recording's reader warnings (a trace cut off by a crash: the rerun goes as far as it was
  // recorded; a corrupt block met inside the cycles rerun is an error instead).
  std::vector<std::string> warnings;
  // (record) what was written.
  uint64_t bytesWritten = 0, chunks = 0;
};

// Reruns the trace at `tracePath` with `options.program`. False with `error` when the trace cannot
// be read or replayed up to the first cycle, a cycle rerun cannot be read (then no output is left), the range is not in
// it, the new version's tasks cannot start there, or the trace cannot be written.
[[nodiscard]] bool rerun(const std::string& tracePath, const RerunOptions& options, RerunResult& result,
                         std::string& error);

}  // namespace scanback::compare
