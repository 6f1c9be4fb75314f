// `scanback trace diff A B`: two recordings compared cycle by cycle (docs/compare.md).
//
// The cycles both traces recorded are aligned by number; each must run the same task (by name) at
// the same virtual time, else the schedules differ and the comparison stops there. For every
// aligned cycle the compared values (compare/compared_set.h) at its end are compared, and the
// statement paths (through the statement map of the two versions, compare/statement_map.h). The
// report says:
// - the first divergence: the first cycle in which a compared value differs (or one trace faults
//   and the other does not), and in it the boundary where the statement paths split, or — with
//   equal paths up to there — the first statement after which a compared value differs;
// - where the statement paths first split, when that is earlier (a change that takes another
//   branch without changing a compared value at once);
// - per compared value: equal, or the first and last cycle it differs in, how many, and both
//   values at the first;
// - what could not be compared (only in one version, another type, cycles only one trace has).
//
// Each trace is read on its own thread (compare/cycle_stream.h); chunks in which no compared value
// changes are not re-executed (the write index). Both traces must be whole: a trace cut off, with
// a damaged or corrupt part, or that does not replay as recorded is an error, and nothing is
// reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compared_set.h"

namespace scanback::compare {

struct DiffOptions {
  CompareChoice choice;
  bool useWriteIndex = true;  // off: every cycle re-executed (benchmarks compare both)
  // Each trace read on its own thread (both cores); off: the two readers take turns, a chunk each
  // (benchmarks compare both).
  bool parallelReaders = true;
};

// A statement of one side, as the report shows it.
struct StatementRef {
  uint32_t id = UINT32_MAX;  // UINT32_MAX: none (the scan inputs; the end of the cycle)
  std::string location;      // "examples/plant/programs.st:88"
  std::string text;          // its first line from its first token
};

struct TraceSummary {
  std::string path;
  std::string programHash;
  uint64_t firstCycle = 0, endCycle = 0;  // recorded cycles firstCycle .. endCycle - 1
  uint64_t cycles = 0;                    // recorded (gaps left out)
  std::optional<std::string> fault;       // the recording ends in this fault
};

struct ValueDifference {
  std::string name;
  bool output = false;
  uint64_t cycles = 0;  // differing cycles; 0: equal
  uint64_t firstCycle = 0, lastCycle = 0;
  std::string first[2];  // the values at the first differing cycle's end (A's, B's)
};

// Where the statement paths of one cycle split: at boundary `step`, A runs `statement[0]` and B
// `statement[1]` (id UINT32_MAX: that side's cycle ends there).
struct PathSplit {
  uint64_t cycle = 0;
  uint64_t step = 0;
  StatementRef statement[2];
};

struct FirstDivergence {
  uint64_t cycle = 0;
  std::string task;
  int64_t startNs = 0;
  enum class Kind {
    PathsSplit,  // the statement paths split at `step` (statements: what each side runs there)
    Value,       // with equal paths up to there, `values` differ after the statement before `step`
                 // (statements: that statement on each side; step 0: the scan inputs, or the
                 // values the cycle started with)
    Fault,       // one side faulted in this cycle, the other did not (or not the same way)
  } kind = Kind::Value;
  uint64_t step = 0;
  StatementRef statement[2];
  std::vector<std::string> values;  // the compared values that differ there
  std::string fault[2];             // Fault: each side's fault message (empty: none)
  std::string detail[2];            // Value: the first differing value's values there
};

struct ScheduleSplit {
  uint64_t cycle = 0;
  std::string task[2];
  int64_t startNs[2] = {0, 0};
};

struct DiffReport {
  TraceSummary trace[2];
  uint64_t firstCompared = 0, lastCompared = 0, comparedCycles = 0;
  uint64_t onlyIn[2] = {0, 0};  // recorded cycles not compared (the other trace lacks them, or after a schedule split)
  std::optional<ScheduleSplit> schedule;
  std::optional<FirstDivergence> divergence;
  std::optional<PathSplit> pathsSplit;  // the first cycle whose paths split (any, even before `divergence`)
  // The first compared cycle in which one trace faults and the other does not (or not the same
  // way), with each side's fault message (empty: no fault there).
  std::optional<uint64_t> faultCycle;
  std::string fault[2];
  uint64_t splitCycles = 0;             // cycles whose statement paths split
  std::vector<ValueDifference> values;  // every compared value, in the compared set's order
  uint64_t outputs = 0;                 // how many of them are outputs
  std::vector<std::string> onlyInA, onlyInB, differentType;
  uint64_t constants = 0;
  uint64_t chunksSkipped[2] = {0, 0};  // chunks not re-executed (the write index)
  std::vector<std::string> warnings;   // e.g. divergences of a replay from its own recording

  // Equal: same schedule, no compared value differs, no fault on one side only.
  bool equal() const { return !schedule && !divergence; }
  uint64_t differingValues() const;
};

// Compares the traces at `pathA` and `pathB`. False with `error` (naming the trace) when either
// cannot be read whole or `options` name nothing to compare.
[[nodiscard]] bool diffTraces(const std::string& pathA, const std::string& pathB, const DiffOptions& options,
                              DiffReport& report, std::string& error);

// The report for humans (what `scanback trace diff` prints), as JSON (`--json`), and as JUnit XML
// (`--junit`: one test case for the schedule and one per compared value).
std::string formatDiff(const DiffReport& report);
nlohmann::ordered_json diffToJson(const DiffReport& report);
std::string diffToJunit(const DiffReport& report);

}  // namespace scanback::compare
