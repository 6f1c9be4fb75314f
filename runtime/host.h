// The runtime host: what `scanback run` is once its options are read. It owns the live task and
// everything around it — the scan loop with its pacing (recorder/run_loop.h), the recorder, the
// control endpoint's server and what it publishes (runtime/published.h: the operator's pause, the
// faulted hold, the cycle-time statistics, the recording's health), the signals (runtime/process_signals.h)
// and the I/O drivers (runtime/io_driver.h), called at each cycle's start and end.
//
// Threads: run() is the scan thread (the caller's); the recorder's writer, the control server's
// threads and the drivers' own threads run beside it and never make it wait.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/endpoint.h"
#include "control/server.h"
#include "recorder/recorder.h"
#include "recorder/run_loop.h"
#include "runtime/io_driver.h"
#include "runtime/published.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/stimulus.h"

namespace scanback::runtime {

// A control endpoint to serve (`scanback run --control`), its checks done by whoever read it.
struct ControlEndpointOptions {
  control::Endpoint endpoint;
  std::string bindAddress = "127.0.0.1";  // a tcp endpoint's interface
  std::optional<std::string> token;       // every connection's first request must carry it
  size_t maxConnections = 32;
  // A unix socket's group (scanback run --control-group): once it listens (mode 0600), the socket
  // is given to this group and made 0660, so that the group's members connect too. The process
  // must be in the group (or root).
  std::optional<gid_t> group;
  std::string groupName;  // for messages
};

struct HostOptions {
  std::shared_ptr<const Program> program;
  uint64_t statementBudget = 0;  // per cycle; 0: the VM's own
  recorder::RunLoopOptions loop;
  // Set: run() gives the scan thread SCHED_FIFO at this priority and locks memory
  // (runtime/realtime.h); whoever sets it has probed it (probeScanPriority) before any thread started.
  std::optional<int> scanPriority;
  std::optional<Stimulus> stimulus;
  // Set: the run is recorded (to `path`, or, with a ring and no path, to memory only). A control
  // endpoint records even without it: a history is always kept in memory for it, and while a
  // debugger follows it, written into blocks often enough that it sees a cycle about 100 ms after
  // it ends (docs/control.md).
  std::optional<recorder::RecorderOptions> recording;
  std::optional<ControlEndpointOptions> control;
  bool debugEnabled = true;  // off: status, snapshot and stop only, a stream (attach) is refused
  // Called at each cycle's start and after each cycle, in this order (runtime/io_driver.h).
  std::vector<std::shared_ptr<IoDriver>> drivers;
  // Answer SIGINT, SIGTERM, SIGHUP and SIGUSR1 (runtime/process_signals.h): the handlers are the process's,
  // so one host at a time does (`scanback run`; a test's hosts do not).
  bool handleSignals = false;
  // Where the host says what happens, one line at a time without its newline (from the scan
  // thread and the recorder's writer thread); default: stderr.
  std::function<void(const std::string&)> log;
};

// How run() ended.
struct RunSummary {
  enum class End { CycleLimit, TimeLimit, ClockEnded, Stopped, Faulted };
  End end = End::Stopped;
  double seconds = 0;  // wall time from the first cycle's preparation to the end
};

// What finish() found.
struct RecordingSummary {
  bool recorded = false;  // there was a recorder (the fields below are its)
  bool ok = true;         // finished cleanly; else `error`
  std::string error;
  recorder::RecorderStats stats;
  recorder::HeldHistory held;
  recorder::RecordingHealth health;
};

class RuntimeHost {
 public:
  // Installs the signal handlers (when asked), starts the recorder and opens the control endpoint,
  // saying where it listens. Null with `error` (for "scanback: ERROR") when it cannot.
  [[nodiscard]] static std::unique_ptr<RuntimeHost> create(HostOptions options, std::string& error);
  // finish(), if it was not called.
  ~RuntimeHost();
  RuntimeHost(const RuntimeHost&) = delete;
  RuntimeHost& operator=(const RuntimeHost&) = delete;

  // The scan thread: runs cycles until a limit, a stop or a fault; with a control endpoint, a
  // fault holds the runtime up (faulted, its history kept) until it is stopped. Then the control
  // endpoint is closed. Once.
  RunSummary run();
  // After run(): finishes the recording (the snapshots still requested are written, or refused,
  // and said). Idempotent.
  RecordingSummary finish();

  // Any thread: ends run() at the next cycle, or at once when it holds paused or faulted.
  void stop() { published_->stop(); }
  // Any thread: asks for a snapshot of the flight recorder's history, as SIGUSR1 does.
  void requestSnapshot() { snapshotWanted_.store(true); }
  // The runtime: the scan thread's while run() runs; anyone's after it.
  const Runtime& runtime() const { return *runtime_; }
  // Where the control endpoint listens ("unix:///…", "tcp://127.0.0.1:PORT"); empty without one.
  const std::string& controlEndpoint() const { return where_; }

 private:
  explicit RuntimeHost(HostOptions options);
  [[nodiscard]] bool startRecorder(std::string& error);
  [[nodiscard]] bool openControl(std::string& error);
  // SIGUSR1 or requestSnapshot(), between cycles: a snapshot named after the trace and the cycle.
  void snapshotIfWanted();
  // Reports the snapshots that are written (all of them with `wait`).
  void reportSnapshots(bool wait);
  void say(const std::string& line) const;
  // A driver wants the runtime to fault (runtime/io_driver.h): true with its message.
  bool ioFaulted(std::string& message) const;

  HostOptions options_;
  bool ringAsked_ = false;  // the recording options asked for a flight recorder themselves
  std::unique_ptr<Runtime> runtime_;
  StopRequest stopRequest_;
  std::unique_ptr<PublishedRuntime> published_;
  std::unique_ptr<recorder::Recorder> recorder_;
  std::string recordPath_;  // the trace recorded to (empty: none, or memory only)
  std::unique_ptr<control::ControlServer> server_;
  std::string where_;
  std::atomic<bool> snapshotWanted_{false};
  std::list<std::future<recorder::SnapshotResult>> snapshots_;  // requested, not reported yet
  bool ran_ = false;
  std::optional<RecordingSummary> finished_;
};

}  // namespace scanback::runtime
