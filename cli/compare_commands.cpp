// `scanback rerun` and `scanback trace diff` (compare/rerun.h, compare/trace_diff.h): would a changed
// program have done better on a recorded day, and what exactly does it change.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/trace_inspect.h"
#include "compare/rerun.h"
#include "compare/trace_diff.h"

namespace scanback::cli {

namespace {

// Prints how far a long rerun has got, at most every two seconds of wall time.
class RerunProgress {
 public:
  void at(uint64_t cycle) {
    if ((++calls_ & 0xFFFF) != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(2)) return;
    last_ = now;
    std::cerr << fmt::format("scanback: rerun: cycle {}\n", cycle);
  }

 private:
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

int rerunCommand(const RerunArgs& args) {
  CompileOptions compileOptions;
  compileOptions.strict = args.strict;
  {
    // A unit test's recording (scanback test --record-failures) reruns the same test.
    std::string error;
    std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::open(args.trace, error);
    if (!reader) {
      std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
      return kExitUsage;
    }
    compileOptions.test = reader->header().options.test;
  }
  std::shared_ptr<const Program> program = compileFiles(args.files, compileOptions);
  if (!program) return kExitCompile;
  compare::RerunOptions options;
  options.program = program;
  options.record = args.record;
  options.stopOnDivergence = args.stopOnDivergence;
  if (!args.cycles.empty()) {
    uint64_t from = 0, to = UINT64_MAX;
    std::string error;
    if (!parseCycleRange(args.cycles, from, to, error)) {
      std::cerr << "scanback: --cycles: " << error << "\n";
      return kExitUsage;
    }
    options.firstCycle = from;
    if (to != UINT64_MAX) options.lastCycle = to;
  }
  RerunProgress progress;
  options.progress = [&progress](uint64_t cycle) { progress.at(cycle); };
  compare::RerunResult result;
  std::string error;
  const auto wallStart = std::chrono::steady_clock::now();
  if (!compare::rerun(args.trace, options, result, error)) {
    std::cerr << fmt::format("scanback: rerun of {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  std::cerr << fmt::format("scanback: rerun of {} (cycles {}..{}) with {}\n", args.trace, result.firstCycle,
                           result.firstCycle + result.cycles - (result.cycles ? 1 : 0),
                           result.sameProgram ? "the recorded program" : "program " + result.programHash[1]);
  for (const std::string& w : result.warnings) std::cerr << "  warning: the recording: " << w << "\n";
  if (result.coldStart)
    std::cerr << "  start: cycle 0, from the new version's initial values\n";
  else if (result.sameProgram)
    std::cerr << fmt::format("  start: cycle {}, from the recorded state\n", result.firstCycle);
  else
    std::cerr << fmt::format("  start: cycle {}, from the recorded state: {} values kept by name and type\n",
                             result.firstCycle, result.plan.kept);
  if (!result.coldStart) {
    for (const std::string& r : result.plan.reset) std::cerr << "    reset: " << r << "\n";
    for (const std::string& r : result.plan.removed) std::cerr << "    gone: " << r << "\n";
  }
  if (result.scheduleSplit)
    std::cerr << fmt::format(
        "  schedule: the tasks changed, so the new version's schedule differs from the recording's from {}; the "
        "recorded scan inputs follow by virtual time from there\n",
        result.scheduleNote);
  if (!result.dropped.empty()) {
    std::cerr << "  inputs the new version no longer has (not applied):\n";
    for (const compare::DroppedInput& d : result.dropped)
      std::cerr << fmt::format("    {}: {}; in {} cycle{}, the first {}\n", d.what, d.why, d.cycles,
                               d.cycles == 1 ? "" : "s", d.firstCycle);
  }
  if (result.recordedFault && !result.fault) std::cerr << "  the recording faulted: " << *result.recordedFault << "\n";
  if (result.fault) std::cerr << "  the new version faulted: " << *result.fault << "\n";
  if (result.divergenceCycle)
    std::cerr << fmt::format("  first divergence from the recording: cycle {}: {}\n", *result.divergenceCycle,
                             result.divergence);
  std::cerr << fmt::format("  {} cycles in {:.3f} s; ended: {}\n", result.cycles, seconds, result.ended);
  if (!args.record.empty())
    std::cerr << fmt::format("  recorded to {} ({} chunk{}, {} bytes)\n", args.record, result.chunks,
                             result.chunks == 1 ? "" : "s", result.bytesWritten);
  if (result.divergenceCycle) return kExitDivergence;
  if (result.fault) return kExitFault;
  return kExitOk;
}

int traceDiffCommand(const DiffArgs& args) {
  compare::DiffOptions options;
  options.choice.vars = args.vars;
  options.choice.outputs = args.outputs;
  compare::DiffReport report;
  std::string error;
  if (!compare::diffTraces(args.a, args.b, options, report, error)) {
    std::cerr << "scanback: trace diff: " << error << "\n";
    return kExitUsage;
  }
  if (!args.junit.empty()) {
    std::ofstream out(args.junit, std::ios::binary | std::ios::trunc);
    out << compare::diffToJunit(report);
    out.flush();
    if (!out) {
      std::cerr << fmt::format("scanback: cannot write {}: {}\n", args.junit, std::strerror(errno));
      return kExitUsage;
    }
  }
  if (args.json)
    std::cout << compare::diffToJson(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else
    std::cout << compare::formatDiff(report);
  return report.equal() ? kExitOk : kExitDifferent;
}

}  // namespace scanback::cli
