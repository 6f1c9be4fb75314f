// The replayer's latencies on a long recording of the plant program (issue 4), measured in one
// run; bench/README.md ("replay_bench") has the results and the targets.
//
// Setup, once per process and outside every timing (bench/plant_history.h, shared with
// dap_replay_bench): examples/plant/*.st is compiled and run live for --cycles cycles (default
// 1,000,000) with examples/plant/stimulus.csv under the recorder (default options: a keyframe
// every 1000 cycles, statement paths) into a temporary trace; the time it took goes to stderr. The
// stimulus covers 500 cycles; it starts over every --stimulus-period cycles (default 3000, about
// 27 s of plant time; 0: once, then the inputs hold), so that bottles, alarms, the motor trip and
// restarts go on through the whole recording instead of a steady state. The loop waits while the
// recorder is backlogged, so no cycle is dropped. One Replayer over that trace (default options:
// 256 MB checkpoint budget) serves every benchmark, in the order below: like a debugging session,
// later benchmarks find the checkpoints that earlier ones left.
//
// Each latency benchmark times one replayer call per iteration, at positions drawn with a fixed
// seed; whatever puts the replayer at the starting position (a seek) is done before and is not
// timed. Counters: median_ms, p99_ms, max_ms (wall clock), cpu_median_ms, cpu_p99_ms (this
// thread's CPU time, which neighbours on a busy machine do not inflate), samples, and the
// benchmark's own. The Time column is the mean wall time of the timed call.
//
//   BM_Seek                               seek to a random position (cycle and step)
//   BM_StepBack/anywhere                  stepBack from a random position     target p99 < 10 ms
//   BM_StepBack/from_cycle_start          stepBack from step 0 of a random cycle, into the task's
//                                         previous cycle                      target p99 < 10 ms
//   BM_ReverseContinue/cycles_back:N      reverseContinue to a breakpoint whose statement last ran
//                                         exactly N cycles before the start (10, 1000, 500000;
//                                         see kDistances)           target < 500 ms for 500000
//   BM_ReverseContinueToWrite/VAR         reverseContinue with a data watch on VAR, from a random
//                                         position: --watch (default Line.batches, changes now
//                                         and then) and Monitor.upTicks (every Slow cycle)
//   BM_ReverseContinueToWrite/Tank.firstScan/cycles_back:500000
//                                         the same to a write exactly 500,000 cycles back
//   BM_ForwardReplay                      verify() of the whole trace against the same cycles run
//                                         live, as a ratio
//   BM_PeakMemory                         VmHWM of the process with checkpointBytes() and the
//                                         budget                  target <= budget + 64 MB
//
// Flags, among Google Benchmark's: --cycles=N, --stimulus-period=N, --watch=VAR,
// --fill-seconds=S (BM_PeakMemory first seeks at random until the checkpoints fill the budget, for
// at most S seconds; 0: no filling), --samples=F (scales every sample count).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string_view>

#include "bench/plant_history.h"
#include "replayer/replayer.h"
#include "vm/runtime/values.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace scanback::bench;
using replay::Position;

namespace {

// This benchmark's own flags; bench::commonFlags has the others.
struct Config {
  std::string watch = "Line.batches";
  double fillSeconds = 60;
} config;

// The breakpoint cases' distances D (see analyse() in bench/plant_history.h). D = 10: mostly
// statements of the Slow task (every 11th cycle) and of the scenario's events; D = 1000: the
// scenario's events (a bottle, an alarm, the motor trip: hits at least 1000 cycles apart);
// D = 500,000: statements that ran early and never again, or not for half a million cycles (the
// first-scan initialisations, yieldPct := 100.0 before the first bottle), so the search goes
// through 500 chunks that do not run the statement.
constexpr uint64_t kDistances[] = {10, 1000, 500'000};

// The CPU clock of the samples and of BM_ForwardReplay: this thread's, on which the replayer runs.
constexpr clockid_t kCpuClock = CLOCK_THREAD_CPUTIME_ID;

// A field of /proc/self/status in kB ("VmHWM", "VmRSS"), or -1.
long statusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  return -1;
}

// Timed calls per latency benchmark (before --samples).
constexpr uint64_t kSeekSamples = 2000, kStepBackSamples = 2000, kWatchSamples = 200, kFarWatchSamples = 5;
// A variable written once, watched from far after that write.
constexpr const char* kFarWatch = "Tank.firstScan";
constexpr uint64_t kFarWatchBack = 500'000;

std::string describe(const Program& p, uint32_t statement) {
  const StatementInfo& s = p.statement(statement);
  return fs::path(p.sources.file(s.span.file).path).filename().string() + ":" + std::to_string(s.span.line);
}

// Everything the benchmarks share, built on first use: the recorded history and its replayer.
struct Setup : PlantHistory {
  Setup() : PlantHistory("replay_bench") {}

  std::unique_ptr<replay::Replayer> replayer;
  long hwmAfterRecordingKb = 0;
};

const std::vector<std::string>& watchedNames() {
  static const std::vector<std::string> names = {config.watch, "Monitor.upTicks", kFarWatch};
  return names;
}

replay::Watch watchOf(const VariableLocation& v) {
  return v.bit >= 0 ? replay::Watch{v.offset, 1, v.bit} : replay::Watch{v.offset, v.type->size, -1};
}

// Writes to stderr how many breakpoint cases exist for each distance, and the statements of those
// 500,000 cycles back.
void printCases(Setup& s) {
  for (uint64_t d : kDistances)
    std::fprintf(stderr, "replay_bench: %llu breakpoint cases %llu cycles back, %zu drawn\n",
                 static_cast<unsigned long long>(s.caseCounts[d]), static_cast<unsigned long long>(d),
                 s.cases[d].size());
  if (!s.cases[500'000].empty()) {
    std::map<uint32_t, uint64_t> seen;
    for (const BreakpointCase& c : s.cases[500'000]) seen[c.statement] = c.hit;
    for (const auto& [statement, hit] : seen)
      std::fprintf(
          stderr,
          "replay_bench:   500000 back: statement %u (%s), ran in %llu cycles, last before the start in cycle %llu\n",
          statement, describe(*plant(), statement).c_str(),
          static_cast<unsigned long long>(s.statementCycles[statement]), static_cast<unsigned long long>(hit));
  }
}

Setup& setup() {
  static Setup shared = [] {
    Setup s;
    if (!record(s, watchedNames()) || !analyse(s, kDistances, {})) return s;
    printCases(s);
    s.hwmAfterRecordingKb = statusKb("VmHWM");
    replay::ReplayOptions options;
    options.program = plant();
    s.replayer = replay::Replayer::open(s.tracePath, options, s.error);
    return s;
  }();
  return shared;
}

// ---------------------------------------------------------------- measuring

replay::Replayer* replayerFor(benchmark::State& state) {
  Setup& s = setup();
  if (!s.replayer) {
    state.SkipWithError(("setup: " + s.error).c_str());
    return nullptr;
  }
  return s.replayer.get();
}

Position randomPosition(std::mt19937_64& rng) {
  const Setup& s = setup();
  const uint64_t cycle = rng() % s.cycles;
  return Position{cycle, rng() % (uint64_t{s.stepCounts[cycle]} + 1)};  // the cycle's end included
}

// ---------------------------------------------------------------- benchmarks

void BM_Seek(benchmark::State& state) {
  replay::Replayer* r = replayerFor(state);
  if (!r) return;
  std::mt19937_64 rng(kSeed + 1);
  Samples samples(kCpuClock);
  std::string error;
  for (auto _ : state) {
    const Position p = randomPosition(rng);
    if (!samples.time(state, [&] { return r->seek(p, error); })) {
      state.SkipWithError(("seek: " + error).c_str());
      return;
    }
  }
  report(state, samples);
  state.counters["checkpoints"] = static_cast<double>(r->checkpointCount());
  state.SetLabel("random position, anywhere");
}

// From a random position (anywhere, or step 0 of a random cycle, where stepBack goes on to the last
// top-level statement of the task's previous cycle).
void BM_StepBack(benchmark::State& state, bool atCycleStart) {
  replay::Replayer* r = replayerFor(state);
  if (!r) return;
  std::mt19937_64 rng(kSeed + (atCycleStart ? 3 : 2));
  Samples samples(kCpuClock);
  std::string error;
  for (auto _ : state) {
    Position p = randomPosition(rng);
    if (atCycleStart) p.step = 0;
    if (p.cycle == 0 && p.step == 0) p.cycle = 1;
    if (!r->seek(p, error)) {
      state.SkipWithError(("seek: " + error).c_str());
      return;
    }
    const auto stop = samples.time(state, [&] { return r->stepBack({}, error); });
    if (!stop || stop->reason != replay::StopReason::Step || !(stop->position < p)) {
      state.SkipWithError(("stepBack: " + (stop ? "did not step back" : error)).c_str());
      return;
    }
  }
  report(state, samples);
  const double p99 = state.counters["p99_ms"];
  state.SetLabel("target p99 < 10 ms" + verdict(p99 < 10));
}

// Starts at (hit + D, 0) and reverse-continues with a breakpoint on the case's statement, which
// last ran in cycle `hit` (see analyse(), bench/plant_history.h).
void BM_ReverseContinue(benchmark::State& state) {
  replay::Replayer* r = replayerFor(state);
  if (!r) return;
  const uint64_t distance = static_cast<uint64_t>(state.range(0));
  const std::vector<BreakpointCase>& cases = setup().cases[distance];
  if (cases.empty()) {
    state.SkipWithError("no statement runs that rarely in this recording (too few --cycles?)");
    return;
  }
  Samples samples(kCpuClock);
  std::string error;
  size_t next = 0;
  uint64_t wrong = 0;
  for (auto _ : state) {
    const BreakpointCase& c = cases[next++ % cases.size()];
    const Position start{c.hit + distance, 0};
    if (!r->seek(start, error)) {
      state.SkipWithError(("seek: " + error).c_str());
      return;
    }
    const std::vector<replay::Breakpoint> breakpoints = {replay::Breakpoint{c.statement, {}, {}, {}}};
    const auto stop = samples.time(state, [&] { return r->reverseContinue(breakpoints, {}, error); });
    if (!stop) {
      state.SkipWithError(("reverseContinue: " + error).c_str());
      return;
    }
    if (stop->reason != replay::StopReason::Breakpoint || stop->position.cycle != c.hit) ++wrong;
  }
  report(state, samples);
  state.counters["wrong_stops"] = static_cast<double>(wrong);
  std::map<uint32_t, int> statements;
  for (const BreakpointCase& c : cases) ++statements[c.statement];
  state.counters["statements"] = static_cast<double>(statements.size());
  if (distance == 500'000) {
    const double p99 = state.counters["p99_ms"];
    state.SetLabel("target < 500 ms" + verdict(p99 < 500));
  } else {
    state.SetLabel("no target");
  }
}

// reverseContinue with a watch on variable `name`, to its last change. `back` = 0: from a random
// position; config.watch (default Line.batches, which counts the batches of 4 bottles: now and
// then, up to about 3000 cycles apart) and Monitor.upTicks (every Slow cycle: at most 11 cycles
// back). `back` > 0: from a random step of the cycle `back` cycles after a change that is followed
// by no other for longer than that (Tank.firstScan: cleared in cycle 0, never written again).
void BM_ReverseContinueToWrite(benchmark::State& state, const std::string& name, uint64_t back, uint64_t seed) {
  replay::Replayer* r = replayerFor(state);
  if (!r) return;
  std::string error;
  const std::optional<VariableLocation> v = findVariable(r->program(), name, error);
  if (!v) {
    state.SkipWithError(error.c_str());
    return;
  }
  const std::vector<replay::Watch> watches = {watchOf(*v)};
  const std::vector<uint64_t>& changes = setup().changeCycles[name];
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> farStarts;  // back > 0: the start cycles
  for (size_t k = 0; back && k < changes.size(); ++k)
    if (changes[k] + back < setup().cycles && (k + 1 == changes.size() || changes[k + 1] > changes[k] + back))
      farStarts.push_back(changes[k] + back);
  if (back && farStarts.empty()) {
    state.SkipWithError("no change of the variable is followed by none for that long (too few --cycles?)");
    return;
  }
  Samples samples(kCpuClock);
  uint64_t wrong = 0;
  std::vector<double> distances;
  for (auto _ : state) {
    Position start = randomPosition(rng);
    if (back) {
      start.cycle = farStarts[rng() % farStarts.size()];
      start.step = rng() % (uint64_t{setup().stepCounts[start.cycle]} + 1);
    }
    if (!r->seek(start, error)) {
      state.SkipWithError(("seek: " + error).c_str());
      return;
    }
    const auto stop = samples.time(state, [&] { return r->reverseContinue({}, watches, error); });
    if (!stop) {
      state.SkipWithError(("reverseContinue: " + error).c_str());
      return;
    }
    // The live run saw the value change at the end of the cycles in `changes`: the stop is in
    // the last of them before the start's cycle, or in the start's cycle itself.
    const auto it = std::lower_bound(changes.begin(), changes.end(), start.cycle);
    const bool ok =
        stop->reason == replay::StopReason::DataWrite
            ? stop->position.cycle == start.cycle || (it != changes.begin() && *std::prev(it) == stop->position.cycle)
            : stop->reason == replay::StopReason::Start && it == changes.begin();
    if (!ok) ++wrong;
    distances.push_back(static_cast<double>(start.cycle - stop->position.cycle));
  }
  report(state, samples);
  state.counters["wrong_stops"] = static_cast<double>(wrong);
  state.counters["median_cycles_back"] = quantile(distances, 0.5);
  state.counters["max_cycles_back"] = quantile(distances, 1.0);
  state.counters["changes"] = static_cast<double>(changes.size());
  state.SetLabel(name + ", no target");
}

// verify() (every recorded cycle re-executed and checked against its digest and keyframes, on a
// fresh replayer) against the same cycles run live with Runtime::runCycle and the same inputs, in
// the same run: live, replay, live, replay, keeping the faster of each. ratio = replay time / live
// time on this thread's CPU clock (wall_ratio: on the wall clock). verify_heap_mb: how much the
// heap grew while the fresh replayer verified (what a replay of the whole trace keeps).
void BM_ForwardReplay(benchmark::State& state) {
  Setup& s = setup();
  if (!s.replayer) {
    state.SkipWithError(("setup: " + s.error).c_str());
    return;
  }
  for (auto _ : state) {
    std::string error;
    double liveWall = 1e300, liveCpu = 1e300, replayWall = 1e300, replayCpu = 1e300, heapMb = 0;
    size_t divergences = 0;
    for (int round = 0; round < 2; ++round) {
      {
        PlantInputs inputs(error);
        Runtime rt(plant());
        const double w0 = nowNs(), c0 = cpuNs(kCpuClock);
        for (uint64_t i = 0; i < s.cycles; ++i) {
          inputs.apply(rt);
          rt.runCycle();
        }
        liveCpu = std::min(liveCpu, cpuNs(kCpuClock) - c0);
        liveWall = std::min(liveWall, nowNs() - w0);
      }
      replay::ReplayOptions options;
      options.program = plant();
      const size_t heap0 = mallinfo2().uordblks;
      auto fresh = replay::Replayer::open(s.tracePath, options, error);
      if (!fresh) {
        state.SkipWithError(error.c_str());
        return;
      }
      const double w0 = nowNs(), c0 = cpuNs(kCpuClock);
      divergences += fresh->verify(nullptr, error).size();
      replayCpu = std::min(replayCpu, cpuNs(kCpuClock) - c0);
      replayWall = std::min(replayWall, nowNs() - w0);
      if (!error.empty()) {
        state.SkipWithError(("verify: " + error).c_str());
        return;
      }
      heapMb = static_cast<double>(mallinfo2().uordblks - heap0) / (1 << 20);
    }
    state.SetIterationTime(replayWall / 1e9);
    const double n = static_cast<double>(s.cycles);
    state.counters["ratio"] = replayCpu / liveCpu;
    state.counters["wall_ratio"] = replayWall / liveWall;
    state.counters["replay_cycles_per_s"] = n / (replayCpu / 1e9);
    state.counters["live_cycles_per_s"] = n / (liveCpu / 1e9);
    state.counters["replay_ns_per_cycle"] = replayCpu / n;
    state.counters["live_ns_per_cycle"] = liveCpu / n;
    state.counters["divergences"] = static_cast<double>(divergences);
    state.counters["verify_heap_mb"] = heapMb;
    state.SetLabel("verify() of " + std::to_string(s.cycles) + " cycles vs live, no target");
  }
}

// The process's peak resident memory (VmHWM) at the end of the run: recording, every benchmark
// before this one and, first, random seeks on the shared replayer until its checkpoints fill the
// budget (at most --fill-seconds), so that the peak includes a full checkpoint store.
void BM_PeakMemory(benchmark::State& state) {
  replay::Replayer* r = replayerFor(state);
  if (!r) return;
  const uint64_t budget = replay::ReplayOptions{}.checkpointBudgetBytes;
  const uint64_t imageSize = r->program().imageSize();
  for (auto _ : state) {
    std::mt19937_64 rng(kSeed + 20);
    std::string error;
    const double t0 = nowNs();
    uint64_t seeks = 0;
    while (config.fillSeconds > 0 && r->checkpointBytes() + imageSize <= budget &&
           nowNs() - t0 < config.fillSeconds * 1e9) {
      if (!r->seek(randomPosition(rng), error)) {
        state.SkipWithError(("seek: " + error).c_str());
        return;
      }
      ++seeks;
    }
    const double fillSeconds = (nowNs() - t0) / 1e9;
    state.SetIterationTime(fillSeconds);
    const double mb = 1 << 20;
    const double peak = static_cast<double>(statusKb("VmHWM")) * 1024 / mb;
    const double target = static_cast<double>(budget) / mb + 64;
    state.counters["peak_mb"] = peak;
    state.counters["rss_mb"] = static_cast<double>(statusKb("VmRSS")) * 1024 / mb;
    const struct mallinfo2 heap = mallinfo2();
    state.counters["heap_used_mb"] = static_cast<double>(heap.uordblks + heap.hblkhd) / mb;
    state.counters["heap_free_mb"] = static_cast<double>(heap.fordblks) / mb;
    state.counters["peak_after_recording_mb"] = static_cast<double>(setup().hwmAfterRecordingKb) * 1024 / mb;
    state.counters["checkpoint_mb"] = static_cast<double>(r->checkpointBytes()) / mb;
    state.counters["checkpoints"] = static_cast<double>(r->checkpointCount());
    state.counters["image_bytes"] = static_cast<double>(imageSize);
    state.counters["budget_mb"] = static_cast<double>(budget) / mb;
    state.counters["target_mb"] = target;
    state.counters["fill_seeks"] = static_cast<double>(seeks);
    state.counters["fill_s"] = fillSeconds;
    state.SetLabel("target: peak <= budget + 64 MB" + verdict(peak <= target));
  }
}

void registerBenchmarks() {
  using benchmark::kMillisecond;
  benchmark::RegisterBenchmark("BM_Seek", BM_Seek)
      ->Iterations(samples(kSeekSamples))
      ->UseManualTime()
      ->Unit(kMillisecond);
  for (const bool atCycleStart : {false, true}) {
    benchmark::RegisterBenchmark(atCycleStart ? "BM_StepBack/from_cycle_start" : "BM_StepBack/anywhere",
                                 [atCycleStart](benchmark::State& state) { BM_StepBack(state, atCycleStart); })
        ->Iterations(samples(kStepBackSamples))
        ->UseManualTime()
        ->Unit(kMillisecond);
  }
  for (uint64_t d : kDistances) {
    benchmark::RegisterBenchmark("BM_ReverseContinue", BM_ReverseContinue)
        ->ArgName("cycles_back")
        ->Arg(static_cast<int64_t>(d))
        ->Iterations(breakpointSamples(d))
        ->UseManualTime()
        ->Unit(kMillisecond);
  }
  for (size_t i = 0; i < watchedNames().size(); ++i) {
    const std::string name = watchedNames()[i];
    const uint64_t back = name == kFarWatch ? kFarWatchBack : 0;
    benchmark::RegisterBenchmark(
        ("BM_ReverseContinueToWrite/" + name + (back ? "/cycles_back:" + std::to_string(back) : "")).c_str(),
        [name, back, i](benchmark::State& state) { BM_ReverseContinueToWrite(state, name, back, kSeed + 10 + i); })
        ->Iterations(samples(back ? kFarWatchSamples : kWatchSamples))
        ->UseManualTime()
        ->Unit(kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_ForwardReplay", BM_ForwardReplay)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(kMillisecond);
  benchmark::RegisterBenchmark("BM_PeakMemory", BM_PeakMemory)->Iterations(1)->UseManualTime()->Unit(kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::vector<char*>> rest = parseFlags(argc, argv, "replay_bench", [](std::string_view arg) {
    std::string value;
    if (parseFlag(arg, "--watch", value)) {
      config.watch = value;
    } else if (parseFlag(arg, "--fill-seconds", value)) {
      config.fillSeconds = std::stod(value);
    } else {
      return false;
    }
    return true;
  });
  if (!rest) return 1;
  registerBenchmarks();
  if (!runBenchmarks(*rest)) return 1;
  removePlantTrace();
  return 0;
}
