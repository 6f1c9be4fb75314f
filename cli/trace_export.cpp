// `scanback trace export`: variables over a recorded range as CSV or VCD (replayer/export.h):
// the arguments, the variable list, the output file and progress on long exports.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/trace_inspect.h"
#include "replayer/export.h"
#include "runtime/io/config.h"
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

// Text order with runs of digits compared as numbers: "coil_2" < "coil_10".
bool naturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string_view da(a.data() + i, ie - i), db(b.data() + j, je - j);
      if (da.size() != db.size()) return da.size() < db.size();  // no leading zeros in addresses
      if (da != db) return da < db;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// The Modbus name of each variable the trace's I/O configuration maps ("" for the others),
// index for index; null with `error` when the trace carries no configuration or it cannot be read.
std::optional<std::vector<std::string>> modbusNames(const trace::HeaderData& header, const Program& program,
                                                    const std::vector<VariableLocation>& variables,
                                                    const std::string& tracePath, std::string& error) {
  if (header.ioConfig.empty()) {
    error = fmt::format(
        "{}: --names: the trace carries no I/O configuration: it was not recorded with "
        "`scanback run --io FILE` (an --io-serve server's map is fixed: docs/fieldbus-server.md)",
        tracePath);
    return std::nullopt;
  }
  std::optional<runtime::io::IoConfig> io =
      runtime::io::parseIoConfig(header.ioConfig, header.ioConfigPath, nullptr, error);
  if (!io) {
    error = fmt::format("{}: --names: the I/O configuration it carries cannot be read here: {}", tracePath, error);
    return std::nullopt;
  }
  std::vector<std::string> names;
  names.reserve(variables.size());
  for (const VariableLocation& v : variables) {
    char area = 0;
    uint32_t byte = 0;
    if (v.offset >= program.input.offset && v.offset < program.input.offset + program.input.size) {
      area = 'I';
      byte = v.offset - program.input.offset;
    } else if (v.offset >= program.output.offset && v.offset < program.output.offset + program.output.size) {
      area = 'Q';
      byte = v.offset - program.output.offset;
    }
    std::optional<std::string> name;
    if (area != 0) {
      const uint64_t firstBit = uint64_t{byte} * 8 + (v.bit >= 0 ? static_cast<uint64_t>(v.bit) : 0);
      name = runtime::io::modbusName(*io, area, firstBit, v.bit >= 0 ? 1 : uint64_t{v.type->size} * 8);
    }
    names.push_back(name.value_or(""));
  }
  return names;
}

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
  if (!narrowToCycles(args.cycles, args.trace, first, last, error)) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }

  std::vector<VariableLocation> scalars =
      args.vars.empty() ? allScalars(program) : selectScalars(program, args.vars, error);
  if (scalars.empty()) {
    std::cerr << fmt::format("scanback: {}: --vars: {}\n", args.trace,
                             error.empty() ? "the program has no variable to export" : error);
    return kExitUsage;
  }
  std::vector<std::string> aliases;
  if (args.names != "variables") {
    std::optional<std::vector<std::string>> names = modbusNames(r->header(), program, scalars, args.trace, error);
    if (!names) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
    aliases = std::move(*names);
    if (args.names == "modbus") {
      // Only what a device exchanges has a Modbus name.
      std::vector<VariableLocation> mapped;
      std::vector<std::string> mappedNames;
      for (size_t i = 0; i < scalars.size(); ++i)
        if (!aliases[i].empty()) {
          mapped.push_back(scalars[i]);
          mappedNames.push_back(aliases[i]);
        }
      if (mapped.empty()) {
        std::cerr << fmt::format(
            "scanback: {}: --names modbus: {} of the I/O configuration {} (--names both names them all)\n", args.trace,
            args.vars.empty() ? "no variable of the program is on a map" : "none of --vars is on a map",
            r->header().ioConfigPath);
        return kExitUsage;
      }
      // By device, area and address ("plant.coil_2" before "plant.coil_10"), as a device's manual
      // lists them.
      std::vector<size_t> order(mapped.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return naturalLess(mappedNames[a], mappedNames[b]); });
      scalars.clear();
      aliases.clear();
      for (size_t i : order) {
        scalars.push_back(std::move(mapped[i]));
        aliases.push_back(std::move(mappedNames[i]));
      }
    }
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
  options.aliases = std::move(aliases);
  options.aliasScope = "MODBUS";
  options.aliasesOnly = args.names == "modbus";
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
