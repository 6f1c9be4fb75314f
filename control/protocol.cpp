#include "control/protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace scanback::control {

std::string_view commandName(Request::Command command) {
  switch (command) {
    case Request::Command::Status: return "status";
    case Request::Command::Snapshot: return "snapshot";
    case Request::Command::Stream: return "stream";
    case Request::Command::Stop: return "stop";
    case Request::Command::Pause: return "pause";
    case Request::Command::Resume: return "resume";
    case Request::Command::Force: return "force";
    case Request::Command::Release: return "release";
    case Request::Command::Forced: return "forced";
  }
  return "?";
}

namespace {

std::string describe(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

}  // namespace

std::optional<Request> parseRequest(std::string_view line, std::string& error) {
  json message;
  try {
    message = json::parse(line);
  } catch (const json::parse_error& e) {
    // Only the position: the library's text is not ours to show.
    error = fmt::format("syntax error at byte {} of the request", e.byte);
    return std::nullopt;
  } catch (const json::exception&) {
    // A number too large for a double (1e400) is out_of_range, not a parse_error.
    error = "a number in the request is out of range";
    return std::nullopt;
  }
  if (!message.is_object()) {
    error = fmt::format("a request must be a JSON object, not {}", describe(message));
    return std::nullopt;
  }
  Request r;
  const auto command = message.find("command");
  if (command == message.end() || !command->is_string()) {
    error = "missing 'command' (status, snapshot, stream, stop, pause, resume, force, release or forced)";
    return std::nullopt;
  }
  const std::string& name = command->get_ref<const std::string&>();
  if (name == "status") {
    r.command = Request::Command::Status;
  } else if (name == "snapshot") {
    r.command = Request::Command::Snapshot;
  } else if (name == "stream") {
    r.command = Request::Command::Stream;
  } else if (name == "stop") {
    r.command = Request::Command::Stop;
  } else if (name == "pause") {
    r.command = Request::Command::Pause;
  } else if (name == "resume") {
    r.command = Request::Command::Resume;
  } else if (name == "force") {
    r.command = Request::Command::Force;
  } else if (name == "release") {
    r.command = Request::Command::Release;
  } else if (name == "forced") {
    r.command = Request::Command::Forced;
  } else {
    error = fmt::format(
        "'command' must be one of status, snapshot, stream, stop, pause, resume, force, release, forced, not {}",
        describe(*command));
    return std::nullopt;
  }
  if (const auto token = message.find("token"); token != message.end()) {
    if (!token->is_string()) {
      error = "'token' must be a string";
      return std::nullopt;
    }
    r.token = token->get<std::string>();
  }
  if (r.command == Request::Command::Snapshot) {
    const auto path = message.find("path");
    if (path == message.end() || !path->is_string() || path->get_ref<const std::string&>().empty()) {
      error = "'snapshot' needs 'path': the trace file to write, on the runtime's machine";
      return std::nullopt;
    }
    r.path = path->get<std::string>();
    if (r.path.front() != '/') {
      error = fmt::format("'path' must be absolute (the runtime's working directory is not the client's), not {}",
                          describe(*path));
      return std::nullopt;
    }
  }
  if (r.command == Request::Command::Force || r.command == Request::Command::Release) {
    // force: 'target' and 'value'; release: 'target' optional (none: every force).
    const bool forcing = r.command == Request::Command::Force;
    for (const char* field : {"target", "value"}) {
      const bool isTarget = std::strcmp(field, "target") == 0;
      if (!forcing && !isTarget) continue;
      const auto it = message.find(field);
      if (it == message.end() && !forcing) continue;
      if (it == message.end() || !it->is_string() || (isTarget && it->get_ref<const std::string&>().empty())) {
        error = it == message.end()
                    ? fmt::format("'force' needs '{}': {}", field,
                                  isTarget ? "a path (Main.fb.x) or an address (%IX0.2)" : "the value, as text")
                    : fmt::format("'{}' must be a non-empty string, not {}", field, describe(*it));
        return std::nullopt;
      }
      (isTarget ? r.target : r.value) = it->get<std::string>();
    }
  }
  if (r.command == Request::Command::Stream) {
    if (const auto from = message.find("fromCycle"); from != message.end()) {
      bool whole = from->is_number_unsigned();
      if (whole) {
        r.fromCycle = from->get<uint64_t>();
      } else if (from->is_number_float()) {
        // 1.0 is 1; 1.5, -1.0 and anything past 2^53 (no longer exact) are refused, never truncated.
        const double d = from->get<double>();
        whole = d >= 0 && d <= 9007199254740992.0 && d == std::floor(d);
        if (whole) r.fromCycle = static_cast<uint64_t>(d);
      }
      if (!whole) {
        error = fmt::format("'fromCycle' must be a whole number from 0, not {}", describe(*from));
        return std::nullopt;
      }
    }
  }
  return r;
}

}  // namespace scanback::control
