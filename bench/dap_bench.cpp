// The DAP server's latency while paused (issue 5): the median round trip of stackTrace, scopes,
// variables (a 1,000-element array, paged) and evaluate, from a client writing the request to it
// reading the response, over an in-memory pipe to a Session on its own thread. Target: < 1 ms
// each. The round trip of `threads` (the smallest request) is measured in the same run as the
// baseline: each result is also reported as a ratio to it (`x_threads`).
//
// BM_LiveStepBack (issue 6; the session records, as every live launch does by default): the
// first move from a live pause into history, a `stepBack` timed from its request to its `stopped`
// event. It makes the recorder write every ended cycle to the trace (Recorder::sync), reads them,
// replays the cycle under way up to the paused statement and steps back from there. Before each
// one, untimed: `continue` twice (replaying forward to the live position, then on live to the
// breakpoint's next hit).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "dap/session/session.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace scanback::dap;

namespace {

const char* kProgram = R"(FUNCTION_BLOCK Filler
VAR_INPUT step : INT; END_VAR
VAR
  count : DINT;
  levels : ARRAY[1..1000] OF INT;
  ready : BOOL;
END_VAR
count := count + step;
levels[(count MOD 1000) + 1] := step;
ready := count > 100;
END_FUNCTION_BLOCK

PROGRAM Main
VAR n : INT; f : Filler; total : LREAL; END_VAR
n := n + 1;
f(step := n MOD 7);
total := total + n * 0.5;
END_PROGRAM
)";

// A client of one session, paused at a breakpoint inside Filler.
class PausedSession {
 public:
  PausedSession() {
    dir_ = fs::temp_directory_path() / ("scanback_dap_bench_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "main.st") << kProgram;
    net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
    client_ = std::move(pipe.client);
    server_ = std::move(pipe.server);
    session_ = std::thread([this] {
      Session session(*server_, [](const std::string&) {});
      session.run();
    });
    reader_ = std::make_unique<net::MessageReader>(*client_);
    writer_ = std::make_unique<net::MessageWriter>(*client_);
    request("initialize", json{{"adapterID", "bench"}});
    request("launch", json{{"program", (dir_ / "main.st").string()}, {"realtime", false}});
    request("setBreakpoints", json{{"source", json{{"path", (dir_ / "main.st").string()}}},
                                   {"breakpoints", json::array({{{"line", 10}}})}});
    request("configurationDone", json::object());
    waitEvent("stopped");
    // Run a few cycles so that the array holds values.
    for (int i = 0; i < 50; ++i) {
      request("continue", json{{"threadId", 1}});
      waitEvent("stopped");
    }
  }
  ~PausedSession() {
    request("disconnect", json::object());
    client_->close();
    session_.join();
    fs::remove_all(dir_);
  }

  json request(const std::string& command, json arguments) {
    const int64_t seq = seq_++;
    std::string error;
    if (!writer_->send(
            json{{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", std::move(arguments)}}, &error))
      throw std::runtime_error("cannot send " + command + ": " + error);
    for (;;) {
      net::ReadResult r = reader_->next();
      if (!r.isMessage()) throw std::runtime_error("the session ended");
      if (r.message["type"] == "response" && r.message["request_seq"] == seq) {
        if (!r.message["success"]) throw std::runtime_error(command + " failed: " + r.message.dump());
        return r.message["body"];
      }
    }
  }
  // A request that moves: its response, then its `stopped` event.
  void move(const std::string& command) {
    request(command, json{{"threadId", 1}});
    waitEvent("stopped");
  }
  void waitEvent(const std::string& name) {
    for (;;) {
      net::ReadResult r = reader_->next();
      if (!r.isMessage()) throw std::runtime_error("the session ended");
      if (r.message["type"] == "event" && r.message["event"] == name) return;
    }
  }

 private:
  fs::path dir_;
  std::unique_ptr<net::Stream> client_, server_;
  std::thread session_;
  std::unique_ptr<net::MessageReader> reader_;
  std::unique_ptr<net::MessageWriter> writer_;
  int64_t seq_ = 1;
};

PausedSession& session() {
  static PausedSession s;
  return s;
}

double gThreadsMedianUs = 0;

// Times `call` per iteration (after `prepare`, not timed); reports the median and p99 round trip in
// microseconds, and whether the median meets `targetUs` (`target` names it).
template <class F>
void measure(benchmark::State& state, F&& call, bool baseline = false, double targetUs = 1000,
             const std::string& target = "target < 1 ms", const std::function<void()>& prepare = {}) {
  std::vector<double> us;
  for (auto _ : state) {
    if (prepare) prepare();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const double elapsed = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    us.push_back(elapsed);
    state.SetIterationTime(elapsed / 1e6);
  }
  std::sort(us.begin(), us.end());
  const double median = us[us.size() / 2];
  state.counters["median_us"] = median;
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  if (baseline) gThreadsMedianUs = median;
  if (gThreadsMedianUs > 0) state.counters["x_threads"] = median / gThreadsMedianUs;
  state.SetLabel(baseline ? "baseline" : target + (median < targetUs ? " (met)" : " (NOT met)"));
}

void BM_Threads(benchmark::State& state) {
  measure(
      state, [] { session().request("threads", json::object()); }, true);
}

void BM_StackTrace(benchmark::State& state) {
  measure(state, [] { session().request("stackTrace", json{{"threadId", 1}}); });
}

void BM_Scopes(benchmark::State& state) {
  measure(state, [] { session().request("scopes", json{{"frameId", 1}}); });
}

void BM_VariablesArrayPaged(benchmark::State& state) {
  // The Locals of Filler, then the levels array, one page of 100 elements at a time (10 pages).
  const json scopes = session().request("scopes", json{{"frameId", 1}});
  const json locals =
      session().request("variables", json{{"variablesReference", scopes["scopes"][0]["variablesReference"]}});
  int64_t array = 0;
  for (const json& v : locals["variables"])
    if (v["name"] == "levels") array = v["variablesReference"];
  if (!array) {
    state.SkipWithError("no levels array in the locals");
    return;
  }
  int64_t page = 0;
  measure(state, [&] {
    session().request("variables", json{{"variablesReference", array}, {"start", (page++ % 10) * 100}, {"count", 100}});
  });
}

void BM_Evaluate(benchmark::State& state) {
  measure(state, [] {
    session().request(
        "evaluate",
        json{{"expression", "levels[count MOD 1000 + 1] * 2 + step"}, {"frameId", 1}, {"context", "watch"}});
  });
}

void BM_LiveStepBack(benchmark::State& state) {
  PausedSession& s = session();
  measure(
      state, [&] { s.move("stepBack"); }, false, 10'000, "target stepBack < 10 ms",
      [&] {
        s.move("continue");  // (back to the live position, if in history)
        s.move("continue");  // on live, to the next hit
      });
}

}  // namespace

BENCHMARK(BM_Threads)->UseManualTime()->Iterations(2000);
BENCHMARK(BM_StackTrace)->UseManualTime()->Iterations(2000);
BENCHMARK(BM_Scopes)->UseManualTime()->Iterations(2000);
BENCHMARK(BM_VariablesArrayPaged)->UseManualTime()->Iterations(2000);
BENCHMARK(BM_Evaluate)->UseManualTime()->Iterations(2000);
BENCHMARK(BM_LiveStepBack)->UseManualTime()->Iterations(500);

BENCHMARK_MAIN();
