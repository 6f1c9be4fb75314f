// The `scanback` command: compile, run, disassemble ST projects.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>

#include "vm/compiler/compiler.h"
#include "vm/exec/iec_text.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/values.h"

namespace {

using namespace scanback;

constexpr int kExitOk = 0;
constexpr int kExitCompile = 1;
constexpr int kExitUsage = 2;
constexpr int kExitFault = 3;

std::atomic<bool> gInterrupted{false};

std::shared_ptr<const Program> compileFiles(const std::vector<std::string>& files) {
  Diagnostics diags;
  SourceSet sources = loadSourceFiles(files, diags);
  if (diags.hasErrors()) {
    std::cerr << diags.format(sources);
    return nullptr;
  }
  std::shared_ptr<const Program> program = compileProject(sources, diags);
  std::cerr << diags.format(sources);
  return program;
}

// "250ms", "1.5s", "T#2m" -> nanoseconds.
std::optional<int64_t> parseDuration(const Program& program, std::string text, std::string& error) {
  if (text.find('#') == std::string::npos) text = "T#" + text;
  std::vector<uint8_t> bytes;
  if (!encodeValue(program, text, *program.types->elementary(TypeKind::LTime), bytes, error)) return std::nullopt;
  int64_t ns;
  std::memcpy(&ns, bytes.data(), sizeof ns);
  return ns;
}

void printStatistics(const Runtime& rt, double seconds) {
  const Program& p = rt.program();
  const CycleStart next = rt.nextCycle();
  std::cerr << fmt::format("scanback: {} cycles in {:.3f} s of wall time, virtual time {}\n", rt.cycle(), seconds,
                           formatDuration(rt.cycle() ? rt.currentCycle().startNs : 0));
  for (size_t t = 0; t < p.tasks.size(); ++t) {
    const TaskStatistics& s = rt.statistics()[t];
    std::cerr << fmt::format("  task {:<12} interval {:<10} {:>8} cycles, {:>8.1f} statements per cycle (max {})\n",
                             p.tasks[t].name, formatDuration(p.tasks[t].intervalNs), s.cycles,
                             s.cycles ? static_cast<double>(s.statements) / s.cycles : 0.0, s.maxStatements);
  }
  if (rt.totalStatements() > 0)
    std::cerr << fmt::format("  {} statements, {:.1f} ns per statement, {:.2f} us per cycle\n", rt.totalStatements(),
                             seconds * 1e9 / static_cast<double>(rt.totalStatements()),
                             rt.cycle() ? seconds * 1e6 / static_cast<double>(rt.cycle()) : 0.0);
  (void)next;
}

int runCommand(const std::vector<std::string>& files, std::optional<uint64_t> cycles, const std::string& forText,
               const std::string& inputsPath, bool printState, bool realtime, uint64_t budget, bool quiet) {
  std::shared_ptr<const Program> program = compileFiles(files);
  if (!program) return kExitCompile;
  std::optional<int64_t> until;
  if (!forText.empty()) {
    std::string error;
    until = parseDuration(*program, forText, error);
    if (!until) {
      std::cerr << fmt::format("scanback: --for {}: {}\n", forText, error);
      return kExitUsage;
    }
  }
  std::optional<Stimulus> stimulus;
  if (!inputsPath.empty()) {
    std::string error;
    stimulus = Stimulus::load(inputsPath, *program, error);
    if (!stimulus) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
  }
  Runtime rt(program);
  rt.vm().setStatementBudget(budget);
  std::signal(SIGINT, [](int) { gInterrupted = true; });
  const auto wallStart = std::chrono::steady_clock::now();
  int exitCode = kExitOk;
  while (!gInterrupted) {
    if (cycles && rt.cycle() >= *cycles) break;
    const CycleStart next = rt.nextCycle();
    if (until && next.startNs >= *until) break;
    if (realtime) std::this_thread::sleep_until(wallStart + std::chrono::nanoseconds(next.startNs));
    if (stimulus) stimulus->apply(next.cycle, rt);
    if (rt.runCycle() == RunStatus::Faulted) {
      std::cerr << rt.faultMessage() << "\n";
      exitCode = kExitFault;
      break;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  if (printState) std::cout << stateToJson(*program, rt.vm().image()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!quiet) printStatistics(rt, seconds);
  return exitCode;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"scanback: record-and-replay time-travel debugger for IEC 61131-3 Structured Text"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("scanback ") + "0.1.0");

  std::vector<std::string> files;
  auto* check = app.add_subcommand("check", "Compile ST files and report diagnostics (exit 0 ok, 1 on errors)");
  check->add_option("files", files, "ST source files of the project")->required()->check(CLI::ExistingFile);

  std::vector<std::string> runFiles;
  uint64_t cycles = 0;
  std::string forText, inputs;
  bool printState = false, realtime = false, quiet = false;
  uint64_t budget = Vm::kDefaultStatementBudget;
  auto* run = app.add_subcommand("run", "Run the project's tasks on the virtual clock");
  run->add_option("files", runFiles, "ST source files of the project")->required()->check(CLI::ExistingFile);
  auto* cyclesOpt = run->add_option("--cycles", cycles, "Run N cycles in total (all tasks)");
  run->add_option("--for", forText, "Run every cycle released before this virtual time, e.g. 250ms")->excludes(cyclesOpt);
  run->add_option("--inputs", inputs, "Stimulus CSV: cycle,<address or Program.var>,...")->check(CLI::ExistingFile);
  run->add_flag("--print-state", printState, "Print the final state as JSON on stdout");
  run->add_flag("--realtime", realtime, "Pace cycles by the task intervals instead of running as fast as possible");
  run->add_option("--statement-budget", budget, "Statements allowed per cycle before the watchdog faults")
      ->default_val(Vm::kDefaultStatementBudget);
  run->add_flag("--quiet", quiet, "Do not print cycle statistics on stderr");

  std::vector<std::string> disasmFiles;
  auto* disasm = app.add_subcommand("disasm", "Compile and print the bytecode");
  disasm->add_option("files", disasmFiles, "ST source files of the project")->required()->check(CLI::ExistingFile);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }

  if (*check) return compileFiles(files) ? kExitOk : kExitCompile;
  if (*disasm) {
    std::shared_ptr<const Program> program = compileFiles(disasmFiles);
    if (!program) return kExitCompile;
    std::cout << disassemble(*program);
    return kExitOk;
  }
  if (*run) {
    std::optional<uint64_t> limit;
    if (*cyclesOpt) limit = cycles;
    return runCommand(runFiles, limit, forText, inputs, printState, realtime, budget, quiet);
  }
  return kExitUsage;
}
