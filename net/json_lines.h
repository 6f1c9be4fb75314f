// Newline-delimited JSON over a byte stream (the control protocol's framing, docs/control.md): one
// JSON value per line, and, where the protocol says so, a counted run of raw bytes after a line.
//
//   LineReader reader(stream, 64 * 1024);
//   std::string line, error;
//   while (reader.readLine(line, error) == LineReader::Result::Line) handle(json::parse(line));
//
// Everything read is untrusted: a line longer than the reader's limit is skipped up to its end and
// reported (TooLong), never buffered whole, so memory is bounded by the limit and one read piece.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "net/stream.h"

namespace scanback::net {

// Reads lines and counted bytes from a stream.
class LineReader {
 public:
  explicit LineReader(Stream& stream, size_t maxLineBytes = 64 * 1024) : stream_(stream), maxLineBytes_(maxLineBytes) {}
  enum class Result { Line, End, TooLong, Failed };
  // The next line, without its '\n' (a '\r' before it is dropped). TooLong: a line over the
  // limit, skipped up to its end. End: the stream ended (a partial line is dropped). Failed: the
  // stream failed, `error` says why.
  [[nodiscard]] Result readLine(std::string& line, std::string& error);
  // Exactly `count` bytes; false at the end of the stream or on an error.
  [[nodiscard]] bool readBytes(size_t count, std::vector<uint8_t>& out, std::string& error);
  size_t maxLineBytes() const { return maxLineBytes_; }

 private:
  [[nodiscard]] bool fill(std::string& error);
  Stream& stream_;
  size_t maxLineBytes_;
  std::string buffer_;
  size_t start_ = 0;
};

// Writes `message` as one line, in one Stream::write (strings that are not UTF-8 get U+FFFD in
// place of each bad byte). False when the stream is closed or broken.
bool writeLine(Stream& stream, const nlohmann::json& message);

}  // namespace scanback::net
