// The replayer's latencies on a long recording of the plant program (issue 4), measured in one
// run; bench/README.md ("replay_bench") has the results and the targets.
//
// Setup, once per process and outside every timing: examples/plant/*.st is compiled and run live
// for --cycles cycles (default 1,000,000) with examples/plant/stimulus.csv under the recorder
// (default options: a keyframe every 1000 cycles, statement paths) into a temporary trace; the
// time it took goes to stderr. The stimulus covers 500 cycles; it starts over every
// --stimulus-period cycles (default 3000, about 27 s of plant time; 0: once, then the inputs
// hold), so that bottles, alarms, the motor trip and restarts go on through the whole recording
// instead of a steady state. The loop waits while the recorder is backlogged, so no cycle is
// dropped. One Replayer over that trace (default options: 256 MB checkpoint budget) serves every
// benchmark, in the order below: like a debugging session, later benchmarks find the checkpoints
// that earlier ones left.
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
//                                         see analyse())            target < 500 ms for 500000
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
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string_view>
#include <thread>

#include "recorder/recorder.h"
#include "replayer/replayer.h"
#include "traces/trace_reader.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/values.h"

namespace fs = std::filesystem;
using namespace scanback;
using replay::Position;

namespace {

struct Config {
  uint64_t cycles = 1'000'000;
  uint64_t stimulusPeriod = 3000;
  std::string watch = "Line.batches";
  double fillSeconds = 60;
  double samples = 1;
} config;

std::string gTracePath;  // the temporary trace, once recorded (removed at the end)

constexpr uint64_t kSeed = 0x5ca9bac4;  // every benchmark draws from kSeed + its own number
constexpr uint64_t kDistances[] = {10, 1000, 500'000};

double nowNs() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

double threadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// A field of /proc/self/status in kB ("VmHWM", "VmRSS"), or -1.
long statusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  return -1;
}

uint64_t samples(uint64_t n) {
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(static_cast<double>(n) * config.samples)));
}
// Timed calls per latency benchmark (before --samples).
constexpr uint64_t kSeekSamples = 2000, kStepBackSamples = 2000, kWatchSamples = 200, kFarWatchSamples = 5;
// A variable written once, watched from far after that write.
constexpr const char* kFarWatch = "Tank.firstScan";
constexpr uint64_t kFarWatchBack = 500'000;
uint64_t breakpointSamples(uint64_t distance) { return samples(distance >= 500'000 ? 100 : 500); }

std::shared_ptr<const Program> plant() {
  static std::shared_ptr<const Program> program = [] {
    const fs::path dir = fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant";
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".st") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    Diagnostics d;
    SourceSet sources = loadSourceFiles(files, d);
    return compileProject(sources, d);
  }();
  return program;
}

// Applies examples/plant/stimulus.csv, from the start again every config.stimulusPeriod cycles.
class PlantInputs {
 public:
  explicit PlantInputs(std::string& error) {
    auto s = Stimulus::load((fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant" / "stimulus.csv").string(),
                            *plant(), error);
    if (s) original_ = *s;
    current_ = original_;
  }
  void apply(Runtime& rt) {
    uint64_t c = rt.cycle();
    if (config.stimulusPeriod) {
      c %= config.stimulusPeriod;
      if (c == 0) current_ = original_;
    }
    current_.apply(c, rt);
  }

 private:
  Stimulus original_, current_;
};

std::string describe(const Program& p, uint32_t statement) {
  const StatementInfo& s = p.statement(statement);
  return fs::path(p.sources.file(s.span.file).path).filename().string() + ":" + std::to_string(s.span.line);
}

// A breakpoint case: `statement` ran last in cycle `hit` before the start cycle hit + distance.
struct BreakpointCase {
  uint32_t statement = 0;
  uint64_t hit = 0;
};

// Everything the benchmarks share, built on first use.
struct Setup {
  std::string error;  // setup failed
  std::string tracePath;
  std::unique_ptr<replay::Replayer> replayer;
  uint64_t cycles = 0;                 // recorded (first cycle 0)
  std::vector<uint16_t> stepCounts;    // per cycle, to draw a step without asking the replayer
  std::map<uint64_t, std::vector<BreakpointCase>> cases;  // per distance, a random sample
  std::map<uint64_t, uint64_t> caseCounts;                // per distance, how many cases exist
  std::vector<uint64_t> statementCycles;                  // per statement, how many cycles ran it
  // The watched variables: the cycles at whose end the value differed from the cycle before.
  std::map<std::string, std::vector<uint64_t>> changeCycles;
  long hwmAfterRecordingKb = 0;
};

const std::vector<std::string>& watchedNames() {
  static const std::vector<std::string> names = {config.watch, "Monitor.upTicks", kFarWatch};
  return names;
}

replay::Watch watchOf(const VariableLocation& v) {
  return v.bit >= 0 ? replay::Watch{v.offset, 1, v.bit} : replay::Watch{v.offset, v.type->size, -1};
}

bool record(Setup& s) {
  const std::shared_ptr<const Program> program = plant();
  if (!program) {
    s.error = "examples/plant/*.st does not compile";
    return false;
  }
  std::string error;
  PlantInputs inputs(error);
  if (!error.empty()) {
    s.error = error;
    return false;
  }
  struct Watched {
    std::string name;
    VariableLocation where;
    std::vector<uint8_t> last;
  };
  std::vector<Watched> watched;
  for (const std::string& name : watchedNames()) {
    auto v = findVariable(*program, name, error);
    if (!v) {
      s.error = "--watch: " + error;
      return false;
    }
    watched.push_back({name, *v, {}});
  }
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = s.tracePath;
  auto rec = recorder::Recorder::start(rt, options, error);
  if (!rec) {
    s.error = error;
    return false;
  }
  auto valueOf = [&](const Watched& w) {
    const uint8_t* image = rt.vm().image();
    if (w.where.bit >= 0) return std::vector<uint8_t>{static_cast<uint8_t>((image[w.where.offset] >> w.where.bit) & 1)};
    return std::vector<uint8_t>(image + w.where.offset, image + w.where.offset + w.where.type->size);
  };
  for (Watched& w : watched) w.last = valueOf(w);
  const double t0 = nowNs();
  for (uint64_t i = 0; i < config.cycles; ++i) {
    inputs.apply(rt);
    rt.runCycle();
    for (Watched& w : watched) {
      std::vector<uint8_t> now = valueOf(w);
      if (now != w.last) {
        s.changeCycles[w.name].push_back(i);
        w.last = std::move(now);
      }
    }
    // Faster than real time: wait for the writer rather than let the recorder drop cycles.
    while (rec->backlogged()) std::this_thread::yield();
  }
  if (!rec->finish(error)) {
    s.error = "recording: " + error;
    return false;
  }
  const double seconds = (nowNs() - t0) / 1e9;
  const recorder::RecorderStats st = rec->stats();
  std::fprintf(stderr,
               "replay_bench: recorded %llu cycles of examples/plant (stimulus period %llu) in %.1f s "
               "(%.0f cycles/s): %.1f MB, %.1f bytes/cycle, %llu chunks, %llu dropped, %llu divergences\n",
               static_cast<unsigned long long>(st.cyclesRecorded),
               static_cast<unsigned long long>(config.stimulusPeriod), seconds,
               static_cast<double>(st.cyclesRecorded) / seconds, static_cast<double>(st.bytesWritten) / 1e6,
               static_cast<double>(st.bytesWritten) / static_cast<double>(st.cyclesRecorded),
               static_cast<unsigned long long>(st.chunks), static_cast<unsigned long long>(st.cyclesDropped),
               static_cast<unsigned long long>(st.divergences));
  for (const Watched& w : watched)
    std::fprintf(stderr, "replay_bench: %s changed in %zu cycles\n", w.name.c_str(), s.changeCycles[w.name].size());
  if (st.cyclesDropped || st.gaps || st.cyclesRecorded != config.cycles) {
    s.error = "the recording dropped cycles";
    return false;
  }
  if (st.divergences) {
    s.error = "the recorder's re-execution diverged: " + rec->firstDivergence();
    return false;
  }
  s.cycles = st.cyclesRecorded;
  return true;
}

// Reads every chunk's path table: the step count of each cycle, and for each distance D a random
// sample of breakpoint cases. A case is a statement and a cycle `hit` that ran it, such that the
// statement does not run again before cycle hit + D + 1 and cycle hit + D is recorded: reverse
// continue from (hit + D, 0) with a breakpoint on it must stop in cycle `hit`, exactly D cycles
// back, and every cycle in between is one the search must rule out. D = 10: mostly statements of
// the Slow task (every 11th cycle) and of the scenario's events; D = 1000: the scenario's events
// (a bottle, an alarm, the motor trip: hits at least 1000 cycles apart); D = 500,000: statements
// that ran early and never again, or not for half a million cycles (the first-scan
// initialisations, yieldPct := 100.0 before the first bottle), so the search goes through 500
// chunks that do not run the statement. The cases are sampled uniformly (reservoir sampling with
// a fixed seed) among all that exist; analyse() prints how many exist for each D.
bool analyse(Setup& s) {
  std::string error;
  std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::open(s.tracePath, error);
  if (!reader) {
    s.error = error;
    return false;
  }
  const size_t statementCount = plant()->statements.size();
  constexpr uint64_t kNone = UINT64_MAX;
  std::vector<uint64_t> last(statementCount, kNone);
  s.statementCycles.assign(statementCount, 0);
  s.stepCounts.assign(s.cycles, 0);
  std::map<uint64_t, std::mt19937_64> rngs;
  std::map<uint64_t, uint64_t> wanted;
  for (uint64_t d : kDistances) {
    rngs[d].seed(kSeed + d);
    wanted[d] = breakpointSamples(d);
  }
  auto offer = [&](uint64_t d, uint32_t statement, uint64_t hit) {
    if (hit + d >= s.cycles) return;
    // Reservoir sampling: each case equally likely to be kept.
    std::vector<BreakpointCase>& kept = s.cases[d];
    const uint64_t n = ++s.caseCounts[d];
    if (kept.size() < wanted[d]) {
      kept.push_back({statement, hit});
    } else {
      const uint64_t j = rngs[d]() % n;
      if (j < kept.size()) kept[j] = {statement, hit};
    }
  };
  for (const trace::BlockInfo& block : reader->blocks()) {
    if (block.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData chunk;
    if (!reader->readChunk(block, chunk, error)) {
      s.error = error;
      return false;
    }
    // The distinct statements of each path, once per path.
    std::vector<std::vector<uint32_t>> distinct(chunk.pathTable.size());
    for (size_t p = 0; p < chunk.pathTable.size(); ++p) {
      distinct[p] = chunk.pathTable[p];
      std::sort(distinct[p].begin(), distinct[p].end());
      distinct[p].erase(std::unique(distinct[p].begin(), distinct[p].end()), distinct[p].end());
    }
    for (uint32_t k = 0; k < chunk.cycleCount(); ++k) {
      const uint64_t cycle = chunk.firstCycle + k;
      if (cycle >= s.cycles) break;
      if (chunk.stepCounts[k] > UINT16_MAX) {
        s.error = "a cycle has more than 65535 steps";
        return false;
      }
      s.stepCounts[cycle] = static_cast<uint16_t>(chunk.stepCounts[k]);
      if (chunk.paths.empty() || chunk.paths[k] == trace::kNoPath) {
        s.error = "a cycle has no recorded statement path";
        return false;
      }
      for (uint32_t statement : distinct[chunk.paths[k]]) {
        ++s.statementCycles[statement];
        const uint64_t previous = last[statement];
        last[statement] = cycle;
        if (previous == kNone) continue;
        for (uint64_t d : kDistances)
          if (cycle - previous > d) offer(d, statement, previous);
      }
    }
  }
  for (uint32_t statement = 0; statement < statementCount; ++statement)
    if (last[statement] != kNone)
      for (uint64_t d : kDistances) offer(d, statement, last[statement]);
  for (uint64_t d : kDistances) {
    std::vector<BreakpointCase>& kept = s.cases[d];
    std::shuffle(kept.begin(), kept.end(), rngs[d]);  // the reservoir keeps the order of the trace
    std::fprintf(stderr, "replay_bench: %llu breakpoint cases %llu cycles back, %zu drawn\n",
                 static_cast<unsigned long long>(s.caseCounts[d]), static_cast<unsigned long long>(d), kept.size());
  }
  if (!s.cases[500'000].empty()) {
    std::map<uint32_t, uint64_t> seen;
    for (const BreakpointCase& c : s.cases[500'000]) seen[c.statement] = c.hit;
    for (const auto& [statement, hit] : seen)
      std::fprintf(stderr, "replay_bench:   500000 back: statement %u (%s), ran in %llu cycles, last before the start in cycle %llu\n",
                   statement, describe(*plant(), statement).c_str(),
                   static_cast<unsigned long long>(s.statementCycles[statement]), static_cast<unsigned long long>(hit));
  }
  return true;
}

Setup& setup() {
  static Setup s = [] {
    Setup s;
    s.tracePath = (fs::temp_directory_path() / ("scanback_replay_bench_" + std::to_string(getpid()) + ".trace")).string();
    gTracePath = s.tracePath;
    if (!record(s) || !analyse(s)) return s;
    s.hwmAfterRecordingKb = statusKb("VmHWM");
    replay::ReplayOptions options;
    options.program = plant();
    s.replayer = replay::Replayer::open(s.tracePath, options, s.error);
    return s;
  }();
  return s;
}

// ---------------------------------------------------------------- measuring

struct Samples {
  std::vector<double> wallMs, cpuMs;

  // Times `op` (one replayer call) on both clocks; tells the benchmark its wall time.
  template <class F>
  auto time(benchmark::State& state, F&& op) {
    const double w0 = nowNs(), c0 = threadCpuNs();
    auto result = op();
    const double c1 = threadCpuNs(), w1 = nowNs();
    state.SetIterationTime((w1 - w0) / 1e9);
    wallMs.push_back((w1 - w0) / 1e6);
    cpuMs.push_back((c1 - c0) / 1e6);
    return result;
  }
};

// Nearest rank: the smallest value with at least q of the samples at or below it.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

void report(benchmark::State& state, const Samples& s) {
  state.counters["median_ms"] = quantile(s.wallMs, 0.5);
  state.counters["p99_ms"] = quantile(s.wallMs, 0.99);
  state.counters["max_ms"] = quantile(s.wallMs, 1.0);
  state.counters["cpu_median_ms"] = quantile(s.cpuMs, 0.5);
  state.counters["cpu_p99_ms"] = quantile(s.cpuMs, 0.99);
  state.counters["samples"] = static_cast<double>(s.wallMs.size());
}

std::string verdict(bool met) { return met ? " (met)" : " (NOT met)"; }

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
  Samples samples;
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
  Samples samples;
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
// last ran in cycle `hit` (see analyse()).
void BM_ReverseContinue(benchmark::State& state) {
  replay::Replayer* r = replayerFor(state);
  if (!r) return;
  const uint64_t distance = static_cast<uint64_t>(state.range(0));
  const std::vector<BreakpointCase>& cases = setup().cases[distance];
  if (cases.empty()) {
    state.SkipWithError("no statement runs that rarely in this recording (too few --cycles?)");
    return;
  }
  Samples samples;
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
    const std::vector<replay::Breakpoint> breakpoints = {replay::Breakpoint{c.statement, {}, {}}};
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
  Samples samples;
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
    const bool ok = stop->reason == replay::StopReason::DataWrite
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
        const double w0 = nowNs(), c0 = threadCpuNs();
        for (uint64_t i = 0; i < s.cycles; ++i) {
          inputs.apply(rt);
          rt.runCycle();
        }
        liveCpu = std::min(liveCpu, threadCpuNs() - c0);
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
      const double w0 = nowNs(), c0 = threadCpuNs();
      divergences += fresh->verify(nullptr, error).size();
      replayCpu = std::min(replayCpu, threadCpuNs() - c0);
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
  benchmark::RegisterBenchmark("BM_ForwardReplay", BM_ForwardReplay)->Iterations(1)->UseManualTime()->Unit(kMillisecond);
  benchmark::RegisterBenchmark("BM_PeakMemory", BM_PeakMemory)->Iterations(1)->UseManualTime()->Unit(kMillisecond);
}

bool parseFlag(std::string_view arg, std::string_view name, std::string& value) {
  if (!arg.starts_with(name) || arg.size() <= name.size() || arg[name.size()] != '=') return false;
  value = std::string(arg.substr(name.size() + 1));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string value;
    try {
      if (parseFlag(argv[i], "--cycles", value)) {
        config.cycles = std::stoull(value);
      } else if (parseFlag(argv[i], "--stimulus-period", value)) {
        config.stimulusPeriod = std::stoull(value);
      } else if (parseFlag(argv[i], "--watch", value)) {
        config.watch = value;
      } else if (parseFlag(argv[i], "--fill-seconds", value)) {
        config.fillSeconds = std::stod(value);
      } else if (parseFlag(argv[i], "--samples", value)) {
        config.samples = std::stod(value);
      } else {
        rest.push_back(argv[i]);
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "replay_bench: bad value in %s\n", argv[i]);
      return 1;
    }
  }
  registerBenchmarks();
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!gTracePath.empty()) {
    std::error_code ignored;
    fs::remove(gTracePath, ignored);
    fs::remove(gTracePath + ".partial", ignored);
  }
  return 0;
}
