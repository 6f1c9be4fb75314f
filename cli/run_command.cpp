// `scanback run`: the project's tasks on the virtual clock, optionally recorded to a trace.
#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "control/endpoint.h"
#include "control/server.h"
#include "net/auth_token.h"
#include "recorder/recorder.h"
#include "recorder/run_loop.h"
#include "vm/compiler/compiler.h"
#include "vm/exec/iec_text.h"
#include "vm/runtime/cycle_times.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/values.h"

namespace scanback::cli {

namespace {

std::atomic<bool> gInterrupted{false};
// Set by SIGUSR1 (all a handler may do); the run loop asks the recorder for a snapshot.
volatile std::sig_atomic_t gSnapshotWanted = 0;

// "plant.trace" at cycle 123456 -> "plant-123456.trace".
std::string snapshotPath(const std::string& trace, uint64_t cycle) {
  const std::filesystem::path p(trace);
  std::filesystem::path name = p.stem();
  name += fmt::format("-{}", cycle);
  name += p.extension();
  return (p.parent_path() / name).string();
}

void reportSnapshot(const recorder::SnapshotResult& r) {
  if (r.ok && r.endCycle > r.firstCycle) {
    std::cerr << fmt::format("scanback: snapshot of cycles {}..{} written to {}\n", r.firstCycle, r.endCycle - 1,
                             r.path);
  } else if (r.ok) {
    std::cerr << fmt::format("scanback: snapshot without cycles written to {}\n", r.path);
  } else {
    std::cerr << "scanback: " << r.error << "\n";
  }
}

// `scanback run` is interrupted by SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session);
// they end the run at the next cycle, and the recording finishes cleanly.
class SignalWaits final : public recorder::RunLoopWaits {
 public:
  bool waitUntil(std::chrono::steady_clock::time_point due) override {
    std::this_thread::sleep_until(due);
    return gInterrupted;
  }
  bool ending() override { return gInterrupted; }
};

void printStatistics(const Runtime& rt, double seconds) {
  const Program& p = rt.program();
  std::cerr << fmt::format("scanback: {} cycles in {:.3f} s of wall time, last cycle started at {}\n", rt.cycle(),
                           seconds, formatDuration(rt.cycle() ? rt.currentCycle().startNs : 0));
  for (size_t t = 0; t < p.tasks.size(); ++t) {
    const TaskStatistics& s = rt.statistics()[t];
    std::cerr << fmt::format("  task {:<12} interval {:<10} {:>8} cycles, {:>8.1f} statements per cycle (max {})\n",
                             p.tasks[t].name, formatDuration(p.tasks[t].intervalNs), s.cycles,
                             s.cycles ? static_cast<double>(s.statements) / s.cycles : 0.0, s.maxStatements);
  }
  if (rt.totalStatements() > 0)
    std::cerr << fmt::format("  {} statements, {:.1f} ns per statement, {:.2f} us per cycle\n", rt.totalStatements(),
                             seconds * 1e9 / static_cast<double>(rt.totalStatements()),
                             rt.cycle() ? seconds * 1e6 / static_cast<double>(rt.cycle()) : 0.0);
}

// "64MB" -> bytes, "10min" -> nanoseconds.
bool parseRing(const std::string& text, recorder::RecorderOptions& options, std::string& error) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string unit = text.substr(i);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const double n = i ? std::stod(text.substr(0, i)) : 0.0;
  const struct {
    const char* unit;
    double bytes;
  } sizes[] = {{"B", 1},        {"KB", 1e3},        {"MB", 1e6},          {"GB", 1e9},
               {"KIB", 1024.0}, {"MIB", 1048576.0}, {"GIB", 1073741824.0}};
  for (const auto& s : sizes) {
    if (unit == s.unit) {
      if (n <= 0) break;
      options.ringBytes = static_cast<uint64_t>(n * s.bytes);
      return true;
    }
  }
  std::string lower = text;
  if (lower.size() > 3 && lower.substr(lower.size() - 3) == "min") lower = lower.substr(0, lower.size() - 3) + "m";
  std::optional<int64_t> ns = parseDuration(lower, error);
  if (ns && *ns > 0) {
    options.ringDurationNs = *ns;
    return true;
  }
  error = fmt::format("--ring {}: expected a size like 64MB or a duration like 10min", text);
  return false;
}

// With --control: a history is always kept in memory, and while a debugger follows it, written
// into blocks often enough that it sees a cycle about 100 ms after it ends (docs/control.md).
using control::json;
constexpr uint64_t kControlHistoryBytes = 64'000'000;
constexpr int64_t kControlFollowedFlushNs = 80'000'000;

// The recording's events, as they happen (the writer thread): a failure is said at once.
void reportRecordingEvent(const recorder::RecordingEvent& e) { std::cerr << "scanback: " << e.message << "\n"; }

json recordingStatus(const std::string& path, const recorder::Recorder& rec) {
  const recorder::RecordingHealth h = rec.health();
  json r{
      {"path", path}, {"state", h.failing ? "failing" : "ok"}, {"lostCycles", h.lostCycles}, {"failures", h.failures}};
  if (h.failing) {
    r["error"] = h.error;
    r["sinceCycle"] = h.sinceCycle;
  }
  return r;
}

// What the runtime publishes for its control clients: the scan thread writes (relaxed atomics and
// the cycle time histograms, which cost it an add), the server's threads read.
class PublishedRuntime final : public control::ControlledRuntime {
 public:
  PublishedRuntime(const Program& program, bool debugEnabled)
      : program_(program), debugEnabled_(debugEnabled), cycleTimes_(program.tasks.size()) {}

  enum class State { Running, Paused, Faulted, Stopped };
  // `path`: the trace it writes (empty: its history is in memory only).
  void setRecorder(recorder::Recorder* rec, std::string path) {
    recorder_ = rec;
    recordPath_ = std::move(path);
  }
  // The scan thread:
  void cycleEnded(uint32_t task, uint64_t cycles, uint64_t ns) {
    cycleTimes_[task].record(ns);
    cycles_.store(cycles, std::memory_order_relaxed);
  }
  void faulted(const Runtime& rt) {
    const FaultInfo& f = rt.vm().fault();
    json fault{
        {"message", rt.faultMessage()}, {"code", std::string(faultText(f.code))}, {"cycle", rt.currentCycle().cycle}};
    if (f.statement < program_.statements.size()) {
      const SourceSpan& span = program_.statements[f.statement].span;
      fault["file"] = program_.sources.file(span.file).path;
      fault["line"] = span.line;
      fault["column"] = span.column;
    }
    {
      std::lock_guard lock(mutex_);
      fault_ = std::move(fault);
    }
    cycles_.store(rt.currentCycle().cycle + 1, std::memory_order_relaxed);  // the faulted one ran too
    state_.store(State::Faulted, std::memory_order_release);
    wakePauseWaiters();
  }
  void stopped() {
    state_.store(State::Stopped, std::memory_order_release);
    wakePauseWaiters();
  }

  // The scan thread, between cycles: holds while an operator has paused the runtime, keeping the
  // history current for readers. True when it held (the caller restarts its pacing). A signal
  // cannot notify, so the hold also looks at the interruption flag every 10 ms.
  bool holdWhilePaused(recorder::Recorder* rec) {
    std::unique_lock lock(pauseMutex_);
    if (!pauseWanted_) return false;
    const uint64_t cyclesRun = cycles_.load(std::memory_order_relaxed);  // this thread stored it
    // `paused` is said once the history held reaches the hold (asked to, the writer puts the cycles
    // it has into a block at once), so that a debugger attaching to a paused runtime gets every
    // cycle it ran. The task holds meanwhile anyway; the wait is bounded in case cycles were dropped.
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (rec && pauseWanted_ && !gInterrupted && rec->held().endCycle < cyclesRun &&
           std::chrono::steady_clock::now() < giveUp)
      idleAndWait(lock, rec, std::chrono::milliseconds(5));
    state_.store(State::Paused, std::memory_order_release);
    changed_.notify_all();
    while (pauseWanted_ && !gInterrupted) idleAndWait(lock, rec, std::chrono::milliseconds(10));
    state_.store(State::Running, std::memory_order_release);
    changed_.notify_all();
    return true;
  }

  // A pause is answered once the task holds (between cycles: after the cycle under way, or in real
  // time after the next one when it is waiting for that one's start), so that the status read next
  // says `paused`; a resume at once.
  bool setPaused(bool paused, std::string& error) override {
    std::unique_lock lock(pauseMutex_);
    const State state = state_.load(std::memory_order_acquire);
    if (state == State::Faulted) {
      error = "the runtime has faulted: it runs no cycle to pause or resume (scanback ctl stop ends it)";
      return false;
    }
    if (state == State::Stopped || gInterrupted) {
      error = "the runtime is stopping";
      return false;
    }
    pauseWanted_ = paused;
    changed_.notify_all();
    if (!paused) return true;
    if (!changed_.wait_for(lock, kPauseAnswerWithin, [this] {
          const State s = state_.load(std::memory_order_acquire);
          return s != State::Running || gInterrupted;
        })) {
      error = fmt::format(
          "the pause is requested, but the task has not reached the end of its cycle within {} s; it holds there "
          "when it does (scanback ctl status shows it)",
          kPauseAnswerWithin.count());
      return false;
    }
    if (state_.load(std::memory_order_acquire) != State::Paused) {
      error = "the runtime stopped or faulted before it could hold";
      return false;
    }
    return true;
  }

  json status() const override {
    static constexpr const char* kStates[] = {"running", "paused", "faulted", "stopped"};
    const State state = state_.load(std::memory_order_acquire);
    json s{{"state", kStates[static_cast<int>(state)]},
           {"cycles", cycles_.load(std::memory_order_relaxed)},
           {"debugEnabled", debugEnabled_}};
    s["tasks"] = taskStatistics();
    if (recorder_) {
      const recorder::HeldHistory held = recorder_->held();
      const recorder::RecorderStats stats = recorder_->stats();
      json ring{{"chunks", held.chunks}, {"bytes", held.bytes}, {"cyclesDropped", stats.cyclesDropped}};
      if (held.chunks) {
        ring["firstCycle"] = held.firstCycle;
        ring["lastCycle"] = held.endCycle - 1;
      }
      s["ring"] = std::move(ring);
      if (!recordPath_.empty()) s["recording"] = recordingStatus(recordPath_, *recorder_);
    }
    if (state == State::Faulted) {
      std::lock_guard lock(mutex_);
      s["fault"] = fault_;
    }
    return s;
  }
  recorder::Recorder* recorder() override { return recorder_; }

  // The tasks' cycle counts and times, read from the histograms at most every
  // kStatisticsEvery however many clients ask (docs/control.md, "Limits"): a reading walks some
  // 3,800 counters a task — microseconds of a server thread — and pulls into its cache the lines
  // the scan thread writes at each cycle's end, which that thread must then fetch back.
  json taskStatistics() const {
    std::lock_guard lock(statisticsMutex_);
    const auto now = std::chrono::steady_clock::now();
    if (statisticsAt_ && now - *statisticsAt_ < kStatisticsEvery) return statistics_;
    json tasks = json::array();
    for (size_t t = 0; t < program_.tasks.size(); ++t) {
      const CycleTimes& c = cycleTimes_[t];
      tasks.push_back(
          json{{"name", program_.tasks[t].name},
               {"intervalNs", program_.tasks[t].intervalNs},
               {"cycles", c.count()},
               {"cycleTimeNs", json{{"median", c.quantileNs(0.5)}, {"p99", c.quantileNs(0.99)}, {"max", c.maxNs()}}}});
    }
    statistics_ = tasks;
    statisticsAt_ = now;
    return tasks;
  }
  void stop() override {
    gInterrupted = true;
    wakePauseWaiters();
  }

 private:
  const Program& program_;
  const bool debugEnabled_;
  recorder::Recorder* recorder_ = nullptr;
  std::string recordPath_;
  std::vector<CycleTimes> cycleTimes_;
  std::atomic<uint64_t> cycles_{0};
  std::atomic<State> state_{State::Running};
  // While holding: lets the writer take the staged cycles (the lock released meanwhile), then waits
  // for a change or `wait`.
  void idleAndWait(std::unique_lock<std::mutex>& lock, recorder::Recorder* rec, std::chrono::milliseconds wait) {
    if (rec) {
      lock.unlock();
      rec->idle();
      rec->flushSoon();
      lock.lock();
    }
    changed_.wait_for(lock, wait);
  }

  // After a change the waiters' predicates read: taking the lock orders it before their next check.
  void wakePauseWaiters() {
    { std::lock_guard lock(pauseMutex_); }
    changed_.notify_all();
  }

  mutable std::mutex mutex_;
  json fault_;
  static constexpr std::chrono::milliseconds kStatisticsEvery{100};
  mutable std::mutex statisticsMutex_;
  mutable json statistics_;
  mutable std::optional<std::chrono::steady_clock::time_point> statisticsAt_;
  static constexpr std::chrono::seconds kPauseAnswerWithin{10};
  std::mutex pauseMutex_;
  std::condition_variable changed_;
  bool pauseWanted_ = false;
};

// Checks the --control options and opens the endpoint. Null with the message printed.
std::unique_ptr<control::ControlServer> startControl(const RunArgs& args, PublishedRuntime& published) {
  std::string error;
  const std::optional<control::Endpoint> endpoint = control::parseEndpoint(args.control, error);
  if (!endpoint) {
    std::cerr << "scanback: --control: " << error << "\n";
    return nullptr;
  }
  std::string bindAddress = "127.0.0.1";
  if (endpoint->kind == control::Endpoint::Kind::Tcp) {
    if (!args.controlBind.empty()) {
      bindAddress = args.controlBind;
    } else if (endpoint->host != "127.0.0.1") {
      std::cerr << fmt::format(
          "scanback: --control {}: a control endpoint listens on 127.0.0.1; --control-bind ADDR listens on "
          "another interface (and then needs --auth-token-file)\n",
          args.control);
      return nullptr;
    }
  } else if (!args.controlBind.empty()) {
    std::cerr << "scanback: --control-bind is for a tcp:// endpoint\n";
    return nullptr;
  }
  control::ControlOptions options;
  options.debugEnabled = !args.noDebug;
  if (!args.authTokenFile.empty()) {
    std::string warning;
    options.token = net::readAuthToken(args.authTokenFile, error, warning);
    if (!options.token) {
      std::cerr << "scanback: --auth-token-file: " << error << "\n";
      return nullptr;
    }
    if (!warning.empty()) std::cerr << "scanback: warning: " << warning << "\n";
  } else if (bindAddress != "127.0.0.1") {
    std::cerr << fmt::format(
        "scanback: --control-bind {}: a control endpoint reachable from other machines needs a token "
        "(--auth-token-file FILE)\n",
        bindAddress);
    return nullptr;
  } else if (endpoint->kind == control::Endpoint::Kind::Tcp && !args.allowNoToken) {
    std::cerr << fmt::format(
        "scanback: --control {}: every local user can connect to a TCP port, and then pause, stop and snapshot this "
        "runtime (writing files as its user): give --auth-token-file FILE, or --allow-no-token to accept that, or "
        "use a unix:/// endpoint (mode 0600)\n",
        args.control);
    return nullptr;
  }
  if (options.token && args.allowNoToken)
    std::cerr << "scanback: warning: --allow-no-token has no effect: the runtime has a token (--auth-token-file)\n";
  std::unique_ptr<net::Listener> listener = control::listenOn(*endpoint, bindAddress, error);
  if (!listener) {
    std::cerr << "scanback: " << error << "\n";
    return nullptr;
  }
  std::string where = endpoint->text();
  if (endpoint->kind == control::Endpoint::Kind::Tcp)
    where = fmt::format("tcp://{}:{}", bindAddress, control::listeningPort(*listener));
  std::cerr << fmt::format("scanback: control endpoint {} (debugging {}{}, at most {} connections)\n", where,
                           args.noDebug ? "disabled" : "enabled", options.token ? ", token required" : "",
                           args.maxConnections);
  if (endpoint->kind == control::Endpoint::Kind::Tcp && !options.token)
    std::cerr << fmt::format(
        "scanback: WARNING: the control endpoint {} has no token (--allow-no-token): EVERY LOCAL USER can pause, "
        "stop and snapshot this runtime\n",
        where);
  options.maxConnections = args.maxConnections;
  options.name = "control endpoint " + where;
  try {
    return std::make_unique<control::ControlServer>(std::move(listener), published, std::move(options));
  } catch (const std::exception& e) {
    std::cerr << fmt::format("scanback: control endpoint {}: {}\n", where, e.what());
    return nullptr;
  }
}

}  // namespace

std::shared_ptr<const Program> compileFiles(const std::vector<std::string>& files, const CompileOptions& options) {
  Diagnostics diags;
  SourceSet sources = loadSourceFiles(files, diags);
  if (diags.hasErrors()) {
    std::cerr << diags.format(sources);
    return nullptr;
  }
  std::shared_ptr<const Program> program = compileProject(sources, diags, options);
  if (program && !checkSchedule(*program, diags)) program = nullptr;
  std::cerr << diags.format(sources);
  return program;
}

std::optional<int64_t> parseDuration(const std::string& input, std::string& error) {
  std::string text = input;
  if (text.find('#') == std::string::npos) text = "T#" + text;
  TypeTable types;
  Program scratch;
  std::vector<uint8_t> bytes;
  if (!encodeValue(scratch, text, *types.elementary(TypeKind::LTime), bytes, error)) return std::nullopt;
  int64_t ns;
  std::memcpy(&ns, bytes.data(), sizeof ns);
  return ns;
}

int runCommand(const RunArgs& args) {
  CompileOptions compileOptions;
  compileOptions.strict = args.strict;
  std::shared_ptr<const Program> program = compileFiles(args.files, compileOptions);
  if (!program) return kExitCompile;
  std::optional<int64_t> until;
  if (!args.forText.empty()) {
    std::string error;
    until = parseDuration(args.forText, error);
    if (!until) {
      std::cerr << fmt::format("scanback: --for {}: expected a duration like 250ms, 1.5s or T#2m\n", args.forText);
      return kExitUsage;
    }
  }
  std::optional<Stimulus> stimulus;
  if (!args.inputs.empty()) {
    std::string error;
    stimulus = Stimulus::load(args.inputs, *program, error);
    if (!stimulus) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
  }
  Runtime rt(program);
  if (args.statementBudget) rt.vm().setStatementBudget(args.statementBudget);

  const bool controlled = !args.control.empty();
  // Before any trace exists, so that a signal sent once it does is never the default (fatal) one;
  // for every run, so that a SIGUSR1 sent to the wrong process does not end it.
  std::signal(SIGUSR1, [](int) { gSnapshotWanted = 1; });
  std::signal(SIGINT, [](int) { gInterrupted = true; });
  std::signal(SIGTERM, [](int) { gInterrupted = true; });
  std::signal(SIGHUP, [](int) { gInterrupted = true; });
  std::unique_ptr<recorder::Recorder> rec;
  if (!args.record.empty() || controlled) {
    recorder::RecorderOptions options;
    options.path = args.record;
    options.keyframeEvery = args.keyframeEvery;
    options.zstdLevel = args.zstdLevel;
    options.statements = !args.noStatements;
    options.fsync = !args.noFsync;
    std::string error;
    if (!args.ring.empty() && !parseRing(args.ring, options, error)) {
      std::cerr << "scanback: " << error << "\n";
      return kExitUsage;
    }
    const std::optional<int64_t> flushEvery = args.flushEvery == "0" ? 0 : parseDuration(args.flushEvery, error);
    if (!flushEvery || *flushEvery < 0) {
      std::cerr << fmt::format("scanback: --flush-every {}: expected a duration like 1s or 500ms, or 0\n",
                               args.flushEvery);
      return kExitUsage;
    }
    options.flushEveryNs = *flushEvery;
    options.flushEveryCycles = args.flushCycles;
    if (controlled) {
      // An attaching debugger gets the past from memory, and the present within ~100 ms.
      const bool ring = options.ringBytes || options.ringDurationNs;
      if (!ring && args.record.empty()) options.ringBytes = kControlHistoryBytes;          // memory only
      if (!ring && !args.record.empty()) options.keepHistoryBytes = kControlHistoryBytes;  // and the whole file
      options.followedFlushEveryNs = kControlFollowedFlushNs;
      if (!options.flushEveryNs) options.flushEveryNs = kControlFollowedFlushNs * 10;
    }
    rec = recorder::Recorder::start(rt, options, error, reportRecordingEvent);
    if (!rec) {
      std::cerr << fmt::format("scanback: cannot record to {}: {}\n", args.record, error);
      return kExitUsage;
    }
  }
  PublishedRuntime published(*program, !args.noDebug);
  published.setRecorder(rec.get(), args.record);
  std::unique_ptr<control::ControlServer> server;
  if (controlled && !(server = startControl(args, published))) {
    if (rec) {
      std::string ignored;
      rec->finish(ignored);
    }
    return kExitUsage;
  }

  std::list<std::future<recorder::SnapshotResult>> snapshots;  // requested, not reported yet
  recorder::RunLoop loop(rt, recorder::RunLoopOptions{args.realtime, args.cycles, until});
  loop.setRecorder(rec.get());
  if (stimulus) loop.setStimulus(&*stimulus);
  SignalWaits waits;
  const auto wallStart = std::chrono::steady_clock::now();
  int exitCode = kExitOk;
  while (!gInterrupted) {
    if (gSnapshotWanted) {
      gSnapshotWanted = 0;
      if (!rec)
        std::cerr << "scanback: SIGUSR1: this run records nothing, so there is no history to write (run --record "
                     "TRACE --ring 64MB keeps one)\n";
      else if (args.record.empty())
        std::cerr << "scanback: SIGUSR1: no --record TRACE to name a snapshot after; scanback ctl ENDPOINT snapshot "
                     "FILE writes one\n";
      else if (args.ring.empty() && !controlled)
        std::cerr << fmt::format(
            "scanback: SIGUSR1: the whole recording is in {}.partial already (a snapshot is "
            "for --ring); the run goes on\n",
            args.record);
      else
        snapshots.push_back(rec->requestSnapshot(snapshotPath(args.record, rt.cycle())));
    }
    // Report finished snapshots between cycles (a zero wait only reads the future's state).
    for (auto it = snapshots.begin(); it != snapshots.end();) {
      if (it->wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      reportSnapshot(it->get());
      it = snapshots.erase(it);
    }
    // An operator's pause (scanback ctl pause) holds the task here, between cycles; the virtual
    // clock holds with it, and pacing starts again from the resume (no burst of missed cycles).
    if (controlled && published.holdWhilePaused(rec.get())) {
      loop.restartPacing();
      continue;
    }
    CycleStart next;
    const auto prepared = loop.prepare(waits, next);
    if (prepared == recorder::RunLoop::Next::ClockEnded)
      std::cerr << fmt::format("scanback: the virtual clock has reached its end ({}): no cycle is released after it\n",
                               formatDuration(kClockEndNs));
    if (prepared != recorder::RunLoop::Next::Cycle) break;
    const auto cycleStart = controlled ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const RunStatus status = rt.runCycle();
    if (controlled) {
      const auto ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - cycleStart);
      published.cycleEnded(rt.currentCycle().task, rt.cycle(), static_cast<uint64_t>(ns.count()));
    }
    if (status == RunStatus::Faulted) {
      std::cerr << rt.faultMessage() << "\n";
      exitCode = kExitFault;
      if (controlled) {
        // The runtime stays up, faulted, with its history, for a debugger to attach post-mortem,
        // until `scanback ctl stop` or SIGTERM. Snapshot requests are marked here, as a cycle's
        // start would.
        published.faulted(rt);
        std::cerr << "scanback: the runtime stays up in the faulted state (scanback ctl ENDPOINT stop, or SIGTERM, "
                     "ends it)\n";
        while (!gInterrupted) {
          rec->idle();
          rec->flushSoon();
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
      break;
    }
  }
  published.stopped();
  if (server) server->close();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  if (args.printState)
    std::cout << stateToJson(*program, rt.vm().image()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  if (!args.quiet) printStatistics(rt, seconds);
  if (rec) {
    std::string error;
    const bool ok = rec->finish(error);
    for (auto& f : snapshots) reportSnapshot(f.get());  // finish() has served or refused them all
    const recorder::RecorderStats s = rec->stats();
    const recorder::RecordingHealth health = rec->health();
    const bool ring = !args.ring.empty() || args.record.empty();
    if (!ok) {
      std::cerr << fmt::format("scanback: recording to {} failed: {}\n", args.record, error);
      if (exitCode == kExitOk) exitCode = kExitUsage;
    } else if (!args.quiet && !args.record.empty()) {
      if (ring) {
        // The file holds what the flight recorder kept, not every cycle recorded.
        const recorder::HeldHistory held = rec->held();
        if (held.chunks)
          std::cerr << fmt::format("  {} keeps the last {} of {} cycles recorded (cycles {}..{}, {} chunks, {} bytes)",
                                   args.record, held.endCycle - held.firstCycle, s.cyclesRecorded, held.firstCycle,
                                   held.endCycle - 1, held.chunks, s.bytesWritten);
        else
          std::cerr << fmt::format("  {} keeps no cycle ({} recorded)", args.record, s.cyclesRecorded);
      } else {
        std::cerr << fmt::format("  recorded {} cycles to {} ({} chunks, {} bytes, {:.1f} bytes per cycle)",
                                 s.cyclesRecorded, args.record, s.chunks, s.bytesWritten,
                                 s.cyclesRecorded ? static_cast<double>(s.bytesWritten) / s.cyclesRecorded : 0.0);
      }
      if (s.cyclesDropped) std::cerr << fmt::format(", {} cycles dropped in {} gaps", s.cyclesDropped, s.gaps);
      if (health.lostCycles)
        std::cerr << fmt::format(", {} cycles lost while writing failed ({} failures)", health.lostCycles,
                                 health.failures);
      std::cerr << "\n";
    }
  }
  return exitCode;
}

}  // namespace scanback::cli
