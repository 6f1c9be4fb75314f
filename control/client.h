// A client of a runtime's control endpoint: `scanback ctl`, and the debug adapter's attached
// sessions (dap/targets/attach_feed.h). One request at a time; after a `stream` request, the
// events that follow.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/endpoint.h"
#include "control/protocol.h"

namespace scanback::control {

class ControlClient {
 public:
  // Connects to `endpoint`. Null with `error` when it cannot. The token, when given, goes with
  // every request; over a unix socket only when the socket file and the process listening on it
  // belong to this user or root (net::checkUnixServerOwner), else null with `error` naming the
  // owner.
  [[nodiscard]] static std::unique_ptr<ControlClient> connect(const Endpoint& endpoint,
                                                              std::optional<std::string> token, std::string& error);

  // Sends `request` and reads its response line. nullopt with `error` when the connection fails or
  // the response is no JSON object; a refusal ({"ok": false, "error": ...}) is returned as it is.
  [[nodiscard]] std::optional<json> request(json request, std::string& error);

  // After a successful stream request: the next event, with the block that follows it when it
  // says "bytes". nullopt with `error` at the end of the connection (empty when the runtime
  // closed it, or close() was called) or when the event is malformed.
  struct Event {
    json message;
    std::vector<uint8_t> bytes;
  };
  [[nodiscard]] std::optional<Event> nextEvent(std::string& error);

  // From any thread: the connection closes, and a nextEvent() waiting on it returns.
  void close() { stream_->close(); }

 private:
  ControlClient(std::unique_ptr<net::FdStream> stream, std::optional<std::string> token, std::string where)
      : stream_(std::move(stream)),
        reader_(*stream_, kMaxLineBytes),
        token_(std::move(token)),
        where_(std::move(where)) {}
  [[nodiscard]] std::optional<json> readMessage(std::string& error);

  std::unique_ptr<net::FdStream> stream_;
  net::LineReader reader_;
  std::optional<std::string> token_;
  std::string where_;  // the endpoint, for errors
};

}  // namespace scanback::control
