// A server that survives its clients: accepts connections on a listener and serves each on a
// thread of its own, the way `scanback dap --port/--socket` and a runtime's control endpoint
// (control/server.h) both do. What one local user could otherwise do to it, and what it does:
//
//   too many connections      at most maxConnections at once. A new one beyond: the oldest
//                             connection that has not finished its handshake is closed to make
//                             room (an idle flood cannot lock a client out); when every one has,
//                             the new one is sent the refusal (a line of the protocol, or nothing)
//                             and closed at once — never left in the listen backlog.
//   connecting, then silence  a connection must finish its handshake (Connection::established:
//                             its first valid message, its token) within handshakeTimeout, or it
//                             is closed. Later deadlines (idle) are the protocol's, on the stream.
//   never reading             a write that passes no byte on for sendTimeout closes the connection
//                             (FdStream::setSendTimeout): no thread, no debug session waits for
//                             ever on a client that does not read.
//   out of descriptors        accept's EMFILE/ENFILE/ENOMEM/ENOBUFS: the server closes the oldest
//                             connection still in its handshake, or, when there is none, takes the
//                             waiting connection with a spare descriptor it keeps for this, sends
//                             the refusal and closes it (so the backlog does not fill and spin);
//                             then it waits (10 ms, doubling up to 1 s) and goes on. It never ends.
//   finished connections      reaped as soon as their thread ends, whether or not anything is
//                             accepted: a flood of closed connections frees what it held.
//
// Each kind of event is said once on stderr, then counted: "N more like it" follows when its
// window of 10 s ends, so a flood gives a few lines, not one per connection.
//
//   ServerOptions o;  o.name = "control endpoint unix:///run/plant.sock";  o.maxConnections = 32;
//   Server server(std::move(listener), o, [](Connection& c) { serve(c.stream()); c.established(); ... });
//   ...
//   server.close();   // stops accepting, closes every connection, joins their threads
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "net/listener.h"
#include "net/stream.h"

namespace scanback::net {

// Descriptors a server leaves to the work of its connections (a session reads source files,
// writes traces; a snapshot writes one): connections are never allowed to take them all.
inline constexpr size_t kDescriptorsForWork = 16;

struct ServerOptions {
  // Names the server in what it says on stderr: "control endpoint unix:///run/plant.sock".
  std::string name = "server";
  // At most this many, and never more than the descriptor limit (RLIMIT_NOFILE) leaves, at the
  // server's start, beside the descriptors already open and kDescriptorsForWork: an idle flood
  // meets the connection limit, not the descriptor limit, and the connections served can still
  // open files. connectionLimit() says which applies.
  size_t maxConnections = 32;
  std::chrono::milliseconds handshakeTimeout{10'000};
  std::chrono::milliseconds sendTimeout{30'000};
  // What a refused connection is sent before it is closed, given why it is refused: a line of the
  // protocol ("" sends nothing).
  std::function<std::string(const std::string& why)> refusal;
  // New connections accepted per second at most, in bursts of up to acceptBurst: a client that
  // connects anew in a loop waits in connect() instead of taking the processor (for the server's
  // threads and its own) from the process's other work. 0: no limit.
  double acceptsPerSecond = 0;
  double acceptBurst = 32;
  // Added to the nice value of the server's threads (its accept loop and every connection's):
  // they yield the processor to the process's other threads (a runtime's scan thread) whenever both
  // want it. 0: as the thread that made the server.
  int niceness = 0;
  // Where the server says what happened; default: stderr, as "scanback: NAME: TEXT".
  std::function<void(const std::string&)> log;
};

class Server;

// One client's connection, as its handler sees it (on the connection's own thread).
class Connection {
 public:
  FdStream& stream() { return *stream_; }
  // The client: "127.0.0.1:51234", or "pid 4242, uid 1000" on a unix socket.
  const std::string& peer() const { return peer_; }
  // The client has proven itself (its first valid message, with its token): the handshake
  // deadline is lifted, and it is no longer closed to make room for a new connection.
  void established();
  bool isEstablished() const { return established_.load(std::memory_order_acquire); }
  // Says `text` on the server's stderr as an event of `kind`: once per 10 s, then counted, like
  // what the server says itself (a client sending garbage in a loop gives a few lines).
  void say(const std::string& kind, const std::string& text);

 private:
  friend class Server;
  Server* server_ = nullptr;
  std::unique_ptr<FdStream> stream_;
  std::string peer_;
  std::atomic<bool> established_{false};
};

class Server {
 public:
  using Handler = std::function<void(Connection&)>;
  // Serves `listener` on a thread of its own: each connection runs `handler` on its own thread;
  // when the handler returns, the connection is closed. Throws std::runtime_error when the server's
  // own eventfd cannot be made (no descriptors at all).
  Server(std::unique_ptr<Listener> listener, ServerOptions options, Handler handler);
  // close().
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Stops accepting: the listener closes (a unix socket's file is removed); connections go on.
  // Idempotent; not from a signal handler (requestStop() is for that).
  void stopAccepting();
  // stopAccepting(), then closes every connection's stream and waits for their handlers to
  // return. Idempotent.
  void close();
  // From a signal handler too: wakes waitForStopRequest(). Nothing else.
  void requestStop();
  // Blocks until requestStop() has been called.
  void waitForStopRequest();

  // The listener's TCP port (0 for a unix socket).
  uint16_t port() const { return port_; }
  // The connections served at once: options.maxConnections, or fewer when the descriptor limit
  // leaves fewer (the server says so at start).
  size_t connectionLimit() const { return maxConnections_; }

  struct Counts {
    size_t open = 0;            // connections being served (not yet reaped)
    uint64_t accepted = 0;      // connections served, ever
    uint64_t refused = 0;       // closed at once: over the limit or out of descriptors
    uint64_t evicted = 0;       // closed to make room, in their handshake
    uint64_t acceptErrors = 0;  // accept failures (EMFILE, ENFILE, ENOMEM, ENOBUFS, ...)
    uint64_t reaped = 0;        // connections whose thread has ended, taken off the list
  };
  Counts counts() const;

 private:
  friend class Connection;  // say()
  struct Slot {
    Connection connection;
    std::thread thread;
    std::atomic<bool> done{false};
    bool closing = false;  // under mutex_: evicted, no longer counted against the limit
  };
  // Says `text` as an event of `kind`, or counts it when one was said in the last 10 s.
  void say(const std::string& kind, const std::string& text);
  void emit(const std::string& text);  // under sayMutex_
  // Says how many more of each kind there were, when its window has ended (or for all of them).
  void flushSaid(bool all);
  std::optional<Clock::time_point> nextFlush();
  void loop();
  void acceptReady();
  void admit(int fd, const std::string& peer);
  // Sends the refusal to a connection not served, and closes it.
  void refuse(int fd, const std::string& why);
  // Closes the oldest connection still in its handshake; false when there is none. Under mutex_.
  bool evictOldestInHandshake(const std::string& why);
  // Whether every connection allowed is held, some by connections closing to make room (not yet
  // reaped): then nothing is accepted until they are. Under mutex_.
  bool awaitingRoom() const;
  // Says that an episode of accept failures has ended, once none came for a while.
  void endCalmEpisode();
  void reap();
  void wake();
  void niceThisThread() const;

  std::unique_ptr<Listener> listener_;
  ServerOptions options_;
  Handler handler_;
  uint16_t port_ = 0;
  size_t maxConnections_ = 0;
  int wake_ = -1;     // an eventfd: connection threads, stopAccepting and requestStop signal it
  int stopFd_ = -1;   // an eventfd requestStop() signals and waitForStopRequest() waits on
  int reserve_ = -1;  // a spare descriptor, given up for a moment to take a connection when there is none
  std::atomic<bool> stopAccepting_{false};
  std::atomic<bool> closed_{false};
  std::mutex stopMutex_;
  std::thread loopThread_;

  mutable std::mutex mutex_;
  std::list<Slot> slots_;
  Counts counts_;
  // Accept failures and pacing: the back-off and the episode being told.
  std::chrono::milliseconds backoff_{0};
  std::optional<Clock::time_point> retryAt_;  // not before then: backing off, or out of accepts
  double acceptTokens_ = 0;
  Clock::time_point acceptTokensAt_;
  std::optional<Clock::time_point> failingSince_;  // the episode: since the first failure
  Clock::time_point lastFailure_;
  uint64_t refusedInEpisode_ = 0;
  uint64_t evictedInEpisode_ = 0;  // counts_.evicted when it began

  // What was said, per kind: when, and how many like it since.
  std::mutex sayMutex_;
  struct Said {
    Clock::time_point at;  // when one was last said
    uint64_t more = 0;     // how many since, not said
    std::string last;      // the last of them
  };
  std::map<std::string, Said> said_;
};

}  // namespace scanback::net
