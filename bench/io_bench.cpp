// Modbus TCP I/O and the scan thread (issue 29; docs/fieldbus.md; bench/README.md, "io_bench"): what
// polling devices costs the cycles, how long a device's change takes to reach the program, and what
// recording costs when the fieldbus inputs change at every cycle. The devices are libmodbus servers
// on loopback threads of this process (tests/support/modbus_server.h); the drivers are scanback's
// (runtime/io/modbus_device.h); the scan loop is the runtime host's (recorder/run_loop.h) in real
// time, a 1 ms task, each cycle timed from its release to after its outputs were handed over
// (readInputs + the cycle + writeOutputs).
//
//   BM_IoCycleNoIo/N, BM_IoCycle8Devices/N   the baseline (no I/O) and 8 devices, each 16 input
//        and 16 holding registers, polled every 10 ms; interleaved, --pairs times (default 3), each
//        --seconds long (default 2). The last adds p99_ratio and median_ratio (median over the
//        phases of each). Target: p99_ratio <= 1.05.
//   BM_IoInputLatency   one device polled every 10 ms; a register changed --changes times (default
//        100): from the change to the start of the first cycle that reads it, p50 and p99, and
//        p99_over_bound = p99 / (period + cycle). Target: <= 1.
//   BM_IoRecordNone/N, BM_IoRecord/N   8 devices polled every 1 ms whose inputs change at every
//        poll (so at about every cycle), without a recorder and with one (a flight recorder in
//        memory, as --control keeps); interleaved. The last adds p99_ratio and mean_ratio.
//        Target: <= 1.05.
// Each phase also reports the scan thread's own CPU time per cycle (cpu_p99_us, and cpu_p99_ratio
// with the ratios) and the cycles in which it blocked (cycles_waited: it must be 0, the task never
// waits) or was preempted (cycles_preempted): on a loaded machine the wall-clock p99 is the
// scheduler's, and these say whether scanback's own work is what grew.
//
// Flags, among Google Benchmark's: --seconds=S, --pairs=N, --changes=N, --work=N (the iterations of
// the program's loop, default 20000: a cycle of about 100 us), --scan-priority=N (the scan thread
// under SCHED_FIFO at N with memory locked, as `scanback run --scan-priority N` runs it: in every
// phase, baselines too; 0, the default: the ordinary policy).
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "recorder/recorder.h"
#include "recorder/run_loop.h"
#include "runtime/io/config.h"
#include "runtime/io/modbus_device.h"
#include "runtime/realtime.h"
#include "tests/support/modbus_server.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"

using namespace scanback;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  double seconds = 2;
  int pairs = 3;
  int changes = 100;
  int work = 20000;      // iterations of the program's loop: a cycle of some 100 us, as a plant's
  int scanPriority = 0;  // SCHED_FIFO for the scan thread; 0: the ordinary policy
} config;

constexpr int kDevices = 8;

// 8 devices' worth of I/O (16 words each way per device: located variables in0..in127 at %IW0..,
// out0..out127 at %QW0..) and a little work, every 1 ms.
std::string programText() {
  std::string vars, body;
  for (int w = 0; w < kDevices * 16; ++w) {
    vars += "  in" + std::to_string(w) + " AT %IW" + std::to_string(w) + " : INT;\n";
    vars += "  out" + std::to_string(w) + " AT %QW" + std::to_string(w) + " : INT;\n";
    body += "out" + std::to_string(w) + " := in" + std::to_string(w) + " + 1;\n";
  }
  return "PROGRAM Bench\nVAR\n" + vars + "  k : DINT;\n  acc : DINT;\nEND_VAR\n" + body + "acc := 0;\nFOR k := 1 TO " +
         std::to_string(config.work) +
         " DO\n  acc := acc + k * 3;\nEND_FOR;\nEND_PROGRAM\n\nCONFIGURATION Cfg\n  "
         "TASK Fast (INTERVAL := T#1ms, PRIORITY := 1);\n  PROGRAM Main WITH Fast : Bench;\nEND_CONFIGURATION\n";
}

std::shared_ptr<const Program> program() {
  static std::shared_ptr<const Program> p = [] {
    SourceSet sources;
    sources.add("bench.st", programText());
    Diagnostics diags;
    std::shared_ptr<const Program> compiled = compileProject(sources, diags, {});
    if (!compiled) std::fprintf(stderr, "io_bench: %s", diags.format(sources).c_str());
    return compiled;
  }();
  return p;
}

std::string devicesToml(const std::vector<std::unique_ptr<test::ModbusTestServer>>& servers, const char* period) {
  std::string t;
  for (size_t d = 0; d < servers.size(); ++d)
    t += "[[device]]\nname = \"d" + std::to_string(d) +
         "\"\nendpoint = \"tcp://127.0.0.1:" + std::to_string(servers[d]->port()) + "\"\nperiod = \"" + period +
         "\"\ntimeout = \"100ms\"\n[[device.map]]\narea = \"input_registers\"\naddress = 0\ncount = 16\nto = "
         "\"%IW" +
         std::to_string(d * 16) +
         "\"\ntype = \"INT\"\n[[device.map]]\narea = \"holding_registers\"\naddress = 0\ncount = 16\nto = \"%QW" +
         std::to_string(d * 16) + "\"\ntype = \"INT\"\n";
  return t;
}

struct Devices {
  std::vector<std::unique_ptr<test::ModbusTestServer>> servers;
  std::vector<std::shared_ptr<runtime::IoDriver>> drivers;
  std::string error;

  Devices(int n, const char* period, int tick = 0) {
    for (int d = 0; d < n; ++d) {
      servers.push_back(std::make_unique<test::ModbusTestServer>());
      servers.back()->setTickOnRequest(tick);
    }
    const std::optional<runtime::io::IoConfig> c =
        runtime::io::parseIoConfig(devicesToml(servers, period), "bench.toml", program().get(), error);
    if (c) drivers = runtime::io::startDevices(*c);
  }
  // Until every device has answered a round.
  bool answering() const {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    for (const auto& d : drivers)
      while (static_cast<const runtime::io::ModbusDevice&>(*d).roundsCompleted() == 0)
        if (Clock::now() > deadline)
          return false;
        else
          std::this_thread::yield();
    return true;
  }
};

class SleepWaits final : public recorder::RunLoopWaits {
 public:
  bool waitUntil(Clock::time_point due) override {
    std::this_thread::sleep_until(due);
    return false;
  }
  bool ending() override { return false; }
};

struct Phase {
  std::vector<double> cycleUs;
  // The scan thread's own CPU time in each cycle (CLOCK_THREAD_CPUTIME_ID): what the cycle cost it,
  // without the time it spent off the processor. And the cycles in which it blocked (a voluntary
  // context switch: it waited on something) or was preempted (an involuntary one: another thread
  // had the processor), from getrusage(RUSAGE_THREAD). "The task never waits" is waited == 0; a
  // p99 that the CPU time does not share is the machine's load, not scanback's work.
  std::vector<double> cpuUs;
  uint64_t waited = 0, preempted = 0;
  static double quantile(std::vector<double>& v, double q) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
  }
  double p(double q) { return quantile(cycleUs, q); }
  double cpuP(double q) { return quantile(cpuUs, q); }
  double mean() const {
    double s = 0;
    for (double v : cycleUs) s += v;
    return cycleUs.empty() ? 0 : s / static_cast<double>(cycleUs.size());
  }
};

// Runs the program in real time for `seconds` (or until `stop`) with `drivers` (and a recorder when `record`),
// each cycle timed; `onCycle(rt, releasedAt)` after each cycle's inputs were read.
template <class OnCycle>
Phase runCycles(const std::vector<std::shared_ptr<runtime::IoDriver>>& drivers, bool record, double seconds,
                OnCycle onCycle, const std::atomic<bool>* stop = nullptr) {
  Runtime rt(program());
  std::unique_ptr<recorder::Recorder> rec;
  if (record) {
    recorder::RecorderOptions options;
    options.ringBytes = 64'000'000;
    std::string error;
    rec = recorder::Recorder::start(rt, options, error);
    if (!rec) throw std::runtime_error("recorder: " + error);
  }
  recorder::RunLoopOptions loopOptions;
  loopOptions.realtime = true;
  recorder::RunLoop loop(rt, loopOptions);
  loop.setRecorder(rec.get());
  SleepWaits waits;
  // After the recorder's writer started, so that only this thread takes it (runtime/realtime.h).
  if (config.scanPriority) {
    const std::vector<std::string> failed = runtime::becomeRealtime(config.scanPriority);
    if (!failed.empty()) throw std::runtime_error(failed.front());
  }
  Phase phase;
  phase.cycleUs.reserve(static_cast<size_t>(seconds * 1100));
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (stop ? !stop->load() : Clock::now() < end) {
    CycleStart next;
    if (loop.prepare(waits, next) != recorder::RunLoop::Next::Cycle) break;
    rusage r0{}, r1{};
    timespec c0{}, c1{};
    getrusage(RUSAGE_THREAD, &r0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    const auto t0 = Clock::now();
    for (const auto& d : drivers) d->readInputs(rt.inputs());
    onCycle(rt, t0);
    rt.runCycle();
    for (const auto& d : drivers) d->writeOutputs(rt.outputs());
    phase.cycleUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    getrusage(RUSAGE_THREAD, &r1);
    phase.cpuUs.push_back(static_cast<double>(c1.tv_sec - c0.tv_sec) * 1e6 +
                          static_cast<double>(c1.tv_nsec - c0.tv_nsec) / 1e3);
    phase.waited += r1.ru_nvcsw != r0.ru_nvcsw;
    phase.preempted += r1.ru_nivcsw != r0.ru_nivcsw;
  }
  if (config.scanPriority) {
    // Back to the ordinary policy: the next phase's device threads are started from this thread.
    sched_param ordinary{};
    ::pthread_setschedparam(::pthread_self(), SCHED_OTHER, &ordinary);
  }
  if (rec) {
    std::string error;
    if (!rec->finish(error)) throw std::runtime_error("recorder: " + error);
  }
  return phase;
}

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::map<std::string, std::vector<Phase>> gPhases;

void reportPhase(benchmark::State& state, const std::string& kind, Phase p) {
  state.counters["cycles"] = static_cast<double>(p.cycleUs.size());
  state.counters["median_us"] = p.p(0.5);
  state.counters["p99_us"] = p.p(0.99);
  state.counters["mean_us"] = p.mean();
  state.counters["cpu_p99_us"] = p.cpuP(0.99);
  state.counters["cycles_waited"] = static_cast<double>(p.waited);
  state.counters["cycles_preempted"] = static_cast<double>(p.preempted);
  std::fprintf(stderr,
               "io_bench: %s: %zu cycles, median %.2f us, p99 %.2f us, mean %.2f us; the scan thread's CPU time "
               "median %.2f us, p99 %.2f us; cycles in which it blocked %llu, was preempted %llu\n",
               kind.c_str(), p.cycleUs.size(), p.p(0.5), p.p(0.99), p.mean(), p.cpuP(0.5), p.cpuP(0.99),
               static_cast<unsigned long long>(p.waited), static_cast<unsigned long long>(p.preempted));
  gPhases[kind].push_back(std::move(p));
}

void reportRatio(benchmark::State& state, const std::string& kind, const std::string& base) {
  std::vector<double> p99, median, mean, bp99, bmedian, bmean, cpu99, bcpu99;
  for (Phase& q : gPhases[kind])
    p99.push_back(q.p(0.99)), median.push_back(q.p(0.5)), mean.push_back(q.mean()), cpu99.push_back(q.cpuP(0.99));
  for (Phase& q : gPhases[base])
    bp99.push_back(q.p(0.99)), bmedian.push_back(q.p(0.5)), bmean.push_back(q.mean()), bcpu99.push_back(q.cpuP(0.99));
  state.counters["p99_ratio"] = medianOf(p99) / medianOf(bp99);
  state.counters["cpu_p99_ratio"] = medianOf(cpu99) / medianOf(bcpu99);
  std::fprintf(stderr, "io_bench: %s against %s: the scan thread's CPU time p99_ratio %.3f\n", kind.c_str(),
               base.c_str(), medianOf(cpu99) / medianOf(bcpu99));
  state.counters["median_ratio"] = medianOf(median) / medianOf(bmedian);
  state.counters["mean_ratio"] = medianOf(mean) / medianOf(bmean);
  std::fprintf(stderr, "io_bench: %s against %s over %zu pairs: p99_ratio %.3f, median_ratio %.3f, mean_ratio %.3f\n",
               kind.c_str(), base.c_str(), p99.size(), medianOf(p99) / medianOf(bp99),
               medianOf(median) / medianOf(bmedian), medianOf(mean) / medianOf(bmean));
}

void cyclePhase(benchmark::State& state, bool io, bool last) {
  for (auto _ : state) {
    try {
      std::unique_ptr<Devices> devices;
      if (io) {
        devices = std::make_unique<Devices>(kDevices, "10ms");
        if (!devices->error.empty()) throw std::runtime_error(devices->error);
        if (!devices->answering()) throw std::runtime_error("the devices do not answer");
      }
      static const std::vector<std::shared_ptr<runtime::IoDriver>> none;
      const auto t0 = Clock::now();
      Phase p =
          runCycles(io ? devices->drivers : none, false, config.seconds, [](const Runtime&, Clock::time_point) {});
      state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
      reportPhase(state, io ? "8 devices" : "no I/O", std::move(p));
      if (io && last) reportRatio(state, "8 devices", "no I/O");
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
  }
}

void recordPhase(benchmark::State& state, bool record, bool last) {
  for (auto _ : state) {
    try {
      Devices devices(kDevices, "1ms", 16);
      if (!devices.error.empty()) throw std::runtime_error(devices.error);
      if (!devices.answering()) throw std::runtime_error("the devices do not answer");
      uint64_t changed = 0;
      std::vector<uint8_t> previous;
      const auto t0 = Clock::now();
      Phase p = runCycles(devices.drivers, record, config.seconds, [&](const Runtime& rt, Clock::time_point) {
        changed += rt.inputs() != previous;
        previous = rt.inputs();
      });
      state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
      state.counters["cycles_with_new_inputs"] = static_cast<double>(changed);
      reportPhase(state, record ? "recording" : "not recording", std::move(p));
      if (record && last) reportRatio(state, "recording", "not recording");
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
  }
}

void BM_IoInputLatency(benchmark::State& state) {
  for (auto _ : state) {
    try {
      Devices devices(1, "10ms");
      if (!devices.error.empty()) throw std::runtime_error(devices.error);
      if (!devices.answering()) throw std::runtime_error("the device does not answer");
      std::atomic<int> wanted{-1};
      std::atomic<int64_t> changedAtNs{0}, seenAtNs{0};
      std::atomic<bool> done{false};
      std::vector<double> latencyMs;
      std::thread changer([&] {
        for (int i = 1; i <= config.changes; ++i) {
          seenAtNs.store(0);
          devices.servers[0]->with([&](modbus_mapping_t& m) {
            m.tab_input_registers[0] = static_cast<uint16_t>(i);
            changedAtNs.store(Clock::now().time_since_epoch().count());
          });
          wanted.store(i);
          // (Not a spin: on two processors it would take one from the device's threads.)
          while (!seenAtNs.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
          latencyMs.push_back(static_cast<double>(seenAtNs.load() - changedAtNs.load()) / 1e6);
          // The next change at a moment of its own against the poll (up to 3 ms later).
          std::this_thread::sleep_for(std::chrono::microseconds(1000 + 997 * (i % 3)));
        }
        done.store(true);
      });
      const auto t0 = Clock::now();
      runCycles(
          devices.drivers, false, 0,
          [&](const Runtime& rt, Clock::time_point releasedAt) {
            const int w = wanted.load();
            int16_t v;
            std::memcpy(&v, rt.inputs().data(), 2);
            if (w > 0 && v == w && !seenAtNs.load()) seenAtNs.store(releasedAt.time_since_epoch().count());
          },
          &done);
      changer.join();
      state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
      std::sort(latencyMs.begin(), latencyMs.end());
      const double p50 = latencyMs[latencyMs.size() / 2];
      const double p99 = latencyMs[std::min(latencyMs.size() - 1, latencyMs.size() * 99 / 100)];
      const double bound = 10.0 + 1.0;  // the poll period and the task's interval, ms
      state.counters["changes"] = static_cast<double>(latencyMs.size());
      state.counters["p50_ms"] = p50;
      state.counters["p99_ms"] = p99;
      state.counters["max_ms"] = latencyMs.back();
      state.counters["p99_over_bound"] = p99 / bound;
      std::fprintf(stderr,
                   "io_bench: input latency over %zu changes: p50 %.2f ms, p99 %.2f ms, max %.2f ms; p99 / (period "
                   "10 ms + cycle 1 ms) = %.3f\n",
                   latencyMs.size(), p50, p99, latencyMs.back(), p99 / bound);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--seconds="))
      config.seconds = std::stod(std::string(a.substr(10)));
    else if (a.starts_with("--pairs="))
      config.pairs = std::stoi(std::string(a.substr(8)));
    else if (a.starts_with("--work="))
      config.work = std::stoi(std::string(a.substr(7)));
    else if (a.starts_with("--changes="))
      config.changes = std::stoi(std::string(a.substr(10)));
    else if (a.starts_with("--scan-priority="))
      config.scanPriority = std::stoi(std::string(a.substr(16)));
    else
      rest.push_back(argv[i]);
  }
  for (int pair = 0; pair < config.pairs; ++pair) {
    const bool last = pair + 1 == config.pairs;
    for (bool io : {false, true})
      benchmark::RegisterBenchmark(
          (std::string(io ? "BM_IoCycle8Devices/" : "BM_IoCycleNoIo/") + std::to_string(pair)).c_str(),
          [io, last](benchmark::State& state) { cyclePhase(state, io, last); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_IoInputLatency", BM_IoInputLatency)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (int pair = 0; pair < config.pairs; ++pair) {
    const bool last = pair + 1 == config.pairs;
    for (bool record : {false, true})
      benchmark::RegisterBenchmark(
          (std::string(record ? "BM_IoRecord/" : "BM_IoRecordNone/") + std::to_string(pair)).c_str(),
          [record, last](benchmark::State& state) { recordPhase(state, record, last); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  }
  if (config.scanPriority) {
    std::string error;
    if (!runtime::probeScanPriority(config.scanPriority, error)) {
      std::fprintf(stderr, "io_bench: %s\n", error.c_str());
      return 2;
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
