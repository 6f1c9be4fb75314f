// Control clients and the task they watch (issue 27; docs/control.md, "Limits"): what clients
// polling a runtime's `status` cost its scan cycles. bench/README.md ("control_bench") has the
// results and the target.
//
// Each phase starts its own runtime as a separate process, as on a line:
//   scanback run examples/plant/*.st --realtime --inputs stimulus.csv --quiet --control unix://TMP/rt.sock
// with the plant's tasks sped up (--fast-ms, default 1: the Fast task every 1 ms, the Slow one every
// 10 ms, so that a phase has some 10,000 cycles and its p99 is the 100th-longest, not the 10th, on
// a machine shared with other work), lets it run for --seconds of wall time
// while the phase's clients (threads of this process) poll it, then reads the Fast task's cycle
// times from the runtime's status (`cycleTimeNs`: a log-linear histogram of about 1.6 % resolution
// over the whole phase) and stops it.
//
//   BM_ControlNoClient/N         the baseline: nobody polls
//   BM_ControlPollingStatus/N    --clients threads (default 8), each with one connection, asking
//                                `status` in a loop, each request as soon as the last was answered
//   BM_ControlConnectEach/N      --clients threads, each connecting anew for every `status` (as
//                                `scanback ctl status` in a shell loop does, without its process)
//
// The three run --pairs times (default 3), interleaved (no client, polling, connecting, no client,
// …), so that a change in the machine's load meanwhile falls on all of them alike. Counters of each
// phase: cycles, median_us, p99_us, max_us (the Fast task), requests, requests_per_s,
// runtime_cpu_ms (the runtime's processor time in the phase, all its threads), preempted (how often
// its scan thread was taken off the processor while it wanted to run), loadavg. The
// last phase of each kind adds p99_ratio and median_ratio: the median over its phases of p99 (or
// median), over the same for the baseline phases. Target: p99_ratio <= 1.05 for
// BM_ControlPollingStatus.
//
// Flags, among Google Benchmark's: --seconds=S (default 10), --pairs=N (default 3), --clients=N
// (default 8), --fast-ms=N (default 1; 10 runs the plant as it is).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/runtime_process.h"
#include "control/client.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace scanback::bench;
using json = nlohmann::json;

namespace {

struct Config {
  double seconds = 10;
  int pairs = 3;
  int clients = 8;
  int fastMs = 1;  // the Fast task's interval; the Slow task's is ten times that
} config;

struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double nowNs() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void replaceOnce(std::string& text, const std::string& what, const std::string& with) {
  const size_t at = text.find(what);
  if (at == std::string::npos) throw BenchError("examples/plant/config.st has no '" + what + "'");
  text.replace(at, what.size(), with);
}

// How often the scan thread (the runtime's main thread) has been taken off the processor while it
// wanted to run (nonvoluntary_ctxt_switches): each time is a cycle that waited for another thread.
double preemptions(pid_t pid) {
  std::istringstream status(readFile(fmt::format("/proc/{}/task/{}/status", pid, pid)));
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("nonvoluntary_ctxt_switches:")) return std::stod(line.substr(27));
  return -1;
}

// The processor time process `pid` has used so far, in milliseconds (its threads', all of them).
double cpuMs(pid_t pid) {
  std::istringstream stat(readFile(fmt::format("/proc/{}/stat", pid)));
  std::string field;
  // utime and stime are fields 14 and 15; the command (field 2) has no spaces here.
  double ticks = 0;
  for (int i = 1; i <= 15 && stat >> field; ++i)
    if (i >= 14) ticks += std::stod(field);
  return ticks * 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The plant with its tasks at --fast-ms: more cycles in a phase make a steadier p99.
void speedUp(const fs::path& file, std::string& text) {
  if (file.filename() != "config.st") return;
  replaceOnce(text, "INTERVAL := T#10ms", fmt::format("INTERVAL := T#{}ms", config.fastMs));
  replaceOnce(text, "INTERVAL := T#100ms", fmt::format("INTERVAL := T#{}ms", 10 * config.fastMs));
}

enum class Clients { None, Polling, ConnectEach };

// `config.clients` threads asking for status until stopped; counts the answers.
class Pollers {
 public:
  Pollers(const control::Endpoint& endpoint, Clients kind) {
    if (kind == Clients::None) return;
    for (int i = 0; i < config.clients; ++i)
      threads_.emplace_back([this, &endpoint, kind] {
        std::string error;
        std::unique_ptr<control::ControlClient> client;
        while (!stop_.load(std::memory_order_relaxed)) {
          if (!client) client = control::ControlClient::connect(endpoint, std::nullopt, error);
          if (!client) {
            failure("connect: " + error);
            return;
          }
          const std::optional<json> r = client->request(json{{"command", "status"}}, error);
          if (!r || !r->value("ok", false)) {
            failure("status: " + (r ? r->dump() : error));
            return;
          }
          answers_.fetch_add(1, std::memory_order_relaxed);
          if (kind == Clients::ConnectEach) client.reset();
        }
      });
  }
  ~Pollers() { stop(); }
  void stop() {
    stop_ = true;
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }
  uint64_t answers() const { return answers_.load(); }
  std::string error() {
    std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  void failure(const std::string& what) {
    std::lock_guard lock(mutex_);
    if (error_.empty()) error_ = what;
  }
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> answers_{0};
  std::mutex mutex_;
  std::string error_;
};

struct Phase {
  double medianUs = 0, p99Us = 0, maxUs = 0, preempted = 0;
};
std::map<Clients, std::vector<Phase>> gPhases;

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

const char* nameOf(Clients kind) {
  switch (kind) {
    case Clients::None: return "no client";
    case Clients::Polling: return "polling status";
    case Clients::ConnectEach: return "connecting for each status";
  }
  return "?";
}

void runPhase(benchmark::State& state, Clients kind, bool last) {
  for (auto _ : state) {
    try {
      RuntimeProcess rt("control_bench", speedUp);
      if (!rt.status()) throw BenchError("the runtime does not answer");
      state.counters["loadavg"] = loadAverage();
      const double w0 = nowNs(), cpu0 = cpuMs(rt.pid()), preempted0 = preemptions(rt.pid());
      Pollers pollers(rt.endpoint(), kind);
      while (nowNs() - w0 < config.seconds * 1e9) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      pollers.stop();
      const double wall = nowNs() - w0, cpu = cpuMs(rt.pid()) - cpu0, preempted = preemptions(rt.pid()) - preempted0;
      if (!pollers.error().empty()) throw BenchError(pollers.error());
      const std::optional<json> s = rt.status();
      if (!s) throw BenchError("the runtime gives no status");
      const FastCycleTimes fast = fastCycleTimes(*s);
      Phase p{fast.medianUs, fast.p99Us, fast.maxUs, preempted};
      gPhases[kind].push_back(p);
      state.SetIterationTime(wall / 1e9);
      state.counters["cycles"] = (*s)["cycles"].get<double>();
      state.counters["median_us"] = p.medianUs;
      state.counters["p99_us"] = p.p99Us;
      state.counters["max_us"] = p.maxUs;
      state.counters["requests"] = static_cast<double>(pollers.answers());
      state.counters["requests_per_s"] = static_cast<double>(pollers.answers()) / (wall / 1e9);
      state.counters["runtime_cpu_ms"] = cpu;
      state.counters["preempted"] = preempted;
      std::fprintf(stderr,
                   "control_bench: %s: %llu cycles, Fast cycle time median %.2f us, p99 %.2f us, max %.2f us; %llu "
                   "answers; the runtime used %.0f ms of processor time; its scan thread was preempted %.0f times\n",
                   nameOf(kind), static_cast<unsigned long long>((*s)["cycles"].get<uint64_t>()), p.medianUs, p.p99Us,
                   p.maxUs, static_cast<unsigned long long>(pollers.answers()), cpu, preempted);
      if (last && kind != Clients::None && !gPhases[Clients::None].empty()) {
        std::vector<double> p99, median, baseP99, baseMedian;
        double preemptedAll = 0, basePreemptedAll = 0;
        for (const Phase& q : gPhases[kind]) {
          p99.push_back(q.p99Us);
          median.push_back(q.medianUs);
          preemptedAll += q.preempted;
        }
        for (const Phase& q : gPhases[Clients::None]) {
          baseP99.push_back(q.p99Us);
          baseMedian.push_back(q.medianUs);
          basePreemptedAll += q.preempted;
        }
        state.counters["p99_ratio"] = medianOf(p99) / medianOf(baseP99);
        state.counters["median_ratio"] = medianOf(median) / medianOf(baseMedian);
        std::fprintf(stderr,
                     "control_bench: %s against no client over %zu pairs: p99_ratio %.3f, median_ratio %.3f; the scan "
                     "thread preempted %.0f times in all (%.0f with no client)\n",
                     nameOf(kind), p99.size(), medianOf(p99) / medianOf(baseP99),
                     medianOf(median) / medianOf(baseMedian), preemptedAll, basePreemptedAll);
      }
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
    else if (a.starts_with("--clients="))
      config.clients = std::stoi(std::string(a.substr(10)));
    else if (a.starts_with("--fast-ms="))
      config.fastMs = std::stoi(std::string(a.substr(10)));
    else
      rest.push_back(argv[i]);
  }
  for (int pair = 0; pair < config.pairs; ++pair) {
    const bool last = pair + 1 == config.pairs;
    for (Clients kind : {Clients::None, Clients::Polling, Clients::ConnectEach}) {
      const char* name = kind == Clients::None      ? "BM_ControlNoClient"
                         : kind == Clients::Polling ? "BM_ControlPollingStatus"
                                                    : "BM_ControlConnectEach";
      benchmark::RegisterBenchmark((std::string(name) + "/" + std::to_string(pair)).c_str(),
                                   [kind, last](benchmark::State& state) { runPhase(state, kind, last); })
          ->Iterations(1)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
