#include "runtime/host.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "runtime/process_signals.h"
#include "runtime/realtime.h"
#include "vm/base/assert.h"
#include "vm/exec/iec_text.h"

namespace scanback::runtime {

namespace {

// With a control endpoint: a history is always kept in memory, and while a debugger follows it,
// written into blocks often enough that it sees a cycle about 100 ms after it ends (docs/control.md).
constexpr uint64_t kControlHistoryBytes = 64'000'000;
constexpr int64_t kControlFollowedFlushNs = 80'000'000;

// "plant.trace" at cycle 123456 -> "plant-123456.trace".
std::string snapshotPath(const std::string& trace, uint64_t cycle) {
  const std::filesystem::path p(trace);
  std::filesystem::path name = p.stem();
  name += fmt::format("-{}", cycle);
  name += p.extension();
  return (p.parent_path() / name).string();
}

std::string snapshotReport(const recorder::SnapshotResult& r) {
  if (r.ok && r.endCycle > r.firstCycle)
    return fmt::format("scanback: snapshot of cycles {}..{} written to {}", r.firstCycle, r.endCycle - 1, r.path);
  if (r.ok) return fmt::format("scanback: snapshot without cycles written to {}", r.path);
  return "scanback: " + r.error;
}

// systemd's service notifications (sd_notify(3), packaging/scanback-runtime@.service): READY=1
// once the control endpoint listens and the first cycle ran, WATCHDOG=1 every half of WatchdogSec
// from the scan thread (after a cycle, while it waits for a release, while it is held paused or
// faulted: alive), so that a cycle that hangs stops the pings and systemd restarts the runtime;
// STATUS= with the cycle count about once a second; STOPPING=1 at the end. Nothing without
// NOTIFY_SOCKET (not started by systemd). The scan thread's only.
class ServiceNotifier {
 public:
  ServiceNotifier() {
    enabled_ = std::getenv("NOTIFY_SOCKET") != nullptr;
    uint64_t usec = 0;
    if (enabled_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdogEvery_ = std::chrono::microseconds(usec / 2);
  }
  bool enabled() const { return enabled_; }
  // The longest a wait of the scan thread may last between two calls of alive().
  std::chrono::steady_clock::duration longestWait() const {
    return watchdogEvery_.count() ? std::chrono::steady_clock::duration(watchdogEvery_)
                                  : std::chrono::steady_clock::duration(kStatusEvery);
  }
  void cycleEnded(uint64_t cycles) { readyOrAlive(fmt::format("running, {} cycles", cycles)); }
  // Held paused or faulted (a fault in the first cycle holds before any cycle ended): up, and alive.
  void held(const std::string& status) { readyOrAlive(status); }
  // The scan thread is alive: a watchdog ping and the status, each when due.
  void alive(const std::string& status) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    const bool ping = watchdogEvery_.count() && now - lastPing_ >= watchdogEvery_;
    const bool say = now - lastStatus_ >= kStatusEvery;
    if (!ping && !say) return;
    std::string message = ping ? "WATCHDOG=1\n" : "";
    message += "STATUS=" + status;
    send(message, now);
  }
  void stopping(const std::string& status) {
    if (enabled_) send("STOPPING=1\nSTATUS=" + status, std::chrono::steady_clock::now());
  }

 private:
  static constexpr std::chrono::seconds kStatusEvery{1};
  void readyOrAlive(const std::string& status) {
    if (!enabled_) return;
    if (ready_) return alive(status);
    ready_ = true;
    send("READY=1\nSTATUS=" + status, std::chrono::steady_clock::now());
  }
  void send(const std::string& message, std::chrono::steady_clock::time_point now) {
    sd_notify(0, message.c_str());
    lastStatus_ = now;
    if (message.find("WATCHDOG=1") != std::string::npos || message.starts_with("READY=1")) lastPing_ = now;
  }

  bool enabled_ = false;
  bool ready_ = false;
  std::chrono::microseconds watchdogEvery_{0};
  std::chrono::steady_clock::time_point lastPing_{}, lastStatus_{};
};

// What may cut the scan loop's waits short: a stop (signals included). A signal cannot notify, so
// a wait for a release in real time runs to its end (a task's interval) and looks then. Under
// systemd a long wait is cut into pieces, to feed the watchdog between them.
class StopWaits final : public recorder::RunLoopWaits {
 public:
  StopWaits(const StopRequest& stop, ServiceNotifier& notifier, const Runtime& rt)
      : stop_(stop), notifier_(notifier), rt_(rt) {}
  bool waitUntil(std::chrono::steady_clock::time_point due) override {
    if (!notifier_.enabled()) {
      std::this_thread::sleep_until(due);
      return stop_.requested();
    }
    while (!stop_.requested()) {
      const auto until = std::min(due, std::chrono::steady_clock::now() + notifier_.longestWait());
      std::this_thread::sleep_until(until);
      notifier_.alive(fmt::format("running, {} cycles", rt_.cycle()));
      if (until == due) break;
    }
    return stop_.requested();
  }
  bool ending() override { return stop_.requested(); }

 private:
  const StopRequest& stop_;
  ServiceNotifier& notifier_;
  const Runtime& rt_;
};

RunSummary::End endOf(recorder::RunLoop::Next next) {
  switch (next) {
    case recorder::RunLoop::Next::CycleLimit: return RunSummary::End::CycleLimit;
    case recorder::RunLoop::Next::TimeLimit: return RunSummary::End::TimeLimit;
    case recorder::RunLoop::Next::ClockEnded: return RunSummary::End::ClockEnded;
    case recorder::RunLoop::Next::Cycle:
    case recorder::RunLoop::Next::Ending: break;
  }
  return RunSummary::End::Stopped;
}

}  // namespace

RuntimeHost::RuntimeHost(HostOptions options)
    : options_(std::move(options)),
      runtime_(std::make_unique<Runtime>(options_.program)),
      stopRequest_(options_.handleSignals),
      published_(std::make_unique<PublishedRuntime>(*options_.program, options_.debugEnabled, stopRequest_,
                                                    options_.drivers)) {
  if (options_.statementBudget) runtime_->vm().setStatementBudget(options_.statementBudget);
  published_->setForcing(runtime_.get());
}

std::unique_ptr<RuntimeHost> RuntimeHost::create(HostOptions options, std::string& error) {
  SB_ASSERT(options.program);
  if (options.handleSignals) process_signals::install();
  std::unique_ptr<RuntimeHost> host(new RuntimeHost(std::move(options)));
  if (!host->startRecorder(error) || !host->openControl(error)) return nullptr;
  return host;
}

RuntimeHost::~RuntimeHost() {
  if (!ran_) published_->stopped();
  if (server_) server_->close();
  finish();
}

bool RuntimeHost::startRecorder(std::string& error) {
  const bool controlled = options_.control.has_value();
  if (!options_.recording && !controlled) return true;
  recorder::RecorderOptions options = options_.recording.value_or(recorder::RecorderOptions{});
  ringAsked_ = options.ringBytes || options.ringDurationNs;
  if (controlled) {
    // An attaching debugger gets the past from memory, and the present within ~100 ms.
    if (!ringAsked_ && options.path.empty()) options.ringBytes = kControlHistoryBytes;          // memory only
    if (!ringAsked_ && !options.path.empty()) options.keepHistoryBytes = kControlHistoryBytes;  // and the whole file
    options.followedFlushEveryNs = kControlFollowedFlushNs;
    if (!options.flushEveryNs) options.flushEveryNs = kControlFollowedFlushNs * 10;
  }
  std::string why;
  // The recording's events are said as they happen (on the writer thread): a failure at once.
  recorder_ = recorder::Recorder::start(*runtime_, options, why,
                                        [this](const recorder::RecordingEvent& e) { say("scanback: " + e.message); });
  if (!recorder_) {
    error = fmt::format("cannot record to {}: {}", options.path, why);
    return false;
  }
  recordPath_ = options.path;
  published_->setRecorder(recorder_.get(), options.path);
  return true;
}

bool RuntimeHost::openControl(std::string& error) {
  if (!options_.control) return true;
  const ControlEndpointOptions& c = *options_.control;
  std::unique_ptr<net::Listener> listener = control::listenOn(c.endpoint, c.bindAddress, error);
  if (!listener) return false;
  if (c.group && c.endpoint.kind == control::Endpoint::Kind::Unix) {
    // The group first, then its permission bits: until both are set only the owner connects.
    const std::string& path = c.endpoint.path;
    if (::chown(path.c_str(), static_cast<uid_t>(-1), *c.group) != 0) {
      const int why = errno;
      error = fmt::format("cannot give the control socket {} to the group {}: {}{}", path, c.groupName,
                          std::strerror(why), why == EPERM ? " (this user is not a member of it)" : "");
      return false;
    }
    if (::chmod(path.c_str(), 0660) != 0) {
      error = fmt::format("cannot make the control socket {} mode 0660: {}", path, std::strerror(errno));
      return false;
    }
  }
  const bool tcp = c.endpoint.kind == control::Endpoint::Kind::Tcp;
  where_ = tcp ? fmt::format("tcp://{}:{}", c.bindAddress, control::listeningPort(*listener)) : c.endpoint.text();
  say(fmt::format("scanback: control endpoint {} (debugging {}{}{}, at most {} connections)", where_,
                  options_.debugEnabled ? "enabled" : "disabled", c.token ? ", token required" : "",
                  c.group && !tcp ? ", mode 0660 for the group " + c.groupName : "", c.maxConnections));
  if (tcp && !c.token)
    say(
        fmt::format("scanback: WARNING: the control endpoint {} has no token (--allow-no-token): EVERY LOCAL USER can "
                    "pause, stop and snapshot this runtime",
                    where_));
  control::ControlOptions options;
  options.debugEnabled = options_.debugEnabled;
  options.token = c.token;
  options.maxConnections = c.maxConnections;
  options.name = "control endpoint " + where_;
  if (options_.log)
    options.log = [log = options_.log, name = options.name](const std::string& text) {
      log(fmt::format("scanback: {}: {}", name, text));
    };
  try {
    server_ = std::make_unique<control::ControlServer>(std::move(listener), *published_, std::move(options));
  } catch (const std::exception& e) {
    error = fmt::format("control endpoint {}: {}", where_, e.what());
    return false;
  }
  return true;
}

RunSummary RuntimeHost::run() {
  SB_ASSERT(!ran_);
  ran_ = true;
  // Now, with every other thread started: they keep the ordinary policy (realtime.h).
  if (options_.scanPriority) {
    const std::vector<std::string> failed = becomeRealtime(*options_.scanPriority);
    if (failed.empty())
      say(fmt::format("scanback: the scan thread runs at real-time priority {} (SCHED_FIFO), memory locked",
                      *options_.scanPriority));
    for (const std::string& line : failed) say("scanback: WARNING: " + line);
  }
  Runtime& rt = *runtime_;
  recorder::Recorder* rec = recorder_.get();
  const bool controlled = server_ != nullptr;
  recorder::RunLoop loop(rt, options_.loop);
  loop.setRecorder(rec);
  if (options_.stimulus) loop.setStimulus(&*options_.stimulus);
  ServiceNotifier notifier;
  StopWaits waits(stopRequest_, notifier, rt);
  published_->setWhileHeld([&notifier, &rt](PublishedRuntime::State state) {
    notifier.held(
        fmt::format("{}, {} cycles", state == PublishedRuntime::State::Faulted ? "faulted" : "paused", rt.cycle()));
  });
  RunSummary summary;
  std::vector<uint8_t> before;  // the field inputs before a driver's readInputs (its bytes' author)
  before.reserve(rt.inputs().size());
  const auto wallStart = std::chrono::steady_clock::now();
  while (!stopRequest_.requested()) {
    snapshotIfWanted();
    reportSnapshots(false);
    // An operator's pause (scanback ctl pause) holds the task here, between cycles; the virtual
    // clock holds with it, and pacing starts again from the resume (no burst of missed cycles).
    if (controlled && published_->holdWhilePaused(rec)) {
      loop.restartPacing();
      continue;
    }
    CycleStart next;
    const recorder::RunLoop::Next prepared = loop.prepare(waits, next);
    if (prepared == recorder::RunLoop::Next::ClockEnded)
      say(fmt::format("scanback: the virtual clock has reached its end ({}): no cycle is released after it",
                      formatDuration(kClockEndNs)));
    if (prepared != recorder::RunLoop::Next::Cycle) {
      summary.end = endOf(prepared);
      break;
    }
    // The drivers' newest inputs, at the cycle's start: latched with the stimulus's (runCycle). The
    // bytes a driver that names their author changed are noted as its (a Modbus server's peers).
    for (const std::shared_ptr<IoDriver>& d : options_.drivers) {
      const WriteAuthor author = d->inputAuthor();
      if (author == WriteAuthor::Unknown) {
        d->readInputs(rt.inputs());
        continue;
      }
      std::vector<uint8_t>& field = rt.inputs();
      before.assign(field.begin(), field.end());  // (no allocation after the first cycle)
      d->readInputs(field);
      for (size_t i = 0; i < field.size(); ++i)
        if (field[i] != before[i]) rt.noteInputAuthor(static_cast<uint32_t>(i), 1, author);
    }
    if (std::string why; ioFaulted(why)) {
      // A device whose policy is to fault failed: the run ends before the cycle, as after a fault
      // of the program (with a control endpoint it holds, faulted, for a debugger to attach).
      say(why);
      summary.end = RunSummary::End::Faulted;
      if (controlled) {
        published_->faulted(why, rt.cycle());
        say("scanback: the runtime stays up in the faulted state (scanback ctl ENDPOINT stop, or SIGTERM, ends it)");
        published_->holdWhileFaulted(rec);
      }
      break;
    }
    const auto cycleStart = controlled ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const RunStatus status = rt.runCycle();
    if (controlled) {
      const auto ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - cycleStart);
      published_->cycleEnded(rt.currentCycle().task, rt.cycle(), static_cast<uint64_t>(ns.count()));
    }
    if (status == RunStatus::Faulted) {
      say(rt.faultMessage());
      summary.end = RunSummary::End::Faulted;
      if (controlled) {
        // The runtime stays up, faulted, with its history, for a debugger to attach post-mortem,
        // until `scanback ctl stop` or SIGTERM.
        published_->faulted(rt);
        say("scanback: the runtime stays up in the faulted state (scanback ctl ENDPOINT stop, or SIGTERM, ends it)");
        published_->holdWhileFaulted(rec);
      }
      break;
    }
    if (!options_.drivers.empty()) {
      const IoArea& memory = rt.program().memory;
      const std::span<const uint8_t> m(rt.vm().image() + memory.offset, memory.size);
      for (const std::shared_ptr<IoDriver>& d : options_.drivers) {
        d->writeOutputs(rt.outputs());
        d->writeMemory(m);
      }
    }
    notifier.cycleEnded(rt.cycle());
  }
  notifier.stopping(fmt::format("stopping after {} cycles", rt.cycle()));
  published_->setWhileHeld(nullptr);
  published_->stopped();
  if (server_) server_->close();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
  return summary;
}

bool RuntimeHost::ioFaulted(std::string& message) const {
  for (const std::shared_ptr<IoDriver>& d : options_.drivers)
    if (d->faulted(message)) return true;
  return false;
}

RecordingSummary RuntimeHost::finish() {
  if (finished_) return *finished_;
  RecordingSummary s;
  if (recorder_) {
    s.recorded = true;
    s.ok = recorder_->finish(s.error);
    reportSnapshots(true);  // finish() has served or refused them all
    s.stats = recorder_->stats();
    s.health = recorder_->health();
    s.held = recorder_->held();
  }
  finished_ = s;
  return s;
}

void RuntimeHost::snapshotIfWanted() {
  bool wanted = snapshotWanted_.exchange(false);
  if (options_.handleSignals && process_signals::takeSnapshotRequest()) wanted = true;
  if (!wanted) return;
  if (!recorder_)
    say("scanback: SIGUSR1: this run records nothing, so there is no history to write (run --record TRACE --ring "
        "64MB keeps one)");
  else if (recordPath_.empty())
    say("scanback: SIGUSR1: no --record TRACE to name a snapshot after; scanback ctl ENDPOINT snapshot FILE writes "
        "one");
  else if (!ringAsked_ && !options_.control)
    say(
        fmt::format("scanback: SIGUSR1: the whole recording is in {}.partial already (a snapshot is for --ring); the "
                    "run goes on",
                    recordPath_));
  else
    snapshots_.push_back(recorder_->requestSnapshot(snapshotPath(recordPath_, runtime_->cycle())));
}

void RuntimeHost::reportSnapshots(bool wait) {
  // Between cycles a zero wait only reads the future's state.
  for (auto it = snapshots_.begin(); it != snapshots_.end();) {
    if (!wait && it->wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      ++it;
      continue;
    }
    say(snapshotReport(it->get()));
    it = snapshots_.erase(it);
  }
}

void RuntimeHost::say(const std::string& line) const {
  if (options_.log)
    options_.log(line);
  else
    std::cerr << line + "\n";
}

}  // namespace scanback::runtime
