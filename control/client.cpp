#include "control/client.h"

#include <fmt/format.h>

#include "net/connect.h"

namespace scanback::control {

std::unique_ptr<ControlClient> ControlClient::connect(const Endpoint& endpoint, std::optional<std::string> token,
                                                      std::string& error) {
  std::unique_ptr<net::FdStream> stream = connectTo(endpoint, error);
  if (!stream) return nullptr;
  // A token goes only to a runtime of this user's (or root's): anyone may listen on a path.
  if (token && endpoint.kind == Endpoint::Kind::Unix && !net::checkUnixServerOwner(endpoint.path, *stream, error))
    return nullptr;
  return std::unique_ptr<ControlClient>(new ControlClient(std::move(stream), std::move(token), endpoint.text()));
}

std::optional<json> ControlClient::readMessage(std::string& error) {
  std::string line;
  error.clear();
  switch (reader_.readLine(line, error)) {
    case net::LineReader::Result::Line: break;
    case net::LineReader::Result::End: error = fmt::format("{} closed the connection", where_); return std::nullopt;
    case net::LineReader::Result::TooLong:
      error = fmt::format("{} sent a line longer than {} bytes", where_, kMaxLineBytes);
      return std::nullopt;
    case net::LineReader::Result::Failed: error = fmt::format("{}: {}", where_, error); return std::nullopt;
  }
  json message;
  try {
    message = json::parse(line);
  } catch (const json::parse_error& e) {
    error = fmt::format("{} sent a malformed message (syntax error at byte {})", where_, e.byte);
    return std::nullopt;
  }
  if (!message.is_object()) {
    error = fmt::format("{} sent a message that is no JSON object", where_);
    return std::nullopt;
  }
  return message;
}

std::optional<json> ControlClient::request(json request, std::string& error) {
  if (token_) request["token"] = *token_;
  // A runtime that refuses the connection (too many, out of descriptors) sends why and closes it
  // at once: the request may then fail to go out, and the refusal is still there to read.
  const bool sent = net::writeLine(*stream_, request);
  std::optional<json> response = readMessage(error);
  if (!response && !sent) error = fmt::format("{} closed the connection", where_);
  return response;
}

std::optional<ControlClient::Event> ControlClient::nextEvent(std::string& error) {
  std::optional<json> message = readMessage(error);
  if (!message) return std::nullopt;
  Event event{std::move(*message), {}};
  if (!event.message.contains("event") || !event.message["event"].is_string()) {
    error = fmt::format("{} sent a stream message without 'event'", where_);
    return std::nullopt;
  }
  if (const auto bytes = event.message.find("bytes"); bytes != event.message.end()) {
    if (!bytes->is_number_unsigned() || bytes->get<uint64_t>() > kMaxBlockBytes) {
      error = fmt::format("{} sent a block size that is no number up to {}", where_, kMaxBlockBytes);
      return std::nullopt;
    }
    if (!reader_.readBytes(bytes->get<size_t>(), event.bytes, error)) {
      error = fmt::format("{}: {}", where_, error);
      return std::nullopt;
    }
  }
  return event;
}

}  // namespace scanback::control
