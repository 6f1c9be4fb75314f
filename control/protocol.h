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

#include "dap/transport/stream.h"

namespace scanback::control {

using json = nlohmann::json;

inline constexpr size_t kMaxLineBytes = 64 * 1024;
inline constexpr size_t kMaxBlockBytes = 512u << 20;  // a trace block's limit (traces/framing.h)

// Reads lines and counted bytes from a stream, with the limits above.
class LineReader {
 public:
  explicit LineReader(dap::Stream& stream) : stream_(stream) {}
  enum class Result { Line, End, TooLong, Failed };
  // The next line, without its '\n' (a '\r' before it is dropped). TooLong: a line over
  // kMaxLineBytes, skipped up to its end. End: the stream ended (a partial line is dropped).
  Result readLine(std::string& line, std::string& error);
  // Exactly `count` bytes; false at the end of the stream or on an error.
  bool readBytes(size_t count, std::vector<uint8_t>& out, std::string& error);

 private:
  bool fill(std::string& error);
  dap::Stream& stream_;
  std::string buffer_;
  size_t start_ = 0;
};

// Writes `message` as one line. False when the stream is closed or broken.
bool writeLine(dap::Stream& stream, const json& message);

struct Request {
  enum class Command { Status, Snapshot, Stream, Stop, Pause, Resume };
  Command command = Command::Status;
  std::optional<std::string> token;
  std::string path;        // snapshot: the trace to write (absolute, on the runtime's machine)
  uint64_t fromCycle = 0;  // stream: the first cycle wanted (what is held from there on)
};

// Parses one request line. nullopt with `error` saying what is wrong and where ("syntax error at
// byte 7", "'command' must be one of status, snapshot, stream, stop", "'fromCycle' must be a
// whole number from 0, not -1").
std::optional<Request> parseRequest(std::string_view line, std::string& error);
std::string_view commandName(Request::Command command);

}  // namespace scanback::control
