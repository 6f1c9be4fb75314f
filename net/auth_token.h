// The token that authenticates a client of `scanback dap --port` or of a runtime's control
// endpoint: any local process can connect to a TCP port on 127.0.0.1, and a launch acts as the user
// (it compiles files, writes a trace). So over TCP, `launch` and `attach` must carry the token the
// adapter was started with as their `authToken` argument (Session::requireAuthToken), and a control
// client its `token` (docs/control.md). The token is read from a file the user made
// (--auth-token-file) or, by `scanback dap --port`, generated and printed on stderr.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace scanback::net {

// A token must have at least this many bytes: a short one can be guessed by a local client trying
// tokens as fast as the server answers (each wrong one ends its connection, a new one costs little).
inline constexpr size_t kMinAuthTokenBytes = 16;

// The token in `path`: its first line, without the white space around it. nullopt with `error`
// when the file cannot be read, holds no token, or one shorter than kMinAuthTokenBytes. `warning`
// is set when others may read the file.
[[nodiscard]] std::optional<std::string> readAuthToken(const std::string& path, std::string& error,
                                                       std::string& warning);

// 32 bytes from the kernel's random source, as 64 hex digits. nullopt with `error` when there is
// no random source.
[[nodiscard]] std::optional<std::string> generateAuthToken(std::string& error);

// Whether `given` is `expected`, in a time that depends on the length of `expected` only: how long
// a wrong guess takes says nothing about how much of it was right.
bool sameAuthToken(std::string_view given, std::string_view expected);

}  // namespace scanback::net
