#include "net/message_reader.h"

#include <algorithm>
#include <limits>

namespace scanback::net {

namespace {

constexpr size_t kReadPiece = 64 * 1024;
constexpr std::string_view kContentLength = "Content-Length";

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equalsCi(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// First (or, with `last`, last) index i in [from, to) at which "Content-Length" starts and ends
// before `to`; npos if none.
size_t findContentLength(std::string_view s, size_t from, size_t to, bool last) {
  const size_t n = kContentLength.size();
  to = std::min(to, s.size());
  if (to < from + n) return std::string_view::npos;
  size_t found = std::string_view::npos;
  for (size_t i = from; i + n <= to; ++i) {
    if (lower(s[i]) != 'c' || !equalsCi(s.substr(i, n), kContentLength)) continue;
    if (!last) return i;
    found = i;
  }
  return found;
}

bool isTokenChar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

std::string shown(std::string_view s) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > kMax) out += "...";
  return out + "'";
}

// Checks one header line (without its line break). Records a Content-Length. Returns the problem,
// or an empty string.
std::string checkHeaderLine(std::string_view line, std::optional<uint64_t>& contentLength) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return "header line " + shown(line) + " is not 'name: value'";
  const std::string_view name = line.substr(0, colon);
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return isTokenChar(c); }))
    return "header line " + shown(line) + " does not start with a field name";
  if (!equalsCi(name, kContentLength)) {
    // Other fields are ignored, but one whose name ends in Content-Length is a header glued to
    // bytes in front of it (the tail of a body shorter than its Content-Length said, junk).
    if (name.size() > kContentLength.size() &&
        equalsCi(name.substr(name.size() - kContentLength.size()), kContentLength))
      return "header line " + shown(line) + " has bytes in front of Content-Length";
    return "";
  }
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return "Content-Length has no value";
  if (value.front() == '-') return "Content-Length " + shown(value) + " is negative";
  uint64_t n = 0;
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  for (const char c : value) {
    if (c < '0' || c > '9') return "Content-Length " + shown(value) + " is not a decimal number";
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (n > (kMax - digit) / 10) return "Content-Length " + shown(value) + " is too large (over 2^63 - 1)";
    n = n * 10 + digit;
  }
  if (contentLength && *contentLength != n)
    return "Content-Length " + std::to_string(n) + " contradicts an earlier Content-Length " +
           std::to_string(*contentLength);
  contentLength = n;
  return "";
}

// The deepest nesting of arrays and objects in `body`, counting only up to limit + 1.
size_t nestingDepth(std::string_view body, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (const char c : body) {
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      }
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::optional<int64_t> integerMember(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (it->is_number_integer()) return it->get<int64_t>();
  return std::nullopt;
}

bool hasString(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string();
}

// What keeps `message` (an object) from being a message of the base protocol; empty if nothing.
std::string messageProblem(const nlohmann::json& message) {
  if (!integerMember(message, "seq")) return "'seq' is missing or not an integer";
  if (!hasString(message, "type")) return "'type' is missing or not a string";
  const std::string& type = message["type"].get_ref<const std::string&>();
  if (type == "request") {
    if (!hasString(message, "command")) return "a request's 'command' is missing or not a string";
  } else if (type == "response") {
    if (!integerMember(message, "request_seq")) return "a response's 'request_seq' is missing or not an integer";
    const auto success = message.find("success");
    if (success == message.end() || !success->is_boolean()) return "a response's 'success' is missing or not a boolean";
    if (!hasString(message, "command")) return "a response's 'command' is missing or not a string";
  } else if (type == "event") {
    if (!hasString(message, "event")) return "an event's 'event' is missing or not a string";
  } else {
    return "'type' " + shown(type) + " is not request, response or event";
  }
  return "";
}

}  // namespace

std::string FramingError::toString() const {
  std::string s = "byte " + std::to_string(offset) + ": " + what;
  if (seq) s += " (seq " + std::to_string(*seq) + ")";
  return s;
}

bool isValidUtf8(std::string_view s, size_t* errorAt) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      if (errorAt) *errorAt = i;
      return false;
    }
    bool ok = i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      if (errorAt) *errorAt = i;
      return false;
    }
    i += len;
  }
  return true;
}

MessageReader::MessageReader(Stream& stream, ReaderLimits limits, BodyProtocol protocol)
    : stream_(stream), limits_(limits), protocol_(protocol) {}

bool MessageReader::fill() {
  if (eof_) return false;
  if (pos_ > 0 && (pos_ >= buf_.size() || pos_ > kReadPiece)) {
    buf_.erase(0, pos_);
    base_ += pos_;
    pos_ = 0;
  }
  const size_t old = buf_.size();
  buf_.resize(old + kReadPiece);
  std::string error;
  const ptrdiff_t n = stream_.read(std::span<char>(buf_.data() + old, kReadPiece), error);
  buf_.resize(old + static_cast<size_t>(std::max<ptrdiff_t>(n, 0)));
  if (n <= 0) {
    eof_ = true;
    if (n < 0) readError_ = error.empty() ? "read failed" : error;
    return false;
  }
  return true;
}

ReadResult MessageReader::error(std::string what, uint64_t offset, std::optional<int64_t> seq) const {
  ReadResult r;
  r.kind = ReadResult::Kind::Error;
  r.error = FramingError{std::move(what), offset, seq};
  return r;
}

ReadResult MessageReader::next() {
  for (;;) {
    if (endReturned_) {
      ReadResult end;
      end.endError = readError_;
      return end;
    }
    switch (state_) {
      case State::Search: {
        const size_t at = findContentLength(buf_, pos_, buf_.size(), false);
        if (at != std::string_view::npos) {
          pos_ = at;
          state_ = State::Header;
          break;
        }
        const size_t keep = kContentLength.size() - 1;  // a match may start in the last 13 bytes
        if (available() > keep) pos_ = buf_.size() - keep;
        if (!fill()) {
          pos_ = buf_.size();  // at most 13 bytes that are no header: part of the error reported
          state_ = State::Header;
        }
        break;
      }
      case State::Header: {
        if (available() == 0 && !fill()) {
          endReturned_ = true;
          break;
        }
        return readHeaderAndBody();
      }
    }
  }
}

void MessageReader::resyncAfterLine(uint64_t headerStart, uint64_t lineStart, uint64_t lineEnd, bool lineComplete) {
  const size_t to = index(lineEnd);
  const size_t at = findContentLength(buf_, index(lineStart) + 1, to, true);
  if (at != std::string_view::npos) {
    pos_ = at;
    state_ = State::Header;
    return;
  }
  if (lineComplete) {
    pos_ = to + 1;  // after the line break
  } else {
    // The header hit the limit inside this line: search on from the last 13 bytes examined (a
    // Content-Length may start there), but at least one byte after the header's start.
    const size_t keep = kContentLength.size() - 1;
    pos_ = std::max(index(headerStart) + 1, to - std::min(to, keep));
  }
  state_ = State::Search;
}

ReadResult MessageReader::readHeaderAndBody() {
  // The header, line by line; every complete line is checked at once. pos_ stays at the header's
  // start (fill() keeps everything from pos_ on) until the header is done with.
  uint64_t start = position();
  uint64_t lineStart = start;
  uint64_t scanned = start;  // line breaks looked for up to here
  bool anyLine = false;
  std::optional<uint64_t> contentLength;
  uint64_t bodyStart = 0;
  for (;;) {
    const uint64_t limitEnd = start + limits_.maxHeaderBytes;
    const uint64_t bufEnd = base_ + buf_.size();
    const uint64_t searchEnd = std::min(bufEnd, limitEnd);
    const std::string_view window =
        scanned < searchEnd ? std::string_view(buf_).substr(index(scanned), static_cast<size_t>(searchEnd - scanned))
                            : std::string_view();
    const size_t lf = window.find('\n');
    if (lf != std::string_view::npos) {
      const uint64_t lfOffset = scanned + lf;
      std::string_view line(buf_.data() + index(lineStart), static_cast<size_t>(lfOffset - lineStart));
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      scanned = lfOffset + 1;
      if (line.empty()) {
        if (!anyLine) {  // a blank line before the header: skipped
          pos_ = index(scanned);
          start = lineStart = scanned;
          continue;
        }
        if (!contentLength) {
          pos_ = index(scanned);
          state_ = State::Search;
          return error("header without Content-Length", start);
        }
        bodyStart = scanned;
        break;
      }
      const std::string problem = checkHeaderLine(line, contentLength);
      if (!problem.empty()) {
        resyncAfterLine(start, lineStart, lfOffset, true);
        return error(problem, start);
      }
      anyLine = true;
      lineStart = scanned;
      continue;
    }
    scanned = searchEnd;
    if (bufEnd >= limitEnd) {
      resyncAfterLine(start, lineStart, limitEnd, false);
      return error("header longer than " + std::to_string(limits_.maxHeaderBytes) + " bytes", start);
    }
    if (!fill()) {
      const uint64_t bytes = base_ + buf_.size() - start;
      pos_ = buf_.size();
      if (bytes == 0) {  // only blank lines before the end
        endReturned_ = true;
        ReadResult end;
        end.endError = readError_;
        return end;
      }
      return error("the stream ended inside a header (" + std::to_string(bytes) + " bytes)", start);
    }
  }

  pos_ = index(bodyStart);
  const uint64_t length = *contentLength;
  if (length > limits_.maxBodyBytes) {
    // No client sends such a body: the length is garbage, so the body's end is unknown too. Look
    // for the next header from here, as after a bad header (the session must not wait for
    // 10^18 bytes while the client's next requests sit behind them).
    state_ = State::Search;
    return error("Content-Length " + std::to_string(length) + " is over the limit of " +
                     std::to_string(limits_.maxBodyBytes) + " bytes: looking for the next message",
                 start);
  }
  while (available() < length) {
    if (!fill()) {
      const size_t got = available();
      pos_ = buf_.size();
      return error(
          "the stream ended after " + std::to_string(got) + " of the " + std::to_string(length) + " body bytes", start);
    }
  }
  const std::string_view body(buf_.data() + pos_, static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return validateBody(body, start);
}

ReadResult MessageReader::validateBody(std::string_view body, uint64_t messageOffset) const {
  size_t bad = 0;
  if (!isValidUtf8(body, &bad))
    return error("the body is not valid UTF-8 (at body byte " + std::to_string(bad) + ")", messageOffset);
  if (nestingDepth(body, limits_.maxNestingDepth) > limits_.maxNestingDepth)
    return error("the body nests arrays and objects deeper than " + std::to_string(limits_.maxNestingDepth),
                 messageOffset);
  ReadResult r;
  try {
    r.message = nlohmann::json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    // Where, in the body's own terms; the library's message names its internals.
    return error("the body is not JSON: syntax error at byte " + std::to_string(e.byte) + " of the body",
                 messageOffset);
  } catch (const nlohmann::json::exception&) {
    return error("the body is not JSON", messageOffset);
  }
  if (!r.message.is_object())
    return error(std::string("the body is JSON but not an object (") + r.message.type_name() + ")", messageOffset);
  const std::string problem = protocol_ == BodyProtocol::Dap ? messageProblem(r.message) : std::string();
  if (!problem.empty())
    return error("the body is not a message: " + problem, messageOffset, integerMember(r.message, "seq"));
  r.kind = ReadResult::Kind::Message;
  return r;
}

}  // namespace scanback::net
