// A client of a runtime's control endpoint: `scanback ctl`, and the debug adapter's attached
// sessions (dap/targets/attach_feed.h). One request at a time; after a `stream` request, the
// events that follow, as they are or as what they add to a trace (nextHistoryEvent).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/endpoint.h"
#include "control/protocol.h"
#include "traces/trace_model.h"

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

  // The same, as what the event adds to a trace (docs/control.md: stream): a block's frame is
  // checked against its event (kind, cycles, size; the payload hash is the TraceWriter's to check,
  // where it is appended), a gap and a fault become their trace data. nullopt with `error` as
  // nextEvent, or naming what is malformed.
  struct HistoryEvent {
    enum class Kind {
      Header,    // `block`: the trace's header block
      Chunk,     // `block`: a chunk's first block or a continuation
      Gap,       // `gap`: cycles dropped for this client
      Fault,     // `fault`: the runtime's task faulted; nothing follows
      Status,    // `status`: the runtime's status fields
      CaughtUp,  // the history held when the stream began has been sent
      End,       // the runtime ends the stream
      Other,     // an event of a later protocol version: not this client's to read
    } kind = Kind::Other;
    std::vector<uint8_t> block;  // framed, as in a trace file
    trace::GapData gap;
    trace::FaultData fault;
    json status;
  };
  [[nodiscard]] std::optional<HistoryEvent> nextHistoryEvent(std::string& error);

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
