// `scanback trace diff` (compare/trace_diff.h) on two recordings of examples/plant of --cycles
// cycles (1,000,000 by default) that differ in one variable from 90 % of the way on: A is the
// recording of replay_bench (bench/plant_history.h); B is the same run with gAlarms[3].text
// written by an HMI at cycle 0.9 N. Each variant is timed against its baseline in the same run
// (bench/README.md, "compare_bench"):
//   BM_DiffDefault — the outputs and every variable (what `trace diff A B` compares), with the
//     write index and without it (DiffOptions::useWriteIndex; target: < 2 s for 1,000,000 cycles);
//   BM_DiffOneVariable — `--vars Tank.firstScan` (written in cycle 0 only), with the write index
//     (chunks ruled out on both sides are not re-executed) and without it (target: < 0.2 s);
//   BM_DiffReaders — the default diff with each trace read on its own thread, against the two
//     readers taking turns (DiffOptions::parallelReaders);
//   BM_Rerun — `scanback rerun` of A with the same program (no --record), against a plain run of
//     the same cycles with the same inputs (target: <= 1.2 times).
// Every call's report is checked: the first divergence at cycle 0.9 N, the one variable equal.
//
// Flags, among Google Benchmark's: --cycles=N, --stimulus-period=N, --samples=F (bench/plant_history.h).
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include "bench/plant_history.h"
#include "compare/rerun.h"
#include "compare/trace_diff.h"
#include "recorder/recorder.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/stimulus.h"

using namespace scanback;
using namespace scanback::bench;

namespace {

// Tank.firstScan is cleared in cycle 0 and never written again.
constexpr const char* kUnchanged = "Tank.firstScan";
uint64_t changeCycle() { return commonFlags.cycles * 9 / 10; }
// Wall time: a diff's work is on its reader threads.
constexpr clockid_t kCpuClock = CLOCK_PROCESS_CPUTIME_ID;

struct Setup : PlantHistory {
  Setup() : PlantHistory("compare_bench") {}
  std::string changedPath;  // B
};

// Records B: the run record() makes of A, with gAlarms[3].text written at changeCycle().
bool recordChanged(Setup& s) {
  std::string error;
  const std::shared_ptr<const Program> program = plant();
  PlantInputs inputs(error);
  if (!error.empty()) {
    s.error = error;
    return false;
  }
  const std::string csv = "cycle,gAlarms[3].text\n" + std::to_string(changeCycle()) + ",'Filler blocked'\n";
  std::optional<Stimulus> hmi = Stimulus::parse(csv, "compare_bench", *program, error);
  if (!hmi) {
    s.error = error;
    return false;
  }
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = s.changedPath;
  auto rec = recorder::Recorder::start(rt, options, error);
  if (!rec) {
    s.error = error;
    return false;
  }
  for (uint64_t i = 0; i < commonFlags.cycles; ++i) {
    inputs.apply(rt);
    hmi->apply(i, rt);
    rt.runCycle();
    while (rec->backlogged()) std::this_thread::yield();
  }
  if (!rec->finish(error)) {
    s.error = "recording B: " + error;
    return false;
  }
  return true;
}

Setup& setup() {
  static Setup shared = [] {
    Setup s;
    s.changedPath = s.tracePath + ".b";
    if (record(s, {}) && !recordChanged(s)) std::filesystem::remove(s.changedPath);
    return s;
  }();
  return shared;
}

// Times the diff with `options` and with `baseline` (alternating, so both see the same machine;
// `baselineCalls` of the baseline), checks each report with `right`, and reports both medians and
// their ratio.
template <class Right>
void timeDiff(benchmark::State& state, const compare::DiffOptions& options, const compare::DiffOptions& baseline,
              uint64_t baselineCalls, Right&& right) {
  Setup& s = setup();
  if (!s.error.empty()) {
    state.SkipWithError(("setup: " + s.error).c_str());
    return;
  }
  Samples measured(kCpuClock), base(kCpuClock);
  uint64_t wrong = 0, skipped = 0, i = 0;
  auto diff = [&](const compare::DiffOptions& o) {
    compare::DiffReport report;
    std::string error;
    const bool ok = compare::diffTraces(s.tracePath, s.changedPath, o, report, error);
    if (!ok) std::fprintf(stderr, "compare_bench: %s\n", error.c_str());
    skipped += report.chunksSkipped[0] + report.chunksSkipped[1];
    return ok && right(report);
  };
  for (auto _ : state) {
    if (i < baselineCalls) base.time(state, [&] { return wrong += !diff(baseline); });
    const uint64_t skippedBefore = skipped;
    measured.time(state, [&] { return wrong += !diff(options); });
    state.counters["chunks_skipped_per_call"] = static_cast<double>(skipped - skippedBefore);
    ++i;
  }
  report(state, measured);
  const double median = quantile(measured.wallMs, 0.5), baselineMedian = quantile(base.wallMs, 0.5);
  state.counters["baseline_median_ms"] = baselineMedian;
  state.counters["baseline_cpu_median_ms"] = quantile(base.cpuMs, 0.5);
  state.counters["speedup"] = median > 0 ? baselineMedian / median : 0;
  state.counters["wrong"] = static_cast<double>(wrong);
}

// The default comparison: the first divergence where B's HMI write went in.
bool divergesAtTheChange(const compare::DiffReport& r) {
  return r.divergence && r.divergence->cycle == changeCycle() && !r.schedule && r.comparedCycles == commonFlags.cycles;
}

void BM_DiffDefault(benchmark::State& state) {
  compare::DiffOptions indexed, plain;
  plain.useWriteIndex = false;
  timeDiff(state, indexed, plain, samples(2), divergesAtTheChange);
}

void BM_DiffOneVariable(benchmark::State& state) {
  compare::DiffOptions indexed, plain;
  indexed.choice.vars = kUnchanged;
  plain.choice.vars = kUnchanged;
  plain.useWriteIndex = false;
  timeDiff(state, indexed, plain, samples(2), [](const compare::DiffReport& r) {
    return r.equal() && r.values.size() == 1 && r.comparedCycles == commonFlags.cycles;
  });
}

void BM_DiffReaders(benchmark::State& state) {
  compare::DiffOptions parallel, turns;
  turns.parallelReaders = false;
  timeDiff(state, parallel, turns, samples(3), divergesAtTheChange);
}

void BM_Rerun(benchmark::State& state) {
  Setup& s = setup();
  if (!s.error.empty()) {
    state.SkipWithError(("setup: " + s.error).c_str());
    return;
  }
  constexpr clockid_t kThread = CLOCK_THREAD_CPUTIME_ID;
  Samples rerun(kThread), plain(kThread);
  uint64_t wrong = 0;
  for (auto _ : state) {
    // The baseline: what `scanback run` does with the same inputs, unrecorded.
    plain.time(state, [&] {
      std::string error;
      PlantInputs inputs(error);
      Runtime rt(plant());
      for (uint64_t i = 0; i < commonFlags.cycles; ++i) {
        inputs.apply(rt);
        rt.runCycle();
      }
      return wrong += rt.cycle() != commonFlags.cycles;
    });
    rerun.time(state, [&] {
      compare::RerunOptions options;
      options.program = plant();
      compare::RerunResult result;
      std::string error;
      const bool ok = compare::rerun(s.tracePath, options, result, error);
      if (!ok) std::fprintf(stderr, "compare_bench: %s\n", error.c_str());
      const bool right = ok && result.cycles == commonFlags.cycles && result.sameProgram;
      if (ok && !right)
        std::fprintf(stderr, "compare_bench: the rerun ran %llu cycles (ended: %s), %s\n",
                     static_cast<unsigned long long>(result.cycles), result.ended.c_str(),
                     result.sameProgram ? "the same program" : "another program");
      return wrong += !right;
    });
  }
  report(state, rerun);
  const double median = quantile(rerun.wallMs, 0.5), baselineMedian = quantile(plain.wallMs, 0.5);
  state.counters["baseline_median_ms"] = baselineMedian;
  state.counters["ratio"] = baselineMedian > 0 ? median / baselineMedian : 0;
  state.counters["wrong"] = static_cast<double>(wrong);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::vector<char*>> rest =
      parseFlags(argc, argv, "compare_bench", [](std::string_view) { return false; });
  if (!rest) return 1;
  using benchmark::kMillisecond;
  const std::string n = "/cycles:" + std::to_string(commonFlags.cycles);
  benchmark::RegisterBenchmark(("BM_DiffDefault" + n).c_str(), BM_DiffDefault)
      ->Iterations(samples(3))
      ->UseManualTime()
      ->Unit(kMillisecond);
  benchmark::RegisterBenchmark(("BM_DiffOneVariable" + n).c_str(), BM_DiffOneVariable)
      ->Iterations(samples(10))
      ->UseManualTime()
      ->Unit(kMillisecond);
  benchmark::RegisterBenchmark(("BM_DiffReaders" + n).c_str(), BM_DiffReaders)
      ->Iterations(samples(3))
      ->UseManualTime()
      ->Unit(kMillisecond);
  benchmark::RegisterBenchmark(("BM_Rerun" + n).c_str(), BM_Rerun)
      ->Iterations(samples(3))
      ->UseManualTime()
      ->Unit(kMillisecond);
  const bool ran = runBenchmarks(*rest);
  if (plantHistoryMade()) {
    removePlantTrace();
    std::error_code ignored;
    std::filesystem::remove(setup().changedPath, ignored);
  }
  return ran ? 0 : 1;
}
