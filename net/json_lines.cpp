#include "net/json_lines.h"

#include <fmt/format.h>

#include <algorithm>

namespace scanback::net {

bool LineReader::fill(std::string& error) {
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  char chunk[16 * 1024];
  const ptrdiff_t n = stream_.read(chunk, error);
  if (n <= 0) return false;
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

LineReader::Result LineReader::readLine(std::string& line, std::string& error) {
  bool skipping = false;
  for (;;) {
    const size_t newline = buffer_.find('\n', start_);
    if (newline != std::string::npos) {
      if (skipping || newline - start_ > maxLineBytes_) {
        start_ = newline + 1;
        return Result::TooLong;
      }
      size_t end = newline;
      if (end > start_ && buffer_[end - 1] == '\r') --end;
      line.assign(buffer_, start_, end - start_);
      start_ = newline + 1;
      return Result::Line;
    }
    if (buffer_.size() - start_ > maxLineBytes_) {
      // Over the limit: drop what is here and skip up to the end of the line.
      skipping = true;
      buffer_.clear();
      start_ = 0;
    }
    if (start_ > 0) {
      buffer_.erase(0, start_);
      start_ = 0;
    }
    error.clear();
    if (!fill(error)) return error.empty() ? Result::End : Result::Failed;
  }
}

bool LineReader::readBytes(size_t count, std::vector<uint8_t>& out, std::string& error) {
  out.clear();
  out.reserve(count);
  while (out.size() < count) {
    if (start_ == buffer_.size() && !fill(error)) {
      if (error.empty()) error = fmt::format("the stream ended {} bytes into a block of {}", out.size(), count);
      return false;
    }
    const size_t take = std::min(count - out.size(), buffer_.size() - start_);
    out.insert(out.end(), buffer_.begin() + static_cast<ptrdiff_t>(start_),
               buffer_.begin() + static_cast<ptrdiff_t>(start_ + take));
    start_ += take;
  }
  return true;
}

bool writeLine(Stream& stream, const nlohmann::json& message) {
  std::string text = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  std::string error;
  return stream.write(text, error);
}

}  // namespace scanback::net
