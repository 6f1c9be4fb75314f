// Trace inspection for humans and tools: `scanback trace info | dump | hits`. Everything here
// reads the trace only (no VM runs); `hits` compiles the header's sources to map FILE:LINE to
// statement ids, which is why this lives with the command (docs/architecture.md: layers) and not
// in traces/, which knows nothing of the compiler.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/trace_reader.h"

namespace scanback::cli {

// `scanback trace info`: version, program, tasks, cycles, virtual duration, chunks, sizes,
// compression ratio, bytes per cycle, gaps, forces (the changes recorded; per forced target its
// value and the cycles it was held in), fault, warnings. Decodes every chunk for its forces (and
// compiles the recorded program to show their values when there are any), the fault and the open
// cycle; no VM runs.
std::string traceInfoText(const trace::TraceReader& reader);
nlohmann::ordered_json traceInfoJson(const trace::TraceReader& reader);

// What is damaged in the file, one line each: parts missing or repeated, a corrupt block (what
// follows it is unreadable), an index that could not be used (with its offset, and that the blocks
// were found by scanning instead). Empty: nothing is. `trace info` and `trace verify` both report
// these, so that they agree.
std::vector<std::string> damageLines(const trace::TraceReader& reader);

// `scanback trace dump`: the header, then every block in file order with the cycles in
// fromCycle..toCycle (inclusive) of each chunk: number, task, start time, steps, image hash, path,
// input changes and writes as offset=hex (offset.bit=v for single bits). Unreadable blocks are
// reported in place and the dump goes on.
void traceDump(trace::TraceReader& reader, uint64_t fromCycle, uint64_t toCycle, std::ostream& out);
std::string traceDump(trace::TraceReader& reader, uint64_t fromCycle = 0, uint64_t toCycle = UINT64_MAX);
// "A..B", "A..", "..B" or "A" (inclusive) for --cycles.
[[nodiscard]] bool parseCycleRange(const std::string& text, uint64_t& fromCycle, uint64_t& toCycle, std::string& error);
// `--cycles TEXT` of a command over `trace`, whose recorded cycles are first..last: narrows them to
// the range TEXT names (an empty TEXT keeps them). False with `error` when TEXT is malformed or
// lies outside them.
[[nodiscard]] bool narrowToCycles(const std::string& text, const std::string& trace, uint64_t& first, uint64_t& last,
                                  std::string& error);

// The text of the recorded source file that `file` names (as `trace hits` finds it: the recorded
// path, a path ending in it or it in FILE, or the file's name), or an error.
[[nodiscard]] std::optional<std::string> recordedSource(const trace::TraceReader& reader, const std::string& file,
                                                        std::string& error);
// For `trace hits FILE:LINE`: when FILE exists on disk and differs from the source the recording
// started with, one line saying so (that line numbers are the recorded version's, and how to see
// it); empty otherwise.
std::string editedSourceNotice(const trace::TraceReader& reader, const std::string& fileLine,
                               const std::string& tracePath);

// `scanback trace hits FILE:LINE`.
struct HitsResult {
  std::string file;  // the source file as recorded in the trace
  uint32_t line = 0;
  std::vector<uint32_t> statements;                   // ids of the statements starting on that line (header's program)
  std::vector<std::pair<uint64_t, uint32_t>> cycles;  // (cycle, times executed), ascending
  uint64_t totalHits = 0;                             // sum of the counts
  uint64_t cyclesSearched = 0;                        // recorded cycles with a statement path
  uint64_t cyclesWithoutPath = 0;                     // recorded cycles without one
  std::vector<std::string> warnings;                  // unreadable chunks, program versions without the line, ...
};
// FILE may be the recorded path, a path ending in it (or it in FILE), or just the file's name.
// Errors (with nullopt): bad FILE:LINE, unknown or ambiguous file, no statement starts on that line
// (nearby statement lines are suggested), the trace's program does not compile, the trace has no
// statement paths.
[[nodiscard]] std::optional<HitsResult> traceHits(trace::TraceReader& reader, const std::string& fileLine,
                                                  std::string& error);
std::string hitsText(const HitsResult& hits);
nlohmann::ordered_json hitsJson(const HitsResult& hits);

}  // namespace scanback::cli
