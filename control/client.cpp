#include "control/client.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "net/connect.h"
#include "traces/framing.h"

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

namespace {

std::optional<uint64_t> unsignedField(const json& message, const char* name) {
  const auto it = message.find(name);
  if (it == message.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

// A streamed block's frame header, checked against what its event says. Empty when it agrees.
std::string frameDisagrees(const std::vector<uint8_t>& bytes, std::initializer_list<trace::BlockKind> kinds,
                           trace::FrameHeader& frame) {
  if (bytes.size() < trace::kFrameHeaderBytes) return fmt::format("a block of {} bytes (no frame)", bytes.size());
  std::string error;
  const std::optional<trace::FrameHeader> h = trace::decodeFrameHeader(bytes.data(), error);
  if (!h) return "a block with a bad frame: " + error;
  if (std::find(kinds.begin(), kinds.end(), h->kind) == kinds.end())
    return fmt::format("a {} block, which its event is not", trace::blockKindName(h->kind));
  if (trace::kFrameHeaderBytes + h->storedSize != bytes.size()) return "a block whose size is not its frame's";
  frame = *h;
  return {};
}

}  // namespace

std::optional<ControlClient::HistoryEvent> ControlClient::nextHistoryEvent(std::string& error) {
  std::optional<Event> event = nextEvent(error);
  if (!event) return std::nullopt;
  const json& m = event->message;
  const std::string kind = m.value("event", "");
  HistoryEvent out;
  auto malformed = [&](const std::string& what) {
    error = fmt::format("{} streamed {}", where_, what);
    return std::nullopt;
  };
  trace::FrameHeader frame;
  if (kind == "header") {
    if (const std::string bad = frameDisagrees(event->bytes, {trace::BlockKind::Header}, frame); !bad.empty())
      return malformed("a header that is " + bad);
    out.kind = HistoryEvent::Kind::Header;
    out.block = std::move(event->bytes);
  } else if (kind == "chunk") {
    const std::string bad =
        frameDisagrees(event->bytes, {trace::BlockKind::Chunk, trace::BlockKind::Continuation}, frame);
    if (!bad.empty()) return malformed("a chunk that is " + bad);
    if (frame.firstCycle != unsignedField(m, "firstCycle") || frame.cycleCount != unsignedField(m, "cycleCount"))
      return malformed(fmt::format("a chunk whose block holds cycles {}..{}, not those its event says",
                                   frame.firstCycle, frame.firstCycle + frame.cycleCount - 1));
    out.kind = HistoryEvent::Kind::Chunk;
    out.block = std::move(event->bytes);
  } else if (kind == "gap") {
    const std::optional<uint64_t> first = unsignedField(m, "firstCycle");
    const std::optional<uint64_t> count = unsignedField(m, "cycleCount");
    if (!first || !count || *count == 0 || *first + *count < *first)
      return malformed("a gap without its firstCycle and cycleCount");
    out.kind = HistoryEvent::Kind::Gap;
    out.gap = trace::GapData{*first, *count};
  } else if (kind == "fault") {
    const std::optional<uint64_t> cycle = unsignedField(m, "cycle");
    const std::optional<uint64_t> step = unsignedField(m, "step");
    const std::optional<uint64_t> statement = unsignedField(m, "statement");
    const std::optional<uint64_t> code = unsignedField(m, "code");
    const auto message = m.find("message");
    if (!cycle || !step || !statement || !code || *statement > UINT32_MAX || *code > UINT32_MAX || message == m.end() ||
        !message->is_string())
      return malformed("a fault without its cycle, step, statement, code and message");
    out.kind = HistoryEvent::Kind::Fault;
    out.fault.cycle = *cycle;
    out.fault.step = *step;
    out.fault.statement = static_cast<uint32_t>(*statement);
    out.fault.code = static_cast<uint32_t>(*code);
    out.fault.message = message->get<std::string>();
  } else if (kind == "status") {
    out.kind = HistoryEvent::Kind::Status;
    out.status = std::move(event->message);
  } else if (kind == "caughtUp") {
    out.kind = HistoryEvent::Kind::CaughtUp;
  } else if (kind == "end") {
    out.kind = HistoryEvent::Kind::End;
  }
  return out;
}

}  // namespace scanback::control
