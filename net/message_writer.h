// Writing Debug Adapter Protocol messages to a byte stream: `Content-Length: N\r\n\r\n` and the
// JSON body (net/message_reader.h describes the framing).
//
// send() may be called from any thread (responses from the session's thread, events from a
// target's): each message goes out whole, with its header, in one Stream::write call made under a
// mutex, so messages never interleave. The writer adds nothing to the message: the session assigns
// `seq`. Strings that are not valid UTF-8 (a variable's bytes, a file name) are written with
// U+FFFD in place of each bad byte instead of failing.
#pragma once

#include <nlohmann/json.hpp>

#include <mutex>
#include <string>

#include "net/stream.h"

namespace scanback::net {

class MessageWriter {
 public:
  explicit MessageWriter(Stream& stream) : stream_(stream) {}

  // False when the stream could not take the message (closed, or the peer went away); `error`
  // (if given) then says why.
  [[nodiscard]] bool send(const nlohmann::json& message, std::string* error = nullptr);

  // The message as it goes on the wire: header and compact UTF-8 body.
  static std::string frame(const nlohmann::json& message);

 private:
  Stream& stream_;
  std::mutex mutex_;
};

}  // namespace scanback::net
