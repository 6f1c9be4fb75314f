// `scanback trace export`: variables over a recorded range as CSV or VCD (replayer/export.h):
// the arguments, the variable list, the output file and progress on long exports.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/trace_inspect.h"
#include "replayer/export.h"
#include "vm/runtime/values.h"

namespace scanback::cli {

namespace {

// Prints how far a long export has got, at most every two seconds of wall time.
class Progress {
 public:
  Progress(uint64_t first, uint64_t last) : first_(first), total_(last - first + 1) {}
  void at(uint64_t cycle) {
    if ((++calls_ & 0xFFF) != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(2)) return;
    last_ = now;
    std::cerr << fmt::format("scanback: exporting: cycle {} of {}..{} ({:.0f} %)\n", cycle, first_, first_ + total_ - 1,
                             100.0 * static_cast<double>(cycle - first_ + 1) / total_);
    printed_ = true;
  }
  void done() const {
    if (printed_) std::cerr << "scanback: exporting: done\n";
  }

 private:
  uint64_t first_, total_;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  bool printed_ = false;
};

}  // namespace

int traceExportCommand(const ExportArgs& args) {
  if (args.vcd.empty() == args.csv.empty()) {
    std::cerr << "scanback: trace export needs exactly one of --vcd FILE and --csv FILE\n";
    return kExitUsage;
  }
  std::string error;
  std::unique_ptr<replay::Replayer> r = replay::Replayer::open(args.trace, replay::ReplayOptions{}, error);
  if (!r) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  for (const std::string& w : r->history().warnings())
    std::cerr << fmt::format("scanback: warning: {}: {}\n", args.trace, w);
  if (r->history().empty()) {
    std::cerr << fmt::format("scanback: {}: the trace holds no recorded cycle\n", args.trace);
    return kExitUsage;
  }
  const Program& program = r->program();

  uint64_t first = r->history().firstCycle(), last = r->history().endCycle() - 1;
  if (!args.cycles.empty()) {
    uint64_t from = 0, to = UINT64_MAX;
    if (!parseCycleRange(args.cycles, from, to, error)) {
      std::cerr << "scanback: --cycles: " << error << "\n";
      return kExitUsage;
    }
    if (to < first || from > last || from > to) {
      std::cerr << fmt::format("scanback: {}: --cycles {} is outside the recorded cycles {}..{}\n", args.trace,
                               args.cycles, first, last);
      return kExitUsage;
    }
    first = std::max(first, from);
    last = std::min(last, to);
  }

  const std::vector<VariableLocation> scalars =
      args.vars.empty() ? allScalars(program) : selectScalars(program, args.vars, error);
  if (scalars.empty()) {
    std::cerr << fmt::format("scanback: {}: --vars: {}\n", args.trace,
                             error.empty() ? "the program has no variable to export" : error);
    return kExitUsage;
  }
  const std::string& outPath = args.vcd.empty() ? args.csv : args.vcd;
  std::ofstream out(outPath, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::cerr << fmt::format("scanback: cannot write {}: {}\n", outPath, std::strerror(errno));
    return kExitUsage;
  }
  Progress progress(first, last);
  replay::ExportOptions options;
  options.format = args.vcd.empty() ? replay::ExportFormat::Csv : replay::ExportFormat::Vcd;
  options.variables = scalars;
  options.firstCycle = first;
  options.lastCycle = last;
  options.title = args.trace;
  options.progress = [&progress](uint64_t cycle) { progress.at(cycle); };
  const bool ok = replay::exportSignals(*r, options, out, error);
  progress.done();
  out.flush();
  if (!out) {
    std::cerr << fmt::format("scanback: cannot write {}: {}\n", outPath, std::strerror(errno));
    return kExitUsage;
  }
  if (!ok) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  for (const replay::Divergence& d : r->divergences())
    std::cerr << fmt::format("scanback: warning: {}: replay diverges from the recording at cycle {}: {}\n", args.trace,
                             d.position.cycle, d.what);
  std::cerr << fmt::format("scanback: exported {} variable{} over cycles {}..{} to {}\n", scalars.size(),
                           scalars.size() == 1 ? "" : "s", first, last, outPath);
  return kExitOk;
}

}  // namespace scanback::cli
