// Attached sessions (issue 15; docs/control.md): what one attached client stepping back
// continuously costs the runtime's task, and how soon a cycle reaches the attached session's
// history. bench/README.md ("attach_bench") has the results and the targets.
//
// Each phase starts its own runtime as a separate process, as on a line:
//   scanback run examples/plant/*.st --realtime --inputs stimulus.csv --quiet --control unix://TMP/rt.sock
// (the Fast task every 10 ms, the Slow one every 100 ms, a 64 MB flight recorder handing cycles
// over every 40 ms), runs for --seconds of wall time, reads the live task's cycle times from the
// runtime's status (`cycleTimeNs` of the Fast task: a log-linear histogram of about 1.6%
// resolution over the whole phase), and stops it.
//
//   BM_AttachNoClient       the baseline: nobody attached; status is asked once a second
//   BM_AttachSteppingBack   one DAP session (bench/dap_client.h, in this process) attached to it:
//                           attach, configurationDone, pause, then `stepBack` in a loop; every 200
//                           moves (and when it reaches the start) scanback/seek to the newest cycle
//                           of a fresh scanback/timeline, so that it keeps working near the live end
//   BM_AttachArrivalDelay   one attached session, paused, asks scanback/timeline every 5 ms; each time
//                           its lastCycle grows, the delay of the oldest newly arrived cycle is taken
//                           as now - (the runtime's start wall time + the virtual start time of the
//                           newest cycle known before): an upper bound (the cycle began later than
//                           that, ended later still, and the runtime's pacing starts after its
//                           recorded start time), measured to 5 ms. Counters: arrivals,
//                           delay_median_ms, delay_p99_ms, delay_max_ms. Target: under 150 ms.
//
// Counters of the first two: cycles, median_us, p99_us, max_us (the Fast task), gaps (cycles the
// runtime's recorder dropped), loadavg; BM_AttachSteppingBack adds moves, moves_per_s, and
// p99_ratio / median_ratio against the baseline measured just before it in the same run. Target:
// p99_ratio <= 1.05.
//
// Flags, among Google Benchmark's: --seconds=S (default 10), --timeout-seconds=S (default 60).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/dap_client.h"
#include "bench/plant_history.h"
#include "bench/runtime_process.h"
#include "control/client.h"
#include "traces/framing.h"
#include "traces/trace_reader.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace scanback::bench;
using json = nlohmann::json;

namespace {

struct Config {
  double seconds = 10;
  double timeoutSeconds = 60;
} config;

constexpr uint64_t kMovesPerSeek = 200;

struct CycleTime {
  double medianUs = 0, p99Us = 0, maxUs = 0;
  uint64_t cycles = 0;
};
std::optional<CycleTime> gBaseline;
bool gHung = false;

// The runtime's start, wall clock (the trace header's startWallTimeNs), read from a stream.
int64_t startWallTimeNs(const RuntimeProcess& rt) {
  std::string error;
  auto client = control::ControlClient::connect(rt.endpoint(), std::nullopt, error);
  if (!client || !client->request(json{{"command", "stream"}}, error)) throw ClientError("stream: " + error);
  auto header = client->nextEvent(error);
  if (!header) throw ClientError("stream: " + error);
  std::vector<uint8_t> bytes(trace::kFileMagic, trace::kFileMagic + 8);
  bytes.insert(bytes.end(), header->bytes.begin(), header->bytes.end());
  auto reader = trace::TraceReader::openBytes(std::move(bytes), error);
  if (!reader) throw ClientError("stream header: " + error);
  return reader->header().startWallTimeNs;
}

CycleTime finish(benchmark::State& state, const char* name, const RuntimeProcess& rt, double wallNs) {
  const std::optional<json> s = rt.status();
  if (!s) throw ClientError("the runtime gives no status");
  const FastCycleTimes fast = fastCycleTimes(*s);
  CycleTime r{fast.medianUs, fast.p99Us, fast.maxUs, (*s)["cycles"].get<uint64_t>()};
  state.SetIterationTime(wallNs / 1e9);
  state.counters["cycles"] = static_cast<double>(r.cycles);
  state.counters["median_us"] = r.medianUs;
  state.counters["p99_us"] = r.p99Us;
  state.counters["max_us"] = r.maxUs;
  state.counters["gaps"] = (*s)["ring"].value("cyclesDropped", 0.0);
  std::fprintf(stderr, "attach_bench: %s: %llu cycles, Fast cycle time median %.2f us, p99 %.2f us, max %.2f us\n",
               name, static_cast<unsigned long long>(r.cycles), r.medianUs, r.p99Us, r.maxUs);
  return r;
}

std::unique_ptr<DapClient> attach(const RuntimeProcess& rt) {
  // A runtime that has some history already, as one attaches to on a line.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const std::optional<json> s = rt.status();
    if (s && s->contains("ring") && (*s)["ring"].value("chunks", 0) >= 3) break;
    if (std::chrono::steady_clock::now() > deadline) throw ClientError("the runtime holds no history");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto client = std::make_unique<DapClient>("attach_bench", config.timeoutSeconds);
  client->request("initialize", json{{"adapterID", "attach_bench"}, {"linesStartAt1", true}});
  client->request("attach", json{{"endpoint", rt.endpointText()}});
  client->request("configurationDone", json::object());
  client->move("pause", json{{"threadId", 1}});
  return client;
}

void BM_AttachNoClient(benchmark::State& state) {
  gBaseline.reset();
  for (auto _ : state) {
    try {
      RuntimeProcess rt("attach_bench");
      state.counters["loadavg"] = loadAverage();
      const double w0 = nowNs();
      while (nowNs() - w0 < config.seconds * 1e9) {
        if (!rt.status()) throw ClientError("the runtime gives no status");
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      gBaseline = finish(state, "no client", rt, nowNs() - w0);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
  }
  state.SetLabel("baseline");
}

void BM_AttachSteppingBack(benchmark::State& state) {
  for (auto _ : state) {
    std::unique_ptr<DapClient> client;
    try {
      RuntimeProcess rt("attach_bench");
      state.counters["loadavg"] = loadAverage();
      const double w0 = nowNs();
      client = attach(rt);
      uint64_t moves = 0;
      while (nowNs() - w0 < config.seconds * 1e9) {
        const json stop = client->move("stepBack", json{{"threadId", 1}});
        ++moves;
        bool atStart = false;
        for (const std::string& text : client->outputsOfLastRequest())
          if (text.find("the start of the recording was reached") != std::string::npos ||
              text.find("has no recorded cycle before") != std::string::npos)
            atStart = true;
        if (moves % kMovesPerSeek == 0 || atStart) {
          const json t = client->request("scanback/timeline", json::object());
          if (!t["lastCycle"].is_number_unsigned() || t["lastCycle"].get<uint64_t>() > (uint64_t{1} << 53))
            throw ClientError("scanback/timeline has no lastCycle: " + t.dump());
          client->move("scanback/seek", json{{"cycle", t["lastCycle"]}});
        }
      }
      const double wall = nowNs() - w0;
      const CycleTime r = finish(state, "stepping back", rt, wall);
      state.counters["moves"] = static_cast<double>(moves);
      state.counters["moves_per_s"] = static_cast<double>(moves) / (wall / 1e9);
      if (gBaseline) {
        state.counters["p99_ratio"] = r.p99Us / gBaseline->p99Us;
        state.counters["median_ratio"] = r.medianUs / gBaseline->medianUs;
      }
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
    if (client) {
      gHung = gHung || client->hung();
      client->close();
    }
  }
}

void BM_AttachArrivalDelay(benchmark::State& state) {
  for (auto _ : state) {
    std::unique_ptr<DapClient> client;
    try {
      RuntimeProcess rt("attach_bench");
      const int64_t startWall = startWallTimeNs(rt);
      client = attach(rt);
      std::vector<double> delaysMs;
      json t = client->request("scanback/timeline", json::object());
      uint64_t lastCycle = t["lastCycle"].get<uint64_t>();
      int64_t lastTimeNs = t["lastTimeNs"].get<int64_t>();
      const double w0 = nowNs();
      while (nowNs() - w0 < config.seconds * 1e9) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        t = client->request("scanback/timeline", json::object());
        const uint64_t newest = t["lastCycle"].get<uint64_t>();
        if (newest == lastCycle) continue;
        const int64_t now =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        delaysMs.push_back(static_cast<double>(now - (startWall + lastTimeNs)) / 1e6);
        lastCycle = newest;
        lastTimeNs = t["lastTimeNs"].get<int64_t>();
      }
      state.SetIterationTime((nowNs() - w0) / 1e9);
      if (delaysMs.empty()) throw ClientError("no cycle arrived in the session's history");
      std::sort(delaysMs.begin(), delaysMs.end());
      auto at = [&](double q) { return delaysMs[static_cast<size_t>(q * static_cast<double>(delaysMs.size() - 1))]; };
      state.counters["arrivals"] = static_cast<double>(delaysMs.size());
      state.counters["delay_median_ms"] = at(0.5);
      state.counters["delay_p99_ms"] = at(0.99);
      state.counters["delay_max_ms"] = delaysMs.back();
      std::fprintf(stderr, "attach_bench: arrival delay: %zu arrivals, median %.1f ms, p99 %.1f ms, max %.1f ms\n",
                   delaysMs.size(), at(0.5), at(0.99), delaysMs.back());
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
    if (client) {
      gHung = gHung || client->hung();
      client->close();
    }
  }
}

}  // namespace

BENCHMARK(BM_AttachNoClient)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttachSteppingBack)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AttachArrivalDelay)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--seconds="))
      config.seconds = std::stod(std::string(a.substr(10)));
    else if (a.starts_with("--timeout-seconds="))
      config.timeoutSeconds = std::stod(std::string(a.substr(18)));
    else
      rest.push_back(argv[i]);
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (gHung) std::_Exit(2);
  return 0;
}
