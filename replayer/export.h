// Exporting variables over a recorded range: CSV (one row per cycle) or a VCD (IEEE 1364 value
// change dump) that GTKWave opens. Values are those at the end of each cycle (Replayer::cycleEnds,
// which the write index lets skip chunks that change none of them). `scanback trace export` is the
// command (cli/trace_export.cpp); benchmarks call it here.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "replayer/replayer.h"
#include "vm/runtime/values.h"

namespace scanback::replay {

enum class ExportFormat { Csv, Vcd };

struct ExportOptions {
  ExportFormat format = ExportFormat::Vcd;
  std::vector<VariableLocation> variables;  // scalars (allScalars, selectScalars)
  uint64_t firstCycle = 0, lastCycle = 0;   // recorded cycles, inclusive (gaps have no rows)
  std::string title;                        // VCD: named in its $comment (the trace's path)
  // Another name of each variable, index for index ("": none; or empty: none has one): a dotted
  // path, such as the device and Modbus address an I/O configuration gives a located variable
  // (cli/trace_export.cpp). CSV heads a column "path (alias)", or the alias alone with aliasesOnly.
  // A VCD declares the signal under its path and again, with the same identifier code (one signal,
  // two names), under aliasScope.alias; with aliasesOnly under the alias alone.
  std::vector<std::string> aliases;
  std::string aliasScope;
  bool aliasesOnly = false;
  std::function<void(uint64_t cycle)> progress;  // called after each cycle (may be null)
};

// CSV: a header `cycle,time,<path>...`, then per cycle its number, its virtual start time in ns
// and each value as the Variables view shows it (fields with commas or quotes quoted).
// VCD: `$timescale 1ns`; one scope per program instance, function block instance and structure
// (globals in GLOBALS); BOOL as 1-bit wires, integers, bit strings, TIME and dates as integer
// vectors of the type's width (TIME in ns), REAL/LREAL as real, enumerations and strings as
// GTKWave string values (white space, control characters, backslash and double quote as \xHH;
// an empty string as ""). Every change is stamped with the virtual start time of the cycle it
// happened in; cycles starting at the same time share one timestamp (the last value wins).
// False with `error` when the trace cannot be replayed or `out` fails.
[[nodiscard]] bool exportSignals(Replayer& replayer, const ExportOptions& options, std::ostream& out,
                                 std::string& error);

}  // namespace scanback::replay
