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
[[nodiscard]] std::unique_ptr<FdStream> connectUnix(const std::string& path, std::string& error);

// Connects to `host` (an IPv4 address) at `port`, with TCP_NODELAY (the messages are small and
// interactive). Null with `error` (why, without the address) when it cannot.
[[nodiscard]] std::unique_ptr<FdStream> connectTcp(const std::string& host, uint16_t port, std::string& error);

// Before a secret (a token) goes to the server at the unix socket `path`, connected as `stream`:
// whether the socket file (lstat) and the process listening on it (SO_PEERCRED) both belong to the
// current user or to root. Anyone may create a socket at a path another user's runtime is expected
// at (a stale or not yet created one in a shared directory), and would then be sent the token.
// False with `error` naming the owner: "the socket /run/plant.sock belongs to user mallory (uid
// 1001), not to you (root) or root: the token is not sent to it".
[[nodiscard]] bool checkUnixServerOwner(const std::string& path, const FdStream& stream, std::string& error);

}  // namespace scanback::net
