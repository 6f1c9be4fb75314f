// scan_bench: the speed of the scanback VM on the programs of bench/programs/, next to the Lua 5.4
// twins of bench/lua/ measured in the same run (see bench/README.md).
//
//   BM_Program/NAME   one iteration = one scan cycle of bench/programs/NAME.st
//                     counters: ns_per_cycle, ns_per_statement, statements_per_cycle and, when
//                     lua5.4 is found, lua_ns_per_cycle and scanback_over_lua (target: < 1)
//   BM_PlantObserver  the plant program with a VmObserver that does nothing, alternating blocks of
//                     cycles with and without it: hook_overhead_ratio = with / without
//   BM_Compile        compiling examples/plant/*.st
//
// Times are the CPU time of the benchmark thread (CLOCK_THREAD_CPUTIME_ID), the same kind of clock
// as Lua's os.clock(), so a busy shared machine affects both sides alike.
//
// Own flags (removed before Google Benchmark sees the rest):
//   --summary     print "program, scanback ns/cycle, Lua ns/cycle, ratio" after the run
//   --no-lua      do not run the Lua twins
//   --lua-runs=K  time each Lua twin K times and keep the best (default 1)
// With --benchmark_repetitions=R the summary shows the median of the R runs.
// Environment: SCANBACK_LUA=/path/to/lua5.4 picks the interpreter (default: lua5.4 on PATH).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "vm/compiler/compiler.h"
#include "vm/exec/vm.h"
#include "vm/runtime/runtime.h"

namespace fs = std::filesystem;
using namespace scanback;

namespace {

const fs::path kSourceDir = SCANBACK_SOURCE_DIR;
bool gNoLua = false;
int gLuaRuns = 1;  // --lua-runs=K: the best of K timed Lua runs

int64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

[[nodiscard]] std::shared_ptr<const Program> compileFiles(const std::vector<std::string>& paths, std::string& error) {
  Diagnostics diagnostics;
  SourceSet sources = loadSourceFiles(paths, diagnostics);
  std::shared_ptr<const Program> program = compileProject(sources, diagnostics);
  if (!program || diagnostics.hasErrors()) {
    error = diagnostics.format(sources);
    return nullptr;
  }
  return program;
}

// One compiled program per name, shared by every invocation of its benchmark.
[[nodiscard]] std::shared_ptr<const Program> benchProgram(const std::string& name, std::string& error) {
  static std::map<std::string, std::shared_ptr<const Program>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  auto program = compileFiles({(kSourceDir / "bench" / "programs" / (name + ".st")).string()}, error);
  if (program) cache.emplace(name, program);
  return program;
}

// ---- Lua ----------------------------------------------------------------------------------------

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// The interpreter: $SCANBACK_LUA, or lua5.4 on PATH; empty when there is none.
std::string findLua() {
  if (const char* env = std::getenv("SCANBACK_LUA"); env && *env) return access(env, X_OK) == 0 ? env : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) dir = ".";
    const fs::path candidate = fs::path(dir) / "lua5.4";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

struct LuaTiming {
  double nsPerCycle = 0;
  uint64_t cycles = 0;
};

// `lua5.4 bench/lua/run.lua NAME n` once: its "NAME ns_per_cycle" line.
[[nodiscard]] std::optional<double> runLuaOnce(const std::string& lua, const std::string& name, uint64_t n,
                                               std::string& error) {
  const std::string command =
      fmt::format("{} {} {} {} 2>&1", shellQuote(lua), shellQuote((kSourceDir / "bench" / "lua" / "run.lua").string()),
                  shellQuote(name), n);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    error = fmt::format("cannot run {}: {}", command, std::strerror(errno));
    return std::nullopt;
  }
  std::string output;
  std::array<char, 4096> buffer{};
  size_t got = 0;
  while ((got = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), got);
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = fmt::format("{} failed: {}", command, output);
    return std::nullopt;
  }
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    double ns = 0;
    if (words >> first >> ns && first == name) return ns;
  }
  error = fmt::format("no '{} ns_per_cycle' line in the output of {}:\n{}", name, command, output);
  return std::nullopt;
}

// Lua's CPU time per cycle of the twin, with enough cycles for at least 0.5 s of Lua time. Measured
// once per benchmark per process. Null (and `message` set) when Lua is unavailable.
[[nodiscard]] std::optional<LuaTiming> luaTiming(const std::string& name, std::string& message) {
  struct Entry {
    std::optional<LuaTiming> timing;
    std::string message;
  };
  static std::map<std::string, Entry> cache;
  if (auto it = cache.find(name); it != cache.end()) {
    message = it->second.message;
    return it->second.timing;
  }
  Entry& entry = cache[name];
  static const std::string lua = findLua();
  if (gNoLua) {
    entry.message = "Lua comparison disabled (--no-lua)";
  } else if (lua.empty()) {
    entry.message = "lua5.4 not found (install lua5.4 or set SCANBACK_LUA): no Lua comparison";
  } else {
    constexpr double kMinNs = 0.5e9, kTargetNs = 0.6e9;
    uint64_t n = 32;  // calibration run
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::string error;
      std::optional<double> ns = runLuaOnce(lua, name, n, error);
      if (!ns) {
        entry.message = error;
        break;
      }
      if (*ns * static_cast<double>(n) >= kMinNs) {
        entry.timing = LuaTiming{*ns, n};
        for (int run = 1; run < gLuaRuns; ++run) {
          std::optional<double> again = runLuaOnce(lua, name, n, error);
          if (again) entry.timing->nsPerCycle = std::min(entry.timing->nsPerCycle, *again);
        }
        break;
      }
      const double want = kTargetNs / std::max(*ns, 1.0);
      n = std::max<uint64_t>(n * 2, static_cast<uint64_t>(std::ceil(want)));
    }
    if (!entry.timing && entry.message.empty()) entry.message = "Lua timing did not reach 0.5 s";
  }
  if (!entry.message.empty()) std::cerr << "scan_bench: " << name << ": " << entry.message << "\n";
  message = entry.message;
  return entry.timing;
}

// ---- the summary -------------------------------------------------------------------------------

// A figure from the final runs of a benchmark: Google Benchmark first calls a benchmark with fewer
// iterations to size it; the reported run(s), repetitions included, have the most iterations.
struct FinalFigure {
  int64_t iterations = -1;
  std::vector<double> values;

  void add(int64_t iters, double value) {
    if (iters > iterations) {
      iterations = iters;
      values.clear();
    }
    if (iters == iterations) values.push_back(value);
  }
  std::optional<double> median() const {
    if (values.empty()) return std::nullopt;
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }
};
struct SummaryRow {
  FinalFigure nsPerCycle;
  std::optional<double> luaNsPerCycle;
};
std::map<std::string, SummaryRow>& summary() {
  static std::map<std::string, SummaryRow> rows;
  return rows;
}
FinalFigure gHookRatio, gCompileUs;
const std::vector<std::string> kPrograms = {"loops",   "gcd",   "sieve", "case_sm", "pid",
                                            "strings", "plant", "sort",  "ring"};

// ---- benchmarks --------------------------------------------------------------------------------

void BM_Program(benchmark::State& state, const std::string& name) {
  std::string error;
  std::shared_ptr<const Program> program = benchProgram(name, error);
  if (!program) {
    state.SkipWithError(("compile failed: " + error).c_str());
    return;
  }
  std::string luaMessage;
  const std::optional<LuaTiming> lua = luaTiming(name, luaMessage);

  Runtime rt(program);
  const uint64_t statements0 = rt.totalStatements();
  const int64_t t0 = threadCpuNs();
  for (auto _ : state) {
    if (rt.runCycle() != RunStatus::CycleDone) {
      state.SkipWithError(("fault: " + rt.faultMessage()).c_str());
      return;
    }
  }
  const int64_t t1 = threadCpuNs();
  const double cycles = static_cast<double>(state.iterations());
  const double statements = static_cast<double>(rt.totalStatements() - statements0);
  const double ns = static_cast<double>(t1 - t0);
  const double nsPerCycle = ns / cycles;
  state.counters["ns_per_cycle"] = nsPerCycle;
  state.counters["ns_per_statement"] = statements > 0 ? ns / statements : 0.0;
  state.counters["statements_per_cycle"] = statements / cycles;
  SummaryRow& row = summary()[name];
  row.nsPerCycle.add(state.iterations(), nsPerCycle);
  if (lua) {
    state.counters["lua_ns_per_cycle"] = lua->nsPerCycle;
    state.counters["scanback_over_lua"] = nsPerCycle / lua->nsPerCycle;
    row.luaNsPerCycle = lua->nsPerCycle;
  } else {
    state.SetLabel(luaMessage);
  }
}

class NullObserver final : public VmObserver {
 public:
  bool onStatement(uint32_t, uint64_t) override { return false; }
};

// The plant program twice, in lockstep: one Runtime with a do-nothing observer, one without.
// Blocks of cycles alternate between them (and which one goes first), so both see the same machine
// conditions and the same cycles of the scenario. One iteration = one scan cycle of either.
void BM_PlantObserver(benchmark::State& state) {
  std::string error;
  std::shared_ptr<const Program> program = benchProgram("plant", error);
  if (!program) {
    state.SkipWithError(("compile failed: " + error).c_str());
    return;
  }
  constexpr int kBlock = 64;
  Runtime base(program), hooked(program);
  NullObserver observer;
  hooked.vm().setObserver(&observer);
  int64_t baseNs = 0, hookedNs = 0;
  bool faulted = false;
  auto runBlock = [&faulted](Runtime& rt) {
    const int64_t t0 = threadCpuNs();
    for (int i = 0; i < kBlock; ++i)
      if (rt.runCycle() != RunStatus::CycleDone) faulted = true;
    return threadCpuNs() - t0;
  };
  bool hookedFirst = false;
  while (state.KeepRunningBatch(2 * kBlock)) {
    if (hookedFirst) {
      hookedNs += runBlock(hooked);
      baseNs += runBlock(base);
    } else {
      baseNs += runBlock(base);
      hookedNs += runBlock(hooked);
    }
    hookedFirst = !hookedFirst;
    if (faulted) {
      state.SkipWithError(("fault: " + (base.faulted() ? base : hooked).faultMessage()).c_str());
      return;
    }
  }
  const double cyclesEach = static_cast<double>(hooked.cycle());
  state.counters["ns_per_cycle"] = static_cast<double>(hookedNs) / cyclesEach;
  state.counters["baseline_ns_per_cycle"] = static_cast<double>(baseNs) / cyclesEach;
  const double ratio = baseNs > 0 ? static_cast<double>(hookedNs) / static_cast<double>(baseNs) : 0.0;
  state.counters["hook_overhead_ratio"] = ratio;
  gHookRatio.add(state.iterations(), ratio);
  state.counters["statements_per_cycle"] = static_cast<double>(hooked.totalStatements()) / cyclesEach;
}

void BM_Compile(benchmark::State& state) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "examples" / "plant"))
    if (entry.path().extension() == ".st") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  Diagnostics loadDiagnostics;
  const SourceSet sources = loadSourceFiles(paths, loadDiagnostics);
  if (loadDiagnostics.hasErrors()) {
    state.SkipWithError(loadDiagnostics.format(sources).c_str());
    return;
  }
  size_t bytes = 0, lines = 0;
  for (const std::string& p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes += text.size();
    lines += static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  size_t statements = 0;
  const int64_t t0 = threadCpuNs();
  for (auto _ : state) {
    Diagnostics diagnostics;
    std::shared_ptr<const Program> program = compileProject(sources, diagnostics);
    if (!program) {
      state.SkipWithError(diagnostics.format(sources).c_str());
      return;
    }
    statements = program->statements.size();
    benchmark::DoNotOptimize(program);
  }
  const int64_t t1 = threadCpuNs();
  const double us = static_cast<double>(t1 - t0) / 1e3 / static_cast<double>(state.iterations());
  state.counters["us_per_compile"] = us;
  gCompileUs.add(state.iterations(), us);
  state.counters["source_lines"] = static_cast<double>(lines);
  state.counters["statements"] = static_cast<double>(statements);
  state.counters["lines_per_ms"] = static_cast<double>(lines) / (us / 1e3);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void printSummary() {
  const auto& rows = summary();
  std::cout << "\n";
  if (!rows.empty()) std::cout << "program,  scanback ns/cycle,  Lua ns/cycle,  ratio (scanback/Lua)\n";
  for (const std::string& name : kPrograms) {
    auto it = rows.find(name);
    if (it == rows.end()) continue;
    const SummaryRow& r = it->second;
    const std::optional<double> ns = r.nsPerCycle.median();
    if (!ns) continue;
    if (r.luaNsPerCycle)
      std::cout << fmt::format("{:<9} {:>17.0f}  {:>13.0f}  {:>6.3f}\n", name + ",", *ns, *r.luaNsPerCycle,
                               *ns / *r.luaNsPerCycle);
    else
      std::cout << fmt::format("{:<9} {:>17.0f}  {:>13}  {:>6}\n", name + ",", *ns, "-", "-");
  }
  if (auto ratio = gHookRatio.median())
    std::cout << fmt::format("plant with a do-nothing VmObserver: {:.3f} x the time without\n", *ratio);
  if (auto us = gCompileUs.median()) std::cout << fmt::format("compiling examples/plant/*.st: {:.0f} us\n", *us);
}

}  // namespace

int main(int argc, char** argv) {
  bool printSummaryAtEnd = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--summary") == 0)
      printSummaryAtEnd = true;
    else if (i > 0 && std::strcmp(argv[i], "--no-lua") == 0)
      gNoLua = true;
    else if (i > 0 && std::strncmp(argv[i], "--lua-runs=", 11) == 0)
      gLuaRuns = std::max(1, std::atoi(argv[i] + 11));
    else
      args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);

  for (const std::string& name : kPrograms)
    benchmark::RegisterBenchmark(("BM_Program/" + name).c_str(), BM_Program, name)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_PlantObserver", BM_PlantObserver)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Compile", BM_Compile)->Unit(benchmark::kMicrosecond);

  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (printSummaryAtEnd) printSummary();
  return 0;
}
