// The control protocol (docs/control.md; its schema: control/control.schema.json): newline-
// delimited JSON over a control endpoint. A client sends one request per line and gets one
// response line per request; a `stream` request turns the connection into a stream of events, some
// followed by the bytes of a trace block. Everything read is untrusted: a line is at most
// kMaxLineBytes, a block at most kMaxBlockBytes, and a malformed message gets an error naming the
// request number and where it breaks, never a crash or a hang.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/json_lines.h"

namespace scanback::control {

using json = nlohmann::json;

// The framing is net/json_lines.h's (LineReader, writeLine), with these limits.
inline constexpr size_t kMaxLineBytes = 64 * 1024;
inline constexpr size_t kMaxBlockBytes = 512u << 20;  // a trace block's limit (traces/framing.h)

struct Request {
  enum class Command { Status, Snapshot, Stream, Stop, Pause, Resume, Force, Release, Forced };
  Command command = Command::Status;
  std::optional<std::string> token;
  std::string path;        // snapshot: the trace to write (absolute, on the runtime's machine)
  uint64_t fromCycle = 0;  // stream: the first cycle wanted (what is held from there on)
  std::string target;      // force, release: a path or an address (release: empty for every force)
  std::string value;       // force: the value, as in stimulus files
};

// Parses one request line. nullopt with `error` saying what is wrong and where ("syntax error at
// byte 7", "'command' must be one of status, snapshot, stream, stop", "'fromCycle' must be a
// whole number from 0, not -1").
[[nodiscard]] std::optional<Request> parseRequest(std::string_view line, std::string& error);
std::string_view commandName(Request::Command command);

}  // namespace scanback::control
