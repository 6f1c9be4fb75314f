// The client side of net/listener.h: a connected socket, as an FdStream.
//
//   std::string error;
//   auto stream = connectUnix("/run/plant.sock", error);   // null, error "No such file or directory"
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "net/stream.h"

namespace scanback::net {

// Connects to the unix socket `path`. Null with `error` (why, without the path) when it cannot.
std::unique_ptr<FdStream> connectUnix(const std::string& path, std::string& error);

// Connects to `host` (an IPv4 address) at `port`, with TCP_NODELAY (the messages are small and
// interactive). Null with `error` (why, without the address) when it cannot.
std::unique_ptr<FdStream> connectTcp(const std::string& host, uint16_t port, std::string& error);

}  // namespace scanback::net
