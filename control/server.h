// The control server of a runtime (`scanback run --control`): answers status, snapshot, stream and
// stop requests (docs/control.md) on its own threads, one per connection. It never makes the scan
// wait: status is read from what the runtime publishes, snapshots are the flight recorder's
// (written by its writer thread), and a stream is fed the chunks the flight recorder keeps through a
// HistorySink with a bounded buffer per client — a client that falls behind gets a gap, never
// back-pressure (architecture: the live task never waits).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "control/protocol.h"
#include "net/listener.h"
#include "recorder/recorder.h"

namespace scanback::control {

// What the runtime shows and does for its control clients (cli/run_command.cpp implements it).
// Called from the server's threads, at any time: thread-safe, and never waiting for the scan.
class ControlledRuntime {
 public:
  virtual ~ControlledRuntime() = default;
  // The status object: state, cycles, debugEnabled, tasks, ring, fault (docs/control.md).
  virtual json status() const = 0;
  // The flight recorder whose history snapshot and stream give; null when there is none.
  virtual recorder::Recorder* recorder() = 0;
  // Asks the runtime to stop (between cycles, or at once when it waits faulted).
  virtual void stop() = 0;
  // The operator's RUN/STOP switch: the task holds between cycles (state `paused`) until resumed.
  // A debugger never pauses a runtime; an operator may (`scanback ctl pause`). False with `error`
  // when the runtime cannot (it has faulted or is stopping).
  virtual bool setPaused(bool paused, std::string& error) = 0;
};

struct ControlOptions {
  // Every connection's first request must carry it as 'token' (compared in constant time).
  std::optional<std::string> token;
  // Off (--no-debug): status, snapshot and stop work, stream (what attach uses) is refused.
  bool debugEnabled = true;
  // Each streaming client's buffer of chunks not yet sent: beyond it, chunks are dropped for that
  // client and replaced by a gap.
  size_t clientBufferBytes = 16u << 20;
  // How often a stream carries the runtime's status (its state, cycle times).
  std::chrono::milliseconds statusEvery{200};
  // A snapshot not written by then is reported as failed.
  std::chrono::seconds snapshotTimeout{60};
};

class ControlServer {
 public:
  // Serves `listener` on a thread of its own.
  ControlServer(std::unique_ptr<net::Listener> listener, ControlledRuntime& runtime, ControlOptions options);
  // close().
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Stops accepting; each stream sends what it has queued (for at most `drain`) and an `end` event
  // with the runtime's state; then every connection is closed and its thread joined. Idempotent.
  void close(std::chrono::milliseconds drain = std::chrono::milliseconds(2000));
  const net::Listener& listener() const { return *listener_; }

  // Serves one connection until it ends or `closing` is set: what each connection's thread does
  // (and the control protocol's fuzz target). `streaming` is set when it turns into a stream.
  static void serve(net::Stream& stream, ControlledRuntime& runtime, const ControlOptions& options,
                    const std::atomic<bool>& closing, std::atomic<bool>* streaming = nullptr);

 private:
  struct Connection {
    std::unique_ptr<net::FdStream> stream;
    std::thread thread;
    std::atomic<bool> done{false};
    std::atomic<bool> streaming{false};
  };
  void acceptLoop();
  void reap(bool all);

  std::unique_ptr<net::Listener> listener_;
  ControlledRuntime& runtime_;
  ControlOptions options_;
  std::atomic<bool> closing_{false};
  std::atomic<bool> closed_{false};
  std::mutex mutex_;
  std::list<Connection> connections_;
  std::thread acceptThread_;
};

}  // namespace scanback::control
