// Time travel over DAP: the latency of the reverse moves of a replay session, as a client sees it,
// on a long recording of the plant program; bench/README.md ("dap_replay_bench") has the results
// and the targets.
//
// Setup, once per process and outside every timing (bench/plant_history.h, shared with
// replay_bench): examples/plant/*.st is compiled and run live for --cycles cycles (default
// 1,000,000) with examples/plant/stimulus.csv under the recorder (default options: a keyframe
// every 1000 cycles, statement paths) into a temporary trace. The stimulus covers 500 cycles and
// starts over every --stimulus-period cycles (default 3000; 0: once, then the inputs hold). The
// loop waits while the recorder is backlogged, so no cycle is dropped. The setup then reads every
// chunk's path table, for the step count of each cycle and the breakpoint cases (see analyse()
// and kDistances). Then a
// scanback::dap::Session runs on its own thread behind an in-memory pipe (MemoryPipe::pair(), as
// dap_bench.cpp does), and this process is its client (bench/dap_client.h): initialize, launch {trace, startAt: "end"},
// configurationDone, and the `stopped` event. That one session (and so one Replayer, with its
// default 256 MB checkpoint budget) serves every benchmark, in the order below: like a debugging
// session, later benchmarks find the checkpoints that earlier ones left.
//
// A move is timed from writing its request until its `stopped` event has been read (the response
// comes first; both are read). Whatever puts the session at the start position (a scanback/seek,
// which also answers with a response and a `stopped` event) comes before and is not timed, nor are
// the checks after the move. Positions are drawn with a fixed seed. Counters: median_ms, p99_ms
// (nearest rank), max_ms (wall clock), cpu_median_ms, cpu_p99_ms (the process's CPU time over the
// same interval: the session's and the replayer's threads, which neighbours on a busy machine do
// not inflate), samples, and x_threads = median / the median `threads` round trip of the same run.
//
//   BM_DapThreads                         the `threads` round trip: the baseline
//   BM_DapStepBack                        stepBack from a random position      target p99 < 10 ms
//   BM_DapReverseContinue/cycles_back:N   reverseContinue to a breakpoint whose statement last ran
//                                         exactly N cycles before the start (1, 1000, 500000)
//                                                                   target < 500 ms for 500000
//   BM_DapInspectAfterMove                stackTrace + scopes + variables of the first scope,
//                                         after a stepBack (untimed) from a random position
//
// Flags, among Google Benchmark's: --cycles=N, --stimulus-period=N, --samples=F (scales every
// sample count), --timeout-seconds=S (default 120: a request unanswered for that long is reported
// as a hang, and the session is abandoned).
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string_view>
#include <tuple>

#include "bench/dap_client.h"
#include "bench/plant_history.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace scanback::bench;
using json = nlohmann::json;

namespace {

// This benchmark's own flag; bench::commonFlags has the others.
struct Config {
  double timeoutSeconds = 120;
} config;

// The breakpoint cases' distances D (see analyse() in bench/plant_history.h), among the
// statements that a line-and-column breakpoint names (see addressable()). D = 1: any statement
// that did not run in the next cycle (the other task's cycle, mostly); D = 1000: the scenario's
// events; D = 500,000: the first-scan initialisations and `yieldPct := 100.0`, which ran early and
// never again.
constexpr uint64_t kDistances[] = {1, 1000, 500'000};
constexpr uint64_t kThreadsSamples = 2000, kStepBackSamples = 2000, kInspectSamples = 1000;

// The CPU clock of the samples: every thread of this process's, the client, the session and the
// replay target's worker.
constexpr clockid_t kCpuClock = CLOCK_PROCESS_CPUTIME_ID;

// ---------------------------------------------------------------- the recording

std::string describe(const Program& p, uint32_t statement) {
  const StatementInfo& s = p.statement(statement);
  return fs::path(p.sources.file(s.span.file).path).filename().string() + ":" + std::to_string(s.span.line) + ":" +
         std::to_string(s.span.column);
}

// Everything the benchmarks share, built on first use: the recorded history and the session on it.
struct Setup : PlantHistory {
  Setup() : PlantHistory("dap_replay_bench") {}

  std::unique_ptr<DapClient> client;
  int64_t threadId = 1;  // of the last stop
};

// Statements that a line-and-column breakpoint names unambiguously: no other statement of the
// program starts at the same place (the session resolves a breakpoint to the first statement at
// or after its position).
std::vector<bool> addressable(const Program& p) {
  std::map<std::tuple<FileId, uint32_t, uint32_t>, int> starts;
  for (const StatementInfo& s : p.statements)
    if (s.span.valid()) ++starts[{s.span.file, s.span.line, s.span.column}];
  std::vector<bool> ok(p.statements.size());
  for (size_t i = 0; i < p.statements.size(); ++i) {
    const SourceSpan& span = p.statements[i].span;
    ok[i] = span.valid() && starts[{span.file, span.line, span.column}] == 1;
  }
  return ok;
}

// Writes to stderr how many breakpoint cases exist for each distance and how many statements were
// drawn, and those statements for 500,000 cycles back.
void printCases(Setup& s) {
  for (uint64_t d : kDistances) {
    const std::vector<BreakpointCase>& kept = s.cases[d];
    std::map<uint32_t, int> statements;
    for (const BreakpointCase& c : kept) ++statements[c.statement];
    std::fprintf(stderr, "dap_replay_bench: %llu breakpoint cases %llu cycles back, %zu drawn (%zu statements)\n",
                 static_cast<unsigned long long>(s.caseCounts[d]), static_cast<unsigned long long>(d), kept.size(),
                 statements.size());
    if (d >= 500'000)
      for (const auto& [statement, n] : statements)
        std::fprintf(stderr, "dap_replay_bench:   %llu back: statement %u (%s)\n", static_cast<unsigned long long>(d),
                     statement, describe(*plant(), statement).c_str());
  }
}

// Launches the replay session on the trace: it stops at the end.
bool launch(Setup& s) {
  s.client = std::make_unique<DapClient>("dap_replay_bench", config.timeoutSeconds);
  try {
    const double t0 = nowNs();
    s.client->request("initialize",
                      json{{"adapterID", "dap_replay_bench"}, {"linesStartAt1", true}, {"columnsStartAt1", true}});
    s.client->request("launch", json{{"trace", s.tracePath}, {"startAt", "end"}});
    const json stop = s.client->move("configurationDone", json::object());
    s.threadId = stop.value("threadId", int64_t{1});
    const json timeline = s.client->request("scanback/timeline", json::object());
    std::fprintf(stderr,
                 "dap_replay_bench: launched the replay session in %.0f ms: stopped (%s) at cycle %s of %s..%s\n",
                 (nowNs() - t0) / 1e6, stop.value("reason", "?").c_str(), timeline["cycle"].dump().c_str(),
                 timeline["firstCycle"].dump().c_str(), timeline["lastCycle"].dump().c_str());
    if (timeline["lastCycle"] != s.cycles - 1) {
      s.error = "the session's timeline ends at cycle " + timeline["lastCycle"].dump() + ", not " +
                std::to_string(s.cycles - 1);
      return false;
    }
  } catch (const std::exception& e) {
    s.error = std::string("launch: ") + e.what();
    return false;
  }
  return true;
}

Setup& setup() {
  static Setup shared = [] {
    Setup s;
    if (record(s, {}) && analyse(s, kDistances, addressable(*plant()))) {
      printCases(s);
      launch(s);
    }
    return s;
  }();
  return shared;
}

DapClient* clientFor(benchmark::State& state) {
  Setup& s = setup();
  if (!s.error.empty() || !s.client) {
    state.SkipWithError(("setup: " + s.error).c_str());
    return nullptr;
  }
  if (s.client->hung()) {
    state.SkipWithError("the session hung in an earlier benchmark");
    return nullptr;
  }
  return s.client.get();
}

// ---------------------------------------------------------------- measuring

double gThreadsMedianMs = 0;  // the baseline of this run

// The baseline: measured by BM_DapThreads, or here (untimed) when a filter left it out.
double threadsBaselineMs(DapClient& client) {
  if (gThreadsMedianMs == 0) {
    std::vector<double> ms;
    for (uint64_t i = 0; i < samples(kThreadsSamples); ++i) {
      const double t0 = nowNs();
      client.request("threads", json::object());
      ms.push_back((nowNs() - t0) / 1e6);
    }
    gThreadsMedianMs = quantile(ms, 0.5);
  }
  return gThreadsMedianMs;
}

// bench::report()'s counters, and x_threads.
void report(benchmark::State& state, const Samples& s, DapClient& client) {
  bench::report(state, s);
  state.counters["x_threads"] = state.counters["median_ms"].value / threadsBaselineMs(client);
}

struct Position {
  uint64_t cycle = 0, step = 0;
  bool operator<(const Position& o) const { return std::tie(cycle, step) < std::tie(o.cycle, o.step); }
};

Position randomPosition(std::mt19937_64& rng) {
  const Setup& s = setup();
  Position p;
  p.cycle = rng() % s.cycles;
  p.step = rng() % (uint64_t{s.stepCounts[p.cycle]} + 1);  // the cycle's end included
  if (p.cycle == 0 && p.step == 0) p.cycle = 1;            // somewhere to step back to
  return p;
}

Position here(DapClient& client) {
  const json t = client.request("scanback/timeline", json::object());
  return Position{t["cycle"].get<uint64_t>(), t["step"].get<uint64_t>()};
}

std::string at(const Position& p) {
  return "(cycle " + std::to_string(p.cycle) + ", step " + std::to_string(p.step) + ")";
}

// scanback/seek to `p`, checked with scanback/timeline (untimed); the thread of the stop.
int64_t seek(DapClient& client, const Position& p) {
  const json stop = client.move("scanback/seek", json{{"cycle", p.cycle}, {"step", p.step}});
  const Position now = here(client);
  if (stop.value("reason", "") != "goto" || now.cycle != p.cycle || now.step != p.step)
    throw ClientError("scanback/seek to " + at(p) + " stopped at " + at(now) + ": " + stop.dump());
  return stop.value("threadId", int64_t{1});
}

// Runs a benchmark body; a ClientError or another exception ends it with SkipWithError.
template <class F>
void guarded(benchmark::State& state, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---------------------------------------------------------------- benchmarks

void BM_DapThreads(benchmark::State& state) {
  DapClient* client = clientFor(state);
  if (!client) return;
  guarded(state, [&] {
    Samples samples(kCpuClock);
    for (auto _ : state) samples.time(state, [&] { return client->request("threads", json::object()); });
    gThreadsMedianMs = quantile(samples.wallMs, 0.5);
    report(state, samples, *client);
    state.SetLabel("baseline");
  });
}

// stepBack from a random position (the end of a cycle included; from step 0 it goes into the
// task's previous cycle).
void BM_DapStepBack(benchmark::State& state) {
  DapClient* client = clientFor(state);
  if (!client) return;
  guarded(state, [&] {
    std::mt19937_64 rng(kSeed + 2);
    Samples samples(kCpuClock);
    for (auto _ : state) {
      const Position p = randomPosition(rng);
      const int64_t thread = seek(*client, p);
      const json stop = samples.time(state, [&] { return client->move("stepBack", json{{"threadId", thread}}); });
      const Position now = here(*client);
      if (stop.value("reason", "") != "step" || !(now < p)) {
        state.SkipWithError(("stepBack from " + at(p) + " stopped at " + at(now) + ": " + stop.dump()).c_str());
        return;
      }
    }
    report(state, samples, *client);
    state.SetLabel("target p99 < 10 ms" + verdict(state.counters["p99_ms"] < 10));
  });
}

// Sets one breakpoint on `statement` (with its line and column, which name it alone), replacing
// those of the file set before. The breakpoint's id.
int64_t setBreakpoint(DapClient& client, std::optional<FileId>& fileWithBreakpoint, uint32_t statement) {
  const Program& p = *plant();
  const SourceSpan& span = p.statement(statement).span;
  if (fileWithBreakpoint && *fileWithBreakpoint != span.file)
    client.request("setBreakpoints", json{{"source", json{{"path", p.sources.file(*fileWithBreakpoint).path}}},
                                          {"breakpoints", json::array()}});
  fileWithBreakpoint = span.file;
  const json body = client.request(
      "setBreakpoints", json{{"source", json{{"path", p.sources.file(span.file).path}}},
                             {"breakpoints", json::array({json{{"line", span.line}, {"column", span.column}}})}});
  const json& bp = body["breakpoints"].at(0);
  if (!bp.value("verified", false) || bp.value("line", int64_t{0}) != span.line ||
      bp.value("column", int64_t{0}) != span.column)
    throw ClientError("the breakpoint on statement " + std::to_string(statement) + " (" + describe(p, statement) +
                      ") resolved to " + bp.dump());
  return bp.at("id").get<int64_t>();
}

// reverseContinue from (hit + D, 0) with a breakpoint on the case's statement, which last ran in
// cycle `hit` (see analyse()); the stop is checked (reason, breakpoint id, cycle, the statement of
// the top frame), untimed.
void BM_DapReverseContinue(benchmark::State& state) {
  DapClient* client = clientFor(state);
  if (!client) return;
  const uint64_t distance = static_cast<uint64_t>(state.range(0));
  const std::vector<BreakpointCase>& cases = setup().cases[distance];
  if (cases.empty()) {
    state.SkipWithError("no statement runs that rarely in this recording (too few --cycles?)");
    return;
  }
  std::optional<FileId> fileWithBreakpoint;
  guarded(state, [&] {
    const Program& program = *plant();
    Samples samples(kCpuClock);
    size_t next = 0;
    std::optional<uint32_t> current;
    int64_t id = 0;
    std::vector<double> stepsOfHit;
    for (auto _ : state) {
      const BreakpointCase& c = cases[next++ % cases.size()];
      if (current != c.statement) {
        id = setBreakpoint(*client, fileWithBreakpoint, c.statement);
        current = c.statement;
      }
      const Position start{c.hit + distance, 0};
      const int64_t thread = seek(*client, start);
      const json stop = samples.time(state, [&] {
        return client->move("reverseContinue", json{{"threadId", thread}});
      });
      // The check: a breakpoint stop of ours, in cycle `hit`, at the statement.
      const Position now = here(*client);
      const SourceSpan& span = program.statement(c.statement).span;
      std::string wrong;
      const json ids = stop.value("hitBreakpointIds", json::array());
      if (stop.value("reason", "") != "breakpoint" || std::find(ids.begin(), ids.end(), json(id)) == ids.end()) {
        wrong = "the stop is not at breakpoint " + std::to_string(id);
      } else if (now.cycle != c.hit) {
        wrong = "the stop is in the wrong cycle";
      } else {
        const json frames =
            client->request("stackTrace", json{{"threadId", stop.value("threadId", int64_t{1})}})["stackFrames"];
        if (frames.empty() || frames[0].value("line", int64_t{0}) != span.line ||
            frames[0].value("column", int64_t{0}) != span.column)
          wrong = "the top frame is not at the statement: " +
                  (frames.empty() ? std::string("no frames") : frames[0].dump());
      }
      if (!wrong.empty()) {
        state.SkipWithError(("reverseContinue from " + at(start) + " with a breakpoint on statement " +
                             std::to_string(c.statement) + " (" + describe(program, c.statement) +
                             "), which last ran in cycle " + std::to_string(c.hit) + ": " + wrong + "; stopped at " +
                             at(now) + ": " + stop.dump())
                                .c_str());
        break;
      }
      stepsOfHit.push_back(static_cast<double>(now.step));
    }
    if (state.error_occurred()) return;
    report(state, samples, *client);
    std::map<uint32_t, int> statements;
    for (const BreakpointCase& c : cases) ++statements[c.statement];
    state.counters["statements"] = static_cast<double>(statements.size());
    state.counters["cases"] = static_cast<double>(setup().caseCounts[distance]);
    if (distance == 500'000)
      state.SetLabel("target < 500 ms" + verdict(state.counters["p99_ms"] < 500));
    else
      state.SetLabel("no target");
  });
  // No breakpoint stays for the benchmarks after this one.
  if (fileWithBreakpoint && !client->hung()) {
    try {
      client->request("setBreakpoints",
                      json{{"source", json{{"path", plant()->sources.file(*fileWithBreakpoint).path}}},
                           {"breakpoints", json::array()}});
    } catch (const std::exception&) {
    }
  }
}

// After a stepBack from a random position (untimed), what VS Code asks at each stop: stackTrace,
// scopes of the top frame, variables of its first scope; the three round trips are timed together.
void BM_DapInspectAfterMove(benchmark::State& state) {
  DapClient* client = clientFor(state);
  if (!client) return;
  guarded(state, [&] {
    std::mt19937_64 rng(kSeed + 4);
    Samples samples(kCpuClock);
    double variables = 0, frames = 0;
    for (auto _ : state) {
      const Position p = randomPosition(rng);
      const int64_t thread = seek(*client, p);
      const int64_t stopped = client->move("stepBack", json{{"threadId", thread}}).value("threadId", thread);
      const json vars = samples.time(state, [&] {
        const json stack = client->request("stackTrace", json{{"threadId", stopped}});
        if (stack["stackFrames"].empty()) throw ClientError("no stack frames after stepBack from " + at(p));
        const json scopes = client->request("scopes", json{{"frameId", stack["stackFrames"][0]["id"]}});
        if (scopes["scopes"].empty()) throw ClientError("no scopes after stepBack from " + at(p));
        frames += static_cast<double>(stack["stackFrames"].size());
        return client->request("variables", json{{"variablesReference", scopes["scopes"][0]["variablesReference"]}});
      });
      variables += static_cast<double>(vars["variables"].size());
    }
    report(state, samples, *client);
    const double n = static_cast<double>(samples.wallMs.size());
    state.counters["mean_frames"] = frames / n;
    state.counters["mean_variables"] = variables / n;
    state.SetLabel("stackTrace + scopes + variables, no target");
  });
}

void registerBenchmarks() {
  using benchmark::kMillisecond;
  benchmark::RegisterBenchmark("BM_DapThreads", BM_DapThreads)
      ->Iterations(samples(kThreadsSamples))
      ->UseManualTime()
      ->Unit(kMillisecond);
  benchmark::RegisterBenchmark("BM_DapStepBack", BM_DapStepBack)
      ->Iterations(samples(kStepBackSamples))
      ->UseManualTime()
      ->Unit(kMillisecond);
  for (uint64_t d : kDistances)
    benchmark::RegisterBenchmark("BM_DapReverseContinue", BM_DapReverseContinue)
        ->ArgName("cycles_back")
        ->Arg(static_cast<int64_t>(d))
        ->Iterations(breakpointSamples(d))
        ->UseManualTime()
        ->Unit(kMillisecond);
  benchmark::RegisterBenchmark("BM_DapInspectAfterMove", BM_DapInspectAfterMove)
      ->Iterations(samples(kInspectSamples))
      ->UseManualTime()
      ->Unit(kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::vector<char*>> rest = parseFlags(argc, argv, "dap_replay_bench", [](std::string_view arg) {
    std::string value;
    if (!parseFlag(arg, "--timeout-seconds", value)) return false;
    config.timeoutSeconds = std::stod(value);
    return true;
  });
  if (!rest) return 1;
  if (commonFlags.cycles < 2) {
    std::fprintf(stderr, "dap_replay_bench: --cycles must be at least 2\n");
    return 1;
  }
  registerBenchmarks();
  if (!runBenchmarks(*rest)) return 1;
  bool hung = false;
  if (plantHistoryMade()) {
    Setup& s = setup();
    if (s.client) {
      hung = s.client->hung();
      s.client->close();
    }
  }
  removePlantTrace();
  if (hung) std::_Exit(2);  // the abandoned session's threads may never end
  return 0;
}
