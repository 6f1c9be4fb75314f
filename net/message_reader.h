// Reading Debug Adapter Protocol messages from a byte stream: the base protocol's framing.
//
//   Content-Length: 119\r\n
//   \r\n
//   {"seq":153,"type":"request","command":"next","arguments":{"threadId":3}}...
//
// A message is a header — lines `Name: value`, each ended by CRLF, then an empty line — and a
// body of exactly Content-Length bytes of UTF-8 JSON. Header fields other than Content-Length
// are ignored. Reading is lenient where it costs nothing: a bare LF ends a line too, field names
// are compared without regard to case, blank lines before a header are skipped.
//
//   MessageReader reader(stream);
//   for (;;) {
//     ReadResult r = reader.next();
//     if (r.isEnd()) break;                        // r.endError: "" or why the stream failed
//     if (r.isError()) { log(r.error.toString()); continue; }   // the session goes on
//     dispatch(r.message);
//   }
//
// next() never throws on bad input, never waits for more than it needs (it returns as soon as one
// message, one error or the end is known), and never allocates from an unchecked length: memory is
// bounded by maxHeaderBytes + maxBodyBytes + one read piece (64 KiB).
//
// Resynchronisation — what follows a FramingError:
//  * Errors in a body (not UTF-8, nested too deeply, not JSON, not an object, not a valid message)
//    consume exactly that body: its length was known, so the next message is read right after it
//    and nothing else is lost.
//  * A Content-Length over maxBodyBytes is reported as soon as the header has been read. No client
//    sends such a body, so its length is taken for garbage: the reader looks for the next
//    `Content-Length` from the start of the body, as after a header error (below), rather than
//    discard up to 2^63 bytes while the client's next requests wait behind them.
//  * Errors in a header (no Content-Length; a Content-Length that is not a decimal number, is
//    negative, does not fit in 63 bits, or contradicts an earlier one; a line that is not
//    `name: value` with a token name, or whose name ends in Content-Length with bytes in front;
//    a header over maxHeaderBytes) leave the body's length unknown. The reader then looks for the
//    next `Content-Length` (ASCII, any case) and reads a header from there:
//      - in the rejected line itself (after its first byte), the last occurrence, if any: a client
//        that sent a body shorter than its Content-Length leaves the body's tail in front of the
//        next header, on the same line (`..."}}Content-Length: 52`), and that message is kept.
//        An earlier occurrence on the same line could only fail again, as its line would hold the
//        later one;
//      - otherwise, anywhere after the rejected line's line break. For a missing Content-Length
//        the rejected line is the empty line that ended the header. For a header over the limit,
//        whose last line had no break within it, the search starts 13 bytes before the limit (so
//        that a `Content-Length` cut by the limit is still found), but at least one byte after
//        the header's start. Searching keeps no more than 13 bytes.
//    Every error thus consumes at least one byte (a message as many as its header and body),
//    so a stream of N bytes gives at most N + 2 results before the end, in time linear in N.
//  * The stream ending inside a header or a body is reported once, then the end is returned.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/stream.h"

namespace scanback::net {

struct ReaderLimits {
  size_t maxHeaderBytes = 8 * 1024;          // a whole header, its line breaks and final empty line included
  uint64_t maxBodyBytes = 64 * 1024 * 1024;  // Content-Length above this: reported, body skipped
  // Arrays and objects nested in a body, at most (deeper: an error; protects whatever walks the
  // JSON recursively afterwards, from dump() to schema validation).
  size_t maxNestingDepth = 256;
};

// What a body must be besides a JSON object. The framing is the same for both protocols that use
// it: the Debug Adapter Protocol's messages (seq, type) and the Language Server Protocol's JSON-RPC
// 2.0 messages, which lsp/ checks itself, so that it answers a bad one with a JSON-RPC error.
enum class BodyProtocol { Dap, JsonRpc };

struct FramingError {
  std::string what;
  uint64_t offset = 0;           // stream offset of the first byte of the message at fault (its header)
  std::optional<int64_t> seq;    // set when the body was a JSON object with an integer `seq`
  std::string toString() const;  // "byte 1234: <what> (seq 7)"
};

struct [[nodiscard]] ReadResult {
  enum class Kind { Message, Error, End };
  Kind kind = Kind::End;
  // Kind::Message: a JSON object. Under BodyProtocol::Dap, one with an integer `seq` and a string
  // `type` that is "request" (then `command` is a string), "response" (integer `request_seq`,
  // boolean `success`, string `command`) or "event" (string `event`). Nothing else is checked here.
  nlohmann::json message;
  FramingError error;    // Kind::Error
  std::string endError;  // Kind::End: empty when the stream ended cleanly, else why reading failed

  bool isMessage() const { return kind == Kind::Message; }
  bool isError() const { return kind == Kind::Error; }
  bool isEnd() const { return kind == Kind::End; }
};

class MessageReader {
 public:
  explicit MessageReader(Stream& stream, ReaderLimits limits = {}, BodyProtocol protocol = BodyProtocol::Dap);

  // Blocks until the next message, framing error or end of the stream. Once the end has been
  // returned, every later call returns it again without reading.
  ReadResult next();

  // Stream offset of the first byte not consumed yet.
  uint64_t position() const { return base_ + pos_; }

 private:
  enum class State { Header, Search };

  ReadResult readHeaderAndBody();
  ReadResult validateBody(std::string_view body, uint64_t messageOffset) const;
  // Reads one more piece from the stream, dropping consumed bytes first. False at the end.
  bool fill();
  size_t available() const { return buf_.size() - pos_; }
  size_t index(uint64_t offset) const { return static_cast<size_t>(offset - base_); }
  ReadResult error(std::string what, uint64_t offset, std::optional<int64_t> seq = std::nullopt) const;
  // After an error in the header starting at headerStart, in its line [lineStart, lineEnd) (stream
  // offsets): complete (lineEnd is its line break) or cut by the header limit.
  void resyncAfterLine(uint64_t headerStart, uint64_t lineStart, uint64_t lineEnd, bool lineComplete);

  Stream& stream_;
  ReaderLimits limits_;
  BodyProtocol protocol_;
  std::string buf_;
  size_t pos_ = 0;     // next unconsumed byte in buf_
  uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  bool endReturned_ = false;
  std::string readError_;
  State state_ = State::Header;
};

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
// When not, `errorAt` (if given) receives the offset of the first bad sequence.
bool isValidUtf8(std::string_view s, size_t* errorAt = nullptr);

}  // namespace scanback::net
