// A TCP listener on the loopback interface, for `scanback dap --port N`: a client (VS Code with a
// "debugServer" port) connects, and each connection becomes an FdStream.
//
//   std::string error;
//   auto listener = TcpListener::listen(4711, error);   // 0: the system picks a free port
//   if (!listener) fail(error);                          // "cannot listen on 127.0.0.1:4711: Address already in use"
//   while (auto stream = listener->accept(error)) serve(*stream);
//
// Only 127.0.0.1 is ever bound: a debug adapter must not be reachable from other machines.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "dap/transport/stream.h"

namespace scanback::dap {

class TcpListener {
 public:
  // Binds 127.0.0.1:port and listens. Null, with `error`, when that fails.
  static std::unique_ptr<TcpListener> listen(uint16_t port, std::string& error);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  // The port listened on (the one chosen by the system when 0 was asked for).
  uint16_t port() const { return port_; }

  // Blocks until a client connects and returns the connection (TCP_NODELAY set). Null when the
  // listener has been closed (`error` left empty) or accepting failed (`error` says why).
  std::unique_ptr<FdStream> accept(std::string& error);

  // Stops listening, from any thread: an accept() blocked in another thread returns null, as do
  // all later ones. Connections already accepted are not affected. Idempotent.
  void close();

 private:
  TcpListener(int fd, uint16_t port, int wakeRead, int wakeWrite);

  int fd_;
  uint16_t port_;
  int wake_[2];
  std::atomic<bool> closed_{false};
};

}  // namespace scanback::dap
