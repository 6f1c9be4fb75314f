#include "net/message_writer.h"

namespace scanback::net {

std::string MessageWriter::frame(const nlohmann::json& message) {
  const std::string body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string framed = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  framed += body;
  return framed;
}

bool MessageWriter::send(const nlohmann::json& message, std::string* error) {
  const std::string framed = frame(message);  // outside the lock: serialising may take a while
  std::string writeError;
  bool ok;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ok = stream_.write(framed, writeError);
  }
  if (!ok && error) *error = writeError;
  return ok;
}

}  // namespace scanback::net
