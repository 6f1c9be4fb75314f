// The recorded plant history that replay_bench and dap_replay_bench time their moves on: one
// recording setup, so that both benchmarks measure the same history and their numbers compare.
//
// It provides examples/plant compiled and run live under the recorder with its stimulus
// (record()), and the facts about that trace that the benchmarks draw their positions and
// breakpoint cases from (analyse()). It also provides what the two benchmarks do alike around
// that history: their common flags, the fixed seed, how they time a call and report its samples,
// and the removal of the temporary trace at the end.
#pragma once

#include <benchmark/benchmark.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vm/runtime/stimulus.h"

namespace scanback::bench {

// ---------------------------------------------------------------- flags

// The flags both benchmarks take, as parseFlags() reads them.
struct CommonFlags {
  uint64_t cycles = 1'000'000;     // --cycles: how many cycles record() records
  uint64_t stimulusPeriod = 3000;  // --stimulus-period: see PlantInputs
  double samples = 1;              // --samples: scales every sample count (see samples())
};
extern CommonFlags commonFlags;

// Whether `arg` is `name`=value; if so, the value.
bool parseFlag(std::string_view arg, std::string_view name, std::string& value);

// Reads the common flags into commonFlags, and gives every other argument to `ownFlag`, which
// returns whether it is one of the benchmark's own flags (and may throw on a bad value). Returns
// argv[0] and the arguments left, for runBenchmarks(); nullopt after a bad value, which is
// reported on stderr after "<benchmark>: ".
std::optional<std::vector<char*>> parseFlags(int argc, char** argv, const char* benchmark,
                                             const std::function<bool(std::string_view arg)>& ownFlag);

// Initialises Google Benchmark with `args` and runs the registered benchmarks; false (reported)
// when an argument is not one of its flags.
bool runBenchmarks(std::vector<char*> args);

// ---------------------------------------------------------------- the history

constexpr uint64_t kSeed = 0x5ca9bac4;  // every benchmark draws from kSeed + its own number

// `n` timed calls scaled by --samples, at least 1.
uint64_t samples(uint64_t n);
// Timed calls of a breakpoint benchmark `distance` cycles back, and so the breakpoint cases that
// analyse() draws for it.
uint64_t breakpointSamples(uint64_t distance);

// examples/plant/*.st, compiled once; null when it does not compile.
std::shared_ptr<const Program> plant();

// Applies examples/plant/stimulus.csv, from the start again every --stimulus-period cycles (0: once,
// then the inputs hold), so that bottles, alarms, the motor trip and restarts go on through a long
// run instead of a steady state. The stimulus covers 500 cycles.
class PlantInputs {
 public:
  explicit PlantInputs(std::string& error);
  void apply(Runtime& rt);

 private:
  Stimulus original_, current_;
};

// A breakpoint case: `statement` ran last in cycle `hit` before the start cycle hit + distance.
struct BreakpointCase {
  uint32_t statement = 0;
  uint64_t hit = 0;
};

// A recording of the plant and what analyse() found in it.
struct PlantHistory {
  // The trace is a temporary file named after `benchmark`, which also begins every line this
  // history writes to stderr; removePlantTrace() removes it.
  explicit PlantHistory(std::string benchmark);

  std::string benchmark;
  std::string error;  // setup failed
  std::string tracePath;
  uint64_t cycles = 0;  // recorded (first cycle 0)
  // The watched variables: the cycles at whose end the value differed from the cycle before.
  std::map<std::string, std::vector<uint64_t>> changeCycles;
  // analyse()'s findings.
  std::vector<uint16_t> stepCounts;                       // per cycle, to draw a step without asking a replayer
  std::map<uint64_t, std::vector<BreakpointCase>> cases;  // per distance, a random sample
  std::map<uint64_t, uint64_t> caseCounts;                // per distance, how many cases exist
  std::vector<uint64_t> statementCycles;                  // per statement, how many cycles ran it
};

// Runs plant() live for --cycles cycles with PlantInputs under the recorder (default options: a
// keyframe every 1000 cycles, statement paths) into h.tracePath. The loop waits while the
// recorder is backlogged, so no cycle is dropped. The variables in `watchedNames` are read after
// every cycle, for h.changeCycles; a name that is not one fails with "--watch: <why>". Writes to
// stderr the time the recording took, the trace's size and how often each watched variable
// changed. False, with h.error, when the setup failed.
bool record(PlantHistory& h, const std::vector<std::string>& watchedNames);

// Reads every chunk's path table of the recording: the step count of each cycle, how many cycles
// ran each statement, and for each distance D a random sample of breakpoint cases. A case is a
// statement and a cycle `hit` that ran it, such that the statement does not run again before cycle
// hit + D + 1 and cycle hit + D is recorded: reverse continue from (hit + D, 0) with a breakpoint
// on it must stop in cycle `hit`, exactly D cycles back, and every cycle in between is one the
// search must rule out. Only the statements marked in `breakpointable` count (empty: all). The
// cases are sampled uniformly (reservoir sampling with seed kSeed + D; breakpointSamples(D) of
// them) among all that exist, and shuffled. False, with h.error, when the trace cannot be read.
bool analyse(PlantHistory& h, std::span<const uint64_t> distances, const std::vector<bool>& breakpointable);

// Whether this process has made its PlantHistory, and so may have a trace to remove.
bool plantHistoryMade();
// Removes the trace of this process's PlantHistory, and what an unfinished recording left of it.
void removePlantTrace();

// ---------------------------------------------------------------- measuring

inline double nowNs() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The CPU time of `clock`: CLOCK_THREAD_CPUTIME_ID or CLOCK_PROCESS_CPUTIME_ID.
inline double cpuNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// One benchmark's timed calls: the wall time and the CPU time on `cpuClock` of each.
struct Samples {
  explicit Samples(clockid_t clock) : cpuClock(clock) {}

  clockid_t cpuClock;
  std::vector<double> wallMs, cpuMs;

  // Times `op` on both clocks; tells the benchmark its wall time.
  template <class F>
  auto time(benchmark::State& state, F&& op) {
    const double w0 = nowNs(), c0 = cpuNs(cpuClock);
    auto result = op();
    const double c1 = cpuNs(cpuClock), w1 = nowNs();
    state.SetIterationTime((w1 - w0) / 1e9);
    wallMs.push_back((w1 - w0) / 1e6);
    cpuMs.push_back((c1 - c0) / 1e6);
    return result;
  }
};

// Nearest rank: the smallest value with at least q of the samples at or below it.
double quantile(std::vector<double> v, double q);

// The counters median_ms, p99_ms, max_ms (wall clock), cpu_median_ms, cpu_p99_ms and samples.
void report(benchmark::State& state, const Samples& s);

// " (met)" or " (NOT met)", for a label that names a target.
std::string verdict(bool met);

}  // namespace scanback::bench
