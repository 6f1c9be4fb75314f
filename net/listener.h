// Listening sockets for `scanback dap --port N` and `scanback dap --socket PATH` (a client, VS Code
// with a "debugServer" port or an extension that connects to a unix socket, connects) and for a
// runtime's control endpoint (`scanback run --control`, control/endpoint.h). Each connection
// becomes an FdStream.
//
//   std::string error;
//   auto listener = TcpListener::listen(4711, error);   // 0: the system picks a free port
//   if (!listener) fail(error);                          // "cannot listen on 127.0.0.1:4711: Address already in use"
//   while (auto stream = listener->accept(error)) serve(*stream);
//
// TCP binds 127.0.0.1 unless told otherwise: a debug adapter must not be reachable from other
// machines. Any local process can still connect to it, so `scanback dap --port` requires an
// authentication token (net/auth_token.h). A unix socket is created with mode 0600: only its owner
// connects.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "net/stream.h"

namespace scanback::net {

// How many connections the kernel holds for a listener until they are accepted: enough for a burst
// of clients connecting at once (HMIs at a runtime's start), while a server that cannot accept for
// a moment (net/server.h backs off when it has no descriptors) does not gather a crowd.
inline constexpr int kListenBacklog = 64;

// What both kinds share: accepting connections, and closing from another thread.
class Listener {
 public:
  virtual ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Blocks until a client connects and returns the connection. Null when the listener has been
  // closed (`error` left empty) or accepting failed (`error` says why). net::Server accepts on
  // its own (descriptor exhaustion, limits); this is for one-connection uses and tests.
  [[nodiscard]] std::unique_ptr<FdStream> accept(std::string& error);

  // Stops listening, from any thread: an accept() blocked in another thread returns null, as do
  // all later ones. Connections already accepted are not affected. Idempotent.
  void close();

  // The listening socket (non-blocking), for a server that polls and accepts itself.
  int fd() const { return fd_; }
  // Called on each accepted connection before it becomes a stream.
  virtual void configure(int) {}

 protected:
  Listener(int fd, int wake);

 private:
  int fd_;
  int wake_;  // an eventfd: close() signals it, accept() polls it
  std::atomic<bool> closed_{false};
};

class TcpListener final : public Listener {
 public:
  // Binds 127.0.0.1:port and listens. Null, with `error`, when that fails. `address` (an IPv4
  // address) binds another interface: only a runtime's control endpoint asks for one
  // (`scanback run --control-bind`), and then requires a token.
  [[nodiscard]] static std::unique_ptr<TcpListener> listen(uint16_t port, std::string& error,
                                                           const std::string& address = "127.0.0.1");
  // The port listened on (the one chosen by the system when 0 was asked for).
  uint16_t port() const { return port_; }

 private:
  TcpListener(int fd, uint16_t port, int wake);
  void configure(int connection) override;  // TCP_NODELAY: DAP messages are small and interactive
  uint16_t port_;
};

class UnixListener final : public Listener {
 public:
  // Creates the socket `path` with mode 0600 and listens. A stale socket there (no server answers
  // on it) is replaced; anything else at `path` — a live server's socket, a file — is left alone
  // and the listener fails. Null, with `error` ("cannot listen on PATH: why"), on failure.
  [[nodiscard]] static std::unique_ptr<UnixListener> listen(const std::string& path, std::string& error);
  // Removes the socket file (when it is still the one it created).
  ~UnixListener() override;
  const std::string& path() const { return path_; }

 private:
  UnixListener(int fd, std::string path, dev_t device, ino_t inode, int wake);
  std::string path_;
  dev_t device_;
  ino_t inode_;
};

}  // namespace scanback::net
