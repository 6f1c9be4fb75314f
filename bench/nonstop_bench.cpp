// Nonstop debugging: what a client working on the history costs the live task that is never
// halted, in the live task's cycle execution times; bench/README.md ("nonstop_bench") has the
// results and the target.
//
// Setup, per phase and outside its timing: a scanback::dap::Session runs on its own thread behind
// an in-memory pipe, and this process is its client (bench/dap_client.h, as in dap_replay_bench):
// initialize, launch {program: examples/plant/*.st, nonstop: true, realtime: true, inputs:
// stimulus.csv, stopOnEntry: true, cwd: examples/plant}, configurationDone, and the `stopped` event
// (entry, at the first recorded position). The live task then runs in real time (the Fast task
// every 10 ms, the Slow one every 100 ms) under the recorder, whatever the client does; the
// session works on the history that follows the growing trace.
//
// Each phase is one benchmark of one iteration in a fresh session, and lasts --seconds of wall
// time from the entry stop (the benchmark's manual time):
//
//   BM_NonstopIdleClient     the baseline: the client stays stopped and sends `threads` every 100 ms
//   BM_NonstopSteppingBack   the client steps back continuously: `stepBack` (threadId 1) and its
//                            `stopped` event, in a loop; after every 10th move stackTrace + scopes +
//                            variables of the first scope (what a user looking at values does);
//                            every 200 moves, and when a stepBack reaches the start of the
//                            recording, scanback/seek to lastCycle of a fresh scanback/timeline, so
//                            that it keeps working near the live end
//
// At the end of a phase, scanback/timeline's cycleTime (the live task's cycle execution times since
// the launch, a log-linear histogram of about 1.6% resolution: vm/runtime/cycle_times.h) gives the
// counters cycles, median_us, p99_us, max_us; then the session is disconnected. Also: gaps (cycles
// the recorder dropped, from the timeline), process_cpu_pct (this process's CPU time over the
// phase, in % of one core: the live task, the recorder, the session, the replayer and the client)
// and loadavg (the machine's 1-minute load average at the start of the phase). BM_NonstopSteppingBack
// adds moves (stepBacks done), moves_per_s, move_median_ms and move_p99_ms (a stepBack's round
// trip to its `stopped` event), seeks, starts (stepBacks that reached the start of the recording:
// the first one, from the entry, and any made while the trace still ends near cycle 0), inspections,
// and the ratios to the baseline measured just before it in
// the same run: p99_ratio and median_ratio. Target: p99_ratio < 1.05 (p99 cycle time grows by
// under 5%).
//
// Flags, among Google Benchmark's: --seconds=S (default 10: each phase's length), --repeats=N
// (default 1: the pair of phases N times, alternating, each stepping phase compared with the idle
// one just before it), --timeout-seconds=S (default 60: a request unanswered for that long fails the
// benchmark, naming the request; the session is abandoned and the process exits with status 2).
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/dap_client.h"
#include "bench/plant_history.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace scanback::bench;
using json = nlohmann::json;

namespace {

struct Config {
  double seconds = 10;
  int repeats = 1;
  double timeoutSeconds = 60;
} config;

constexpr auto kIdleRequestPeriod = std::chrono::milliseconds(100);
constexpr uint64_t kMovesPerSeek = 200;    // then back near the live end
constexpr uint64_t kMovesPerInspect = 10;  // stackTrace + scopes + variables

bool gHung = false;  // a session was abandoned: the process ends with _Exit(2)

// The live task's cycle times, as scanback/timeline reports them.
struct CycleTime {
  uint64_t cycles = 0;
  double medianUs = 0, p99Us = 0, maxUs = 0;
};
std::optional<CycleTime> gBaseline;  // the last idle phase's, for the ratios

fs::path plantDir() { return fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant"; }

std::vector<std::string> plantFiles() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(plantDir()))
    if (e.path().extension() == ".st") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// A fresh nonstop session on the plant, stopped at its entry.
std::unique_ptr<DapClient> launch() {
  auto client = std::make_unique<DapClient>("nonstop_bench", config.timeoutSeconds);
  client->request("initialize",
                  json{{"adapterID", "nonstop_bench"}, {"linesStartAt1", true}, {"columnsStartAt1", true}});
  client->request("launch", json{{"program", plantFiles()},
                                 {"nonstop", true},
                                 {"realtime", true},
                                 {"inputs", (plantDir() / "stimulus.csv").string()},
                                 {"stopOnEntry", true},
                                 {"cwd", plantDir().string()}});
  const json stop = client->move("configurationDone", json::object());
  if (stop.value("reason", "") != "entry") throw ClientError("the first stop is not the entry: " + stop.dump());
  return client;
}

double processCpuNs() { return cpuNs(CLOCK_PROCESS_CPUTIME_ID); }

double loadAverage() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

// The end of a phase: the cycle times from the timeline, and the common counters.
CycleTime finish(benchmark::State& state, const char* name, DapClient& client, double wallNs, double cpuNs) {
  const json t = client.request("scanback/timeline", json::object());
  if (!t.contains("cycleTime")) throw ClientError("scanback/timeline has no cycleTime: " + t.dump());
  const json& c = t["cycleTime"];
  CycleTime r;
  r.cycles = c.at("cycles").get<uint64_t>();
  r.medianUs = c.at("medianNs").get<double>() / 1e3;
  r.p99Us = c.at("p99Ns").get<double>() / 1e3;
  r.maxUs = c.at("maxNs").get<double>() / 1e3;
  state.SetIterationTime(wallNs / 1e9);
  state.counters["cycles"] = static_cast<double>(r.cycles);
  state.counters["median_us"] = r.medianUs;
  state.counters["p99_us"] = r.p99Us;
  state.counters["max_us"] = r.maxUs;
  state.counters["gaps"] = static_cast<double>(t.value("gaps", json::array()).size());
  state.counters["process_cpu_pct"] = 100 * cpuNs / wallNs;
  std::fprintf(
      stderr, "nonstop_bench: %s: %llu cycles (timeline %s..%s), cycle time median %.2f us, p99 %.2f us, max %.2f us\n",
      name, static_cast<unsigned long long>(r.cycles), t["firstCycle"].dump().c_str(), t["lastCycle"].dump().c_str(),
      r.medianUs, r.p99Us, r.maxUs);
  return r;
}

// Runs a phase in a fresh session: `body(client, deadlineNs)` until the deadline; a ClientError
// or another exception ends the benchmark with SkipWithError. `name` is for stderr.
template <class F>
std::optional<CycleTime> phase(benchmark::State& state, const char* name, F&& body) {
  std::optional<CycleTime> result;
  std::unique_ptr<DapClient> client;
  try {
    client = launch();
    state.counters["loadavg"] = loadAverage();
    const double w0 = nowNs(), c0 = processCpuNs();
    body(*client, w0 + config.seconds * 1e9);
    const double wall = nowNs() - w0, cpu = processCpuNs() - c0;
    result = finish(state, name, *client, wall, cpu);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  if (client) {
    gHung = gHung || client->hung();
    client->close();  // disconnect: the live task ends, the temporary trace is removed
  }
  return result;
}

// ---------------------------------------------------------------- benchmarks

void BM_NonstopIdleClient(benchmark::State& state) {
  gBaseline.reset();
  for (auto _ : state) {
    uint64_t requests = 0;
    gBaseline = phase(state, "idle client", [&](DapClient& client, double deadlineNs) {
      auto next = std::chrono::steady_clock::now();
      while (nowNs() < deadlineNs) {
        client.request("threads", json::object());
        ++requests;
        next += kIdleRequestPeriod;
        std::this_thread::sleep_until(next);
      }
    });
    state.counters["requests"] = static_cast<double>(requests);
  }
  state.SetLabel("baseline");
}

// Whether the session said, about the last move, that it reached the start of the recording
// (replayer's note, or a task with no recorded cycle before the position).
bool reachedStart(const DapClient& client) {
  for (const std::string& text : client.outputsOfLastRequest())
    if (text.find("the start of the recording was reached") != std::string::npos ||
        text.find("has no recorded cycle before") != std::string::npos)
      return true;
  return false;
}

void BM_NonstopSteppingBack(benchmark::State& state) {
  for (auto _ : state) {
    uint64_t moves = 0, starts = 0, seeks = 0, inspections = 0;
    std::vector<double> moveMs;
    double phaseNs = 0;
    const std::optional<CycleTime> r = phase(state, "stepping back", [&](DapClient& client, double deadlineNs) {
      const double t0 = nowNs();
      while (nowNs() < deadlineNs) {
        const double m0 = nowNs();
        const json stop = client.move("stepBack", json{{"threadId", 1}});
        moveMs.push_back((nowNs() - m0) / 1e6);
        ++moves;
        const bool atStart = reachedStart(client);
        starts += atStart;
        if (moves % kMovesPerInspect == 0) {
          const json stack = client.request("stackTrace", json{{"threadId", stop.value("threadId", int64_t{1})}});
          if (!stack["stackFrames"].empty()) {
            const json scopes = client.request("scopes", json{{"frameId", stack["stackFrames"][0]["id"]}});
            if (!scopes["scopes"].empty())
              client.request("variables", json{{"variablesReference", scopes["scopes"][0]["variablesReference"]}});
          }
          ++inspections;
        }
        if (atStart || moves % kMovesPerSeek == 0) {
          const json t = client.request("scanback/timeline", json::object());
          const json seek = client.move("scanback/seek", json{{"cycle", t.at("lastCycle")}});
          if (seek.value("reason", "") != "goto") throw ClientError("scanback/seek stopped with " + seek.dump());
          ++seeks;
        }
      }
      phaseNs = nowNs() - t0;
    });
    if (!r) return;
    state.counters["moves"] = static_cast<double>(moves);
    state.counters["moves_per_s"] = static_cast<double>(moves) / (phaseNs / 1e9);
    state.counters["move_median_ms"] = quantile(moveMs, 0.5);
    state.counters["move_p99_ms"] = quantile(moveMs, 0.99);
    state.counters["seeks"] = static_cast<double>(seeks);
    state.counters["starts"] = static_cast<double>(starts);
    state.counters["inspections"] = static_cast<double>(inspections);
    if (!gBaseline) {
      state.SetLabel("no baseline: BM_NonstopIdleClient did not run just before (filtered out, or it failed)");
      continue;
    }
    const double p99Ratio = r->p99Us / gBaseline->p99Us;
    state.counters["p99_ratio"] = p99Ratio;
    state.counters["median_ratio"] = r->medianUs / gBaseline->medianUs;
    state.SetLabel("target p99 growth < 5%" + verdict(p99Ratio < 1.05));
  }
}

void registerBenchmarks() {
  for (int i = 1; i <= config.repeats; ++i) {
    const std::string suffix = config.repeats > 1 ? "/run:" + std::to_string(i) : "";
    benchmark::RegisterBenchmark(("BM_NonstopIdleClient" + suffix).c_str(), BM_NonstopIdleClient)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_NonstopSteppingBack" + suffix).c_str(), BM_NonstopSteppingBack)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string value;
    try {
      if (parseFlag(argv[i], "--seconds", value)) {
        config.seconds = std::stod(value);
      } else if (parseFlag(argv[i], "--repeats", value)) {
        config.repeats = std::stoi(value);
      } else if (parseFlag(argv[i], "--timeout-seconds", value)) {
        config.timeoutSeconds = std::stod(value);
      } else {
        rest.push_back(argv[i]);
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "nonstop_bench: bad value in %s\n", argv[i]);
      return 1;
    }
  }
  if (!(config.seconds > 0) || config.repeats < 1 || !(config.timeoutSeconds > 0)) {
    std::fprintf(stderr, "nonstop_bench: --seconds and --timeout-seconds must be positive, --repeats at least 1\n");
    return 1;
  }
  registerBenchmarks();
  if (!runBenchmarks(rest)) return 1;
  if (gHung) std::_Exit(2);  // an abandoned session's threads may never end
  return 0;
}
