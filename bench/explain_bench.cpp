// Explaining a value over a long recording (docs/explain.md; bench/README.md, "explain_bench"):
// a 1,000,000-cycle recording of the small program below, made here (a few seconds), then
//   why:  `trace why Main.y --depth 4` (replay::explainValue): a chain whose leaves were written
//         in cycle 4, a million cycles back; against the same chain without the write index
//         (ReplayOptions::useWriteIndex off: every chunk before the write re-executed), in the
//         same run. Target: well under a second.
//   log:  `trace log` of `a[i] := n + once`, which runs every 100th cycle: 10,000 messages over
//         the million cycles (Replayer::statementHits with the logpoint's message); against a
//         replay of the same cycles without the statement paths (a recording made without them,
//         every chunk re-executed). Target: under 2 s. The runs are spread over every chunk, so
//         the paths save little here: the ratio is about 1.
//   log-early: the same for `early := n`, 10,000 runs in the first 10,000 cycles: the paths let
//         the other 990 chunks be skipped.
// Prints one line per measurement: name, median ms with the index, median ms of the baseline,
// and their ratio. --cycles=N shortens the recording (the default takes about 30 s in all).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dap/session/expressions.h"
#include "recorder/recorder.h"
#include "replayer/replayer.h"
#include "replayer/why.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/values.h"

using namespace scanback;

namespace {

constexpr const char* kProgram = R"(PROGRAM Main
VAR n : DINT; once : DINT; i : DINT; y : DINT; a : ARRAY[0..9] OF DINT; early : DINT; END_VAR
n := n + 1;
IF n = 5 THEN once := 42; END_IF;
IF n MOD 100 = 0 THEN
  i := (n / 100) MOD 10;
  a[i] := n + once;
END_IF;
y := a[3] + once;
IF n <= 10000 THEN
  early := n;
END_IF;
END_PROGRAM
)";
// `a[i] := n + once` runs every 100th cycle, in every chunk; `early := n` in the first 10,000
// cycles only, so the statement paths let all other chunks be skipped.
constexpr uint32_t kLogLine = 7, kEarlyLine = 11;

double nowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool record(const std::shared_ptr<const Program>& program, const std::string& path, uint64_t cycles, bool paths,
            std::string& error) {
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path;
  options.keyframeEvery = 1000;
  options.statements = paths;
  std::unique_ptr<recorder::Recorder> rec = recorder::Recorder::start(rt, options, error);
  if (!rec) return false;
  for (uint64_t c = 0; c < cycles; ++c) {
    if (rt.runCycle() != RunStatus::CycleDone) {
      error = "the program faulted";
      return false;
    }
    while (rec->backlogged()) rec->waitUntilNotBacklogged(std::chrono::seconds(1));
  }
  return rec->finish(error);
}

std::unique_ptr<replay::Replayer> open(const std::string& path, const std::shared_ptr<const Program>& program,
                                       bool useIndex, std::string& error) {
  replay::ReplayOptions options;
  options.program = program;
  options.useWriteIndex = useIndex;
  return replay::Replayer::open(path, options, error);
}

void report(const char* name, const std::vector<double>& indexed, const std::vector<double>& baseline,
            const std::string& detail) {
  const double m = median(indexed), b = median(baseline);
  std::printf("%-9s median_ms %.1f  baseline_median_ms %.1f  speedup %.1f  (%s)\n", name, m, b, m > 0 ? b / m : 0.0,
              detail.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t cycles = 1'000'000;
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    if (arg.starts_with("--cycles=")) {
      cycles = std::stoull(std::string(arg.substr(9)));
    } else {
      std::fprintf(stderr, "explain_bench: unknown argument %s (--cycles=N)\n", argv[k]);
      return 1;
    }
  }
  std::string error;
  Diagnostics diags;
  SourceSet sources;
  sources.add("main.st", kProgram);
  std::shared_ptr<const Program> program = compileProject(sources, diags);
  if (!program) {
    std::fprintf(stderr, "explain_bench: %s\n", diags.format(sources).c_str());
    return 1;
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("explain_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string withPaths = (dir / "paths.trace").string(), withoutPaths = (dir / "nopaths.trace").string();
  const double t0 = nowMs();
  if (!record(program, withPaths, cycles, true, error) || !record(program, withoutPaths, cycles, false, error)) {
    std::fprintf(stderr, "explain_bench: recording: %s\n", error.c_str());
    return 1;
  }
  std::printf("recorded 2 x %llu cycles in %.0f ms\n", static_cast<unsigned long long>(cycles), nowMs() - t0);
  int failures = 0;

  // why: open, resolve, explain at the end; a fresh replayer each time, as the command does.
  const std::optional<VariableLocation> y = findVariable(*program, "Main.y", error);
  if (!y) return 1;
  const replay::WhyTarget target{y->path, y->offset, y->bit, y->type};
  auto why = [&](bool useIndex, size_t& nodes) {
    std::unique_ptr<replay::Replayer> r = open(withPaths, program, useIndex, error);
    if (!r) return false;
    const std::optional<replay::Position> end = r->end();
    if (!end) return false;
    const std::optional<replay::WhyNode> root = replay::explainValue(*r, target, *end, 4, error);
    if (!root) return false;
    std::function<size_t(const replay::WhyNode&)> count = [&](const replay::WhyNode& n) {
      size_t c = 1;
      for (const replay::WhyNode& k : n.reads) c += count(k);
      return c;
    };
    nodes = count(*root);
    // y reads a[3] and once; once was written in cycle 4.
    return root->reads.size() == 2 && root->reads[1].position.cycle == 4;
  };
  std::vector<double> whyIndexed, whyPlain;
  size_t nodes = 0;
  for (int k = 0; k < 5; ++k) {
    const double s = nowMs();
    failures += !why(true, nodes);
    whyIndexed.push_back(nowMs() - s);
  }
  {
    const double s = nowMs();
    failures += !why(false, nodes);
    whyPlain.push_back(nowMs() - s);
  }
  report("why", whyIndexed, whyPlain,
         std::to_string(nodes) + " nodes, depth 4, the deepest written " + std::to_string(cycles - 5) + " cycles back");

  // log: every run of a statement with its message, with the statement paths and without.
  auto logCase = [&](const char* name, uint32_t line, const char* text) {
    uint32_t statement = UINT32_MAX;
    for (uint32_t id = 0; id < program->statements.size(); ++id)
      if (program->statements[id].span.line == line && statement == UINT32_MAX) statement = id;
    const std::function<std::string(const Vm&)> message = dap::compileLogMessage(*program, statement, text, error);
    if (!message) {
      ++failures;
      return;
    }
    auto log = [&](const std::string& path, uint64_t& hits, uint64_t& cyclesRun) {
      std::unique_ptr<replay::Replayer> r = open(path, program, true, error);
      if (!r) return false;
      hits = 0;
      size_t bytes = 0;
      const bool ok = r->statementHits(
          {statement}, 0, cycles - 1,
          [&](replay::Position, uint32_t, const Vm& vm) {
            bytes += message(vm).size();
            ++hits;
            return true;
          },
          error);
      cyclesRun = r->hitCyclesRun();
      return ok && hits == std::min<uint64_t>(cycles / 100, 10000) && bytes > 0;
    };
    std::vector<double> indexed, plain;
    uint64_t hits = 0, runIndexed = 0, runPlain = 0;
    for (int k = 0; k < 3; ++k) {
      const double s = nowMs();
      failures += !log(withPaths, hits, runIndexed);
      indexed.push_back(nowMs() - s);
    }
    const double s = nowMs();
    failures += !log(withoutPaths, hits, runPlain);
    plain.push_back(nowMs() - s);
    report(name, indexed, plain,
           std::to_string(hits) + " messages; cycles re-executed: " + std::to_string(runIndexed) + " with paths, " +
               std::to_string(runPlain) + " without");
  };
  logCase("log", kLogLine, "a[{i}] := {n + once}");
  logCase("log-early", kEarlyLine, "early = {n}");
  std::filesystem::remove_all(dir);
  if (failures) std::fprintf(stderr, "explain_bench: %d runs gave a wrong result (%s)\n", failures, error.c_str());
  return failures ? 1 : 0;
}
