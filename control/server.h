// The control server of a runtime (`scanback run --control`): answers status, snapshot, stream and
// stop requests (docs/control.md) on its own threads, one per connection, with the limits and
// timeouts of net/server.h. It never makes the scan wait: status is read from what the runtime
// publishes, snapshots are the flight recorder's (written by its writer thread), and a stream is
// fed the chunks the flight recorder keeps through a HistorySink with a bounded buffer per client —
// a client that falls behind gets a gap, never back-pressure (architecture: the live task never
// waits).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "control/protocol.h"
#include "net/listener.h"
#include "net/server.h"
#include "recorder/recorder.h"

namespace scanback::control {

// What the runtime shows and does for its control clients (runtime/published.h implements it, for
// the runtime host of `scanback run`).
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
  [[nodiscard]] virtual bool setPaused(bool paused, std::string& error) = 0;
  // Forcing (vm/runtime/forces.h): the force as the response's `force` object ({target, value,
  // type}), the targets released, the forces held ({target, value, type, sinceCycle}); nullopt
  // with `error` when the runtime cannot (its own reason). A runtime without forcing refuses.
  [[nodiscard]] virtual std::optional<json> force(const std::string& target, const std::string& value,
                                                  std::string& error) {
    static_cast<void>(target), static_cast<void>(value);
    error = "this runtime does not take forces";
    return std::nullopt;
  }
  [[nodiscard]] virtual std::optional<json> release(const std::string& target, std::string& error) {
    static_cast<void>(target);
    error = "this runtime does not take forces";
    return std::nullopt;
  }
  virtual json forced() const { return json::array(); }
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

  // The limits of docs/control.md ("Limits"), for a server that survives its clients
  // (net/server.h): connections served at once (--max-connections), the first valid request
  // (with its token) within handshakeTimeout of connecting, every later request within
  // idleTimeout of the answer before (a stream, once begun, has no such deadline: it only writes),
  // and a client that reads nothing for sendTimeout closed.
  size_t maxConnections = 32;
  std::chrono::milliseconds handshakeTimeout{10'000};
  std::chrono::milliseconds idleTimeout{60'000};
  std::chrono::milliseconds sendTimeout{30'000};
  // A connection's requests are answered at most this many per second, in bursts of up to
  // requestBurst: a client polling in a loop waits for its answers instead of taking the processor
  // from the scan thread. 0: no limit.
  double requestsPerSecond = 50;
  double requestBurst = 10;
  // New connections are accepted at most this many per second (in bursts of 32): a client that
  // connects anew for each request (`scanback ctl status` in a loop) waits in connect(). 0: no limit.
  double acceptsPerSecond = 200;
  // Names the endpoint in what the server says on stderr.
  std::string name = "control endpoint";
  // Where the server says it; default: stderr.
  std::function<void(const std::string&)> log;
};

class ControlServer {
 public:
  // Serves `listener` with a net::Server: a thread that accepts, and one per connection, all of
  // them at a lower priority than the runtime's scan thread (nice +10). Throws std::runtime_error
  // when the server cannot start (no descriptors at all).
  ControlServer(std::unique_ptr<net::Listener> listener, ControlledRuntime& runtime, ControlOptions options);
  // close().
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Stops accepting; each stream sends what it has queued (for at most `drain`) and an `end` event
  // with the runtime's state; then every connection is closed and its thread joined. Idempotent.
  void close(std::chrono::milliseconds drain = std::chrono::milliseconds(2000));
  // The TCP port listened on (0 for a unix socket).
  uint16_t port() const { return server_->port(); }
  net::Server::Counts counts() const { return server_->counts(); }

  // What serve() tells the server around it.
  struct Hooks {
    std::function<void()> established;  // the first valid request, with its token, was read
    std::function<void()> streaming;    // the connection turns into a stream
  };
  // Serves one connection until it ends or `closing` is set: what each connection's thread does
  // (and the control protocol's fuzz target). Requests after the first valid one must come within
  // options.idleTimeout (the stream's read deadline); they are answered at options.requestsPerSecond.
  static void serve(net::Stream& stream, ControlledRuntime& runtime, const ControlOptions& options,
                    const std::atomic<bool>& closing, const Hooks& hooks = {});

 private:
  ControlledRuntime& runtime_;
  ControlOptions options_;
  std::atomic<bool> closing_{false};
  std::atomic<bool> closed_{false};
  // Connections that are streams, for close() to let them drain.
  std::mutex streamsMutex_;
  std::condition_variable streamsChanged_;
  size_t streams_ = 0;
  std::unique_ptr<net::Server> server_;
};

}  // namespace scanback::control
