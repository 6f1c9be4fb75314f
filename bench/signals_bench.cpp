// The write index (traces/trace.capnp: Chunk.writeIndex) on the 1,000,000-cycle plant recording
// of replay_bench (bench/plant_history.h), each search timed with the index and without it
// (ReplayOptions::useWriteIndex) in the same run (bench/README.md, "signals_bench"):
//   BM_ReverseDataWrite — reverse continue to a write 600,000 cycles back (target: < 50 ms);
//   BM_TraceWhy — the last changes of a variable last written 900,000 cycles ago, as
//     `trace why` finds them: open the trace, seek, lastChanges (target: < 100 ms);
//   BM_Export20Signals — a VCD of 20 variables over the whole recording (target: < 2 s).
// Each reports median_ms (index) and baseline_median_ms (no index) and their ratio speedup.
//
// Flags, among Google Benchmark's: --cycles=N, --stimulus-period=N, --samples=F (bench/plant_history.h).
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "bench/plant_history.h"
#include "replayer/export.h"
#include "replayer/replayer.h"
#include "vm/runtime/values.h"

using namespace scanback;
using namespace scanback::bench;
using replay::Position;

namespace {

// Tank.firstScan is cleared in cycle 0 and never written again.
constexpr const char* kOnceWritten = "Tank.firstScan";
// 600,000 and 900,000 cycles back on the default 1,000,000-cycle recording (60 % and 90 % of a
// shorter one, --cycles=N).
uint64_t dataWriteBack() { return commonFlags.cycles * 6 / 10; }
uint64_t whyBack() { return commonFlags.cycles * 9 / 10; }
constexpr clockid_t kCpuClock = CLOCK_THREAD_CPUTIME_ID;

struct Setup : PlantHistory {
  Setup() : PlantHistory("signals_bench") {}
  std::unique_ptr<replay::Replayer> indexed, plain;
};

[[nodiscard]] std::unique_ptr<replay::Replayer> openReplayer(const std::string& path, bool useIndex,
                                                             std::string& error) {
  replay::ReplayOptions options;
  options.program = plant();
  options.useWriteIndex = useIndex;
  return replay::Replayer::open(path, options, error);
}

Setup& setup() {
  static Setup shared = [] {
    Setup s;
    if (!record(s, {kOnceWritten})) return s;
    s.indexed = openReplayer(s.tracePath, true, s.error);
    if (s.indexed) s.plain = openReplayer(s.tracePath, false, s.error);
    return s;
  }();
  return shared;
}

[[nodiscard]] std::optional<replay::Watch> watchOf(const replay::Replayer& r, const char* name, std::string& error) {
  const std::optional<VariableLocation> v = findVariable(r.program(), name, error);
  if (!v) return std::nullopt;
  return replay::Watch{v->offset, v->bit >= 0 ? 1u : v->type->size, v->bit};
}

// Times `op(replayer)` `n` times with the index and `baseline` times without; reports both and the
// speedup. `op` returns false (with a reason in `wrong`) when the result is not the expected one.
template <class Op>
void compare(benchmark::State& state, uint64_t baseline, Op&& op) {
  Setup& s = setup();
  if (!s.indexed || !s.plain) {
    state.SkipWithError(("setup: " + s.error).c_str());
    return;
  }
  Samples withIndex(kCpuClock), without(kCpuClock);
  uint64_t wrong = 0;
  const uint64_t skippedBefore = s.indexed->chunksSkipped();
  uint64_t i = 0;
  for (auto _ : state) {
    // Alternate, so that both see the same machine; the baseline is far slower, so fewer of it.
    if (i < baseline) without.time(state, [&] { return wrong += !op(*s.plain); });
    withIndex.time(state, [&] { return wrong += !op(*s.indexed); });
    ++i;
  }
  report(state, withIndex);
  const double median = quantile(withIndex.wallMs, 0.5), baselineMedian = quantile(without.wallMs, 0.5);
  state.counters["baseline_median_ms"] = baselineMedian;
  state.counters["baseline_samples"] = static_cast<double>(without.wallMs.size());
  state.counters["speedup"] = median > 0 ? baselineMedian / median : 0;
  state.counters["chunks_skipped_per_call"] =
      static_cast<double>(s.indexed->chunksSkipped() - skippedBefore) / static_cast<double>(withIndex.wallMs.size());
  state.counters["wrong"] = static_cast<double>(wrong);
}

void BM_ReverseDataWrite(benchmark::State& state) {
  std::string error;
  compare(state, samples(3), [&](replay::Replayer& r) {
    const std::optional<replay::Watch> w = watchOf(r, kOnceWritten, error);
    if (!w || !r.seek(Position{dataWriteBack(), 0}, error)) return false;
    const std::optional<replay::Stop> stop = r.reverseContinue({}, {*w}, error);
    return stop && stop->reason == replay::StopReason::DataWrite && stop->position.cycle == 0;
  });
}

void BM_TraceWhy(benchmark::State& state) {
  Setup& s = setup();
  std::string error;
  // As `scanback trace why` runs: open the trace, seek, the last 5 changes (there is one).
  compare(state, samples(3), [&](replay::Replayer& like) {
    std::unique_ptr<replay::Replayer> r = openReplayer(s.tracePath, &like == s.indexed.get(), error);
    if (!r) return false;
    const std::optional<replay::Watch> w = watchOf(*r, kOnceWritten, error);
    if (!w || !r->seek(Position{whyBack(), 0}, error)) return false;
    const std::vector<replay::Change> changes = r->lastChanges(*w, Position{whyBack(), 1}, 5, error);
    return error.empty() && changes.size() == 1 && changes[0].position.cycle == 0;
  });
}

void BM_Export20Signals(benchmark::State& state) {
  Setup& s = setup();
  if (!s.indexed) {
    state.SkipWithError(("setup: " + s.error).c_str());
    return;
  }
  // 20 of the plant's values, spread over its programs and globals.
  const std::vector<VariableLocation> all = allScalars(*plant());
  replay::ExportOptions options;
  for (size_t k = 0; k < 20 && !all.empty(); ++k) options.variables.push_back(all[k * all.size() / 20]);
  options.firstCycle = 0;
  options.lastCycle = s.cycles - 1;
  std::string names;
  for (const VariableLocation& v : options.variables) names += v.path + " ";
  std::fprintf(stderr, "signals_bench: export of %s\n", names.c_str());
  compare(state, samples(2), [&](replay::Replayer& r) {
    std::ostringstream out;
    std::string error;
    if (!replay::exportSignals(r, options, out, error)) return false;
    return out.str().size() > 1000;
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::vector<char*>> rest =
      parseFlags(argc, argv, "signals_bench", [](std::string_view) { return false; });
  if (!rest) return 1;
  using benchmark::kMillisecond;
  benchmark::RegisterBenchmark(("BM_ReverseDataWrite/cycles_back:" + std::to_string(dataWriteBack())).c_str(),
                               BM_ReverseDataWrite)
      ->Iterations(samples(20))
      ->UseManualTime()
      ->Unit(kMillisecond);
  benchmark::RegisterBenchmark(("BM_TraceWhy/cycles_back:" + std::to_string(whyBack())).c_str(), BM_TraceWhy)
      ->Iterations(samples(20))
      ->UseManualTime()
      ->Unit(kMillisecond);
  benchmark::RegisterBenchmark("BM_Export20Signals", BM_Export20Signals)
      ->Iterations(samples(3))
      ->UseManualTime()
      ->Unit(kMillisecond);
  const bool ok = runBenchmarks(*rest);
  removePlantTrace();
  return ok ? 0 : 1;
}
