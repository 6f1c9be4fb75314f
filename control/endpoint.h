// Control endpoints: where a runtime started with `scanback run --control ENDPOINT` listens, and
// where `scanback ctl` and a debugger's `attach` connect. Two forms:
//
//   unix:///run/plant.sock     a unix socket, created with mode 0600 (only its owner connects)
//   tcp://127.0.0.1:9000       TCP; the runtime binds loopback unless --control-bind says otherwise
//
// The listeners and streams are net/'s, shared with the debug adapter.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "net/listener.h"
#include "net/stream.h"

namespace scanback::control {

struct Endpoint {
  enum class Kind { Unix, Tcp };
  Kind kind = Kind::Unix;
  std::string path;  // unix
  std::string host;  // tcp: an IPv4 address
  uint16_t port = 0;
  // As it is written: unix:///path or tcp://host:port.
  std::string text() const;
};

// nullopt with `error` ("control endpoint 'x': ...") when `text` is neither form.
[[nodiscard]] std::optional<Endpoint> parseEndpoint(std::string_view text, std::string& error);

// Listens on `endpoint`: a unix socket (net::UnixListener: mode 0600, a stale socket replaced), or
// TCP on `bindAddress` (net::TcpListener) at the endpoint's port (0: a free one). Null with `error`.
[[nodiscard]] std::unique_ptr<net::Listener> listenOn(const Endpoint& endpoint, const std::string& bindAddress,
                                                      std::string& error);
// The port a TCP listener got (0 for a unix one).
uint16_t listeningPort(const net::Listener& listener);

// Connects to `endpoint`. Null with `error` ("cannot connect to ENDPOINT: why").
[[nodiscard]] std::unique_ptr<net::FdStream> connectTo(const Endpoint& endpoint, std::string& error);

}  // namespace scanback::control
