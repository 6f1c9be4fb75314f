// The DAP transport: streams (MemoryPipe, FdStream, TCP), the framing reader with every kind of
// malformed input and its resynchronisation, the thread-safe writer, and a fuzz-style test that
// random and mutated streams never crash, hang or loop.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "net/listener.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"
#include "tests/support/wait.h"

namespace scanback::net {
namespace {

using json = nlohmann::json;
using Rng = std::mt19937_64;

uint64_t uniform(Rng& rng, uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); }

std::string framed(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

json request(int64_t seq, const std::string& command = "threads") {
  return {{"seq", seq}, {"type", "request"}, {"command", command}};
}

std::string framedRequest(int64_t seq, const std::string& command = "threads") {
  return framed(request(seq, command).dump());
}

// A stream over fixed bytes, handed out in pieces whose sizes `piece` chooses; then the end (or a
// read error). Writes are collected.
class ScriptedStream : public Stream {
 public:
  explicit ScriptedStream(
      std::string bytes, std::function<size_t()> piece = [] { return size_t(1) << 20; })
      : bytes_(std::move(bytes)), piece_(std::move(piece)) {}
  std::string failWith;  // when set, the end of the bytes is a read error with this text

  [[nodiscard]] ptrdiff_t read(std::span<char> buffer, std::string& error) override {
    ++reads;
    if (pos_ == bytes_.size()) {
      if (!failWith.empty()) {
        error = failWith;
        return -1;
      }
      return 0;
    }
    const size_t n = std::min({buffer.size(), std::max<size_t>(piece_(), 1), bytes_.size() - pos_});
    std::memcpy(buffer.data(), bytes_.data() + pos_, n);
    pos_ += n;
    return static_cast<ptrdiff_t>(n);
  }
  bool write(std::string_view data, std::string&) override {
    written += data;
    return true;
  }
  void close() override {}

  std::string written;
  size_t reads = 0;

 private:
  std::string bytes_;
  size_t pos_ = 0;
  std::function<size_t()> piece_;
};

// Everything the reader returns until the end. Fails the test if there are more results than the
// resynchronisation rule allows (bytes + 2): a reader that loops without consuming is caught here.
std::vector<ReadResult> readAll(Stream& stream, size_t streamBytes, ReaderLimits limits = {}) {
  MessageReader reader(stream, limits);
  std::vector<ReadResult> out;
  for (;;) {
    out.push_back(reader.next());
    if (out.back().isEnd()) break;
    if (out.size() > streamBytes + 2) {
      ADD_FAILURE() << "more than " << streamBytes + 2 << " results from " << streamBytes << " bytes";
      break;
    }
  }
  EXPECT_TRUE(reader.next().isEnd());  // and it stays at the end
  return out;
}

std::vector<ReadResult> readAll(
    const std::string& bytes, ReaderLimits limits = {},
    std::function<size_t()> piece = [] { return size_t(1) << 20; }) {
  ScriptedStream stream(bytes, std::move(piece));
  return readAll(stream, bytes.size(), limits);
}

// "msg 3" for a message with seq 3, "error" for a framing error, "end" (or "end: why").
std::vector<std::string> kinds(const std::vector<ReadResult>& results) {
  std::vector<std::string> out;
  for (const ReadResult& r : results) {
    if (r.isMessage()) {
      out.push_back("msg " + std::to_string(r.message["seq"].get<int64_t>()));
    } else if (r.isError()) {
      out.push_back("error");
    } else {
      out.push_back(r.endError.empty() ? "end" : "end: " + r.endError);
    }
  }
  return out;
}

using Kinds = std::vector<std::string>;

// The first error's text (for checking what was said).
std::string firstError(const std::vector<ReadResult>& results) {
  for (const ReadResult& r : results)
    if (r.isError()) return r.error.what;
  return "";
}

// ---------------------------------------------------------------- well-formed streams

TEST(NetMessageReader, ReadsMessagesWhateverTheReadSizes) {
  std::string bytes;
  std::vector<json> sent;
  for (int i = 1; i <= 20; ++i) {
    json m = request(i, "evaluate");
    m["arguments"] = {{"expression", std::string(static_cast<size_t>(i * 37), 'x')}, {"frameId", i}};
    sent.push_back(m);
    bytes += framed(m.dump());
  }
  const std::vector<std::function<size_t()>> pieces = {
      [] { return size_t(1) << 20; },  // all at once: several messages in one read
      [] { return size_t(1); },        // byte by byte
      [] { return size_t(7); },
      [rng = std::make_shared<Rng>(42)] { return static_cast<size_t>(uniform(*rng, 1, 300)); },
  };
  for (size_t p = 0; p < pieces.size(); ++p) {
    const auto results = readAll(bytes, {}, pieces[p]);
    ASSERT_EQ(results.size(), sent.size() + 1) << "piece pattern " << p;
    for (size_t i = 0; i < sent.size(); ++i) {
      ASSERT_TRUE(results[i].isMessage()) << "piece pattern " << p << ": " << results[i].error.toString();
      EXPECT_EQ(results[i].message, sent[i]);
    }
    EXPECT_TRUE(results.back().isEnd());
    EXPECT_EQ(results.back().endError, "");
  }
}

TEST(NetMessageReader, SeveralMessagesInOneReadTakeOneReadCall) {
  const std::string bytes = framedRequest(1) + framedRequest(2) + framedRequest(3);
  ScriptedStream stream(bytes);
  MessageReader reader(stream);
  EXPECT_EQ(reader.next().message["seq"], 1);
  EXPECT_EQ(reader.next().message["seq"], 2);
  EXPECT_EQ(reader.next().message["seq"], 3);
  EXPECT_EQ(stream.reads, 1u);
  EXPECT_EQ(reader.position(), bytes.size());
  EXPECT_TRUE(reader.next().isEnd());
}

TEST(NetMessageReader, ReturnsAMessageWithoutWaitingForMore) {
  auto [client, server] = MemoryPipe::pair();
  std::string error;
  ASSERT_TRUE(client->write(framedRequest(1), error));
  MessageReader reader(*server);
  const ReadResult r = reader.next();  // the pipe stays open: this must not wait for more bytes
  ASSERT_TRUE(r.isMessage());
  EXPECT_EQ(r.message["seq"], 1);
  client->close();
  EXPECT_TRUE(reader.next().isEnd());
}

TEST(NetMessageReader, OtherHeaderFieldsAndLenientLineEnds) {
  const std::string body = request(1).dump();
  const std::string bytes =
      "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nX-Other:\r\n\r\n" + body +                                          // fields before and after
      "content-length:" + std::to_string(body.size()) + "  \r\n\r\n" + body +  // any case, spaces
      "Content-Length: \t" + std::to_string(body.size()) + "\n\n" + body +     // bare LF
      "\r\n\r\n" + framed(body) +                                              // blank lines before a header
      "Content-Length: " + std::to_string(body.size()) + "\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body +  // the same length twice
      "Content-Length: 000" + std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_EQ(kinds(readAll(bytes)), (Kinds{"msg 1", "msg 1", "msg 1", "msg 1", "msg 1", "msg 1", "end"}));
}

TEST(NetMessageReader, UnicodeBodiesCountBytes) {
  const std::vector<std::string> texts = {"caf\u00e9",
                                          "\u4e2d\u6587\u5b57",
                                          "\U0001F600 emoji",
                                          "\uFFFF\u0080",
                                          std::string("nul \\u0000 escaped"),
                                          "\u00e9\u00e9\u00e9\u00e9"};
  std::string bytes;
  for (size_t i = 0; i < texts.size(); ++i) {
    json m = {{"seq", i + 1}, {"type", "event"}, {"event", "output"}, {"body", {{"output", texts[i]}}}};
    bytes += framed(m.dump());  // dump() writes UTF-8 as is: Content-Length counts bytes
  }
  bytes += framed(R"({"seq":99,"type":"event","event":"output","body":{"output":"\u00e9\ud83d\ude00"}})");
  const auto results = readAll(bytes, {}, [] { return size_t(3); });  // pieces cut inside characters
  ASSERT_EQ(results.size(), texts.size() + 2);
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_TRUE(results[i].isMessage()) << results[i].error.toString();
    EXPECT_EQ(results[i].message["body"]["output"], texts[i]);
  }
  EXPECT_EQ(results[texts.size()].message["body"]["output"], "\u00e9\U0001F600");
}

// ---------------------------------------------------------------- malformed headers

// Each bad header is followed by a good message, which must still be read.
TEST(NetMessageReader, BadHeadersAreReportedAndTheNextMessageIsRead) {
  const std::string body = request(5).dump();
  const std::map<std::string, std::string> cases = {
      {"no Content-Length", "Content-Type: x\r\n\r\n" + body},
      {"only a blank line after junk", "hello: world\r\n\r\n"},
      {"non-numeric", "Content-Length: abc\r\n\r\n" + body},
      {"trailing junk", "Content-Length: 12x\r\n\r\n" + body},
      {"two numbers", "Content-Length: 1 2\r\n\r\n" + body},
      {"negative", "Content-Length: -5\r\n\r\n" + body},
      {"plus sign", "Content-Length: +5\r\n\r\n" + body},
      {"hex", "Content-Length: 0x10\r\n\r\n" + body},
      {"empty", "Content-Length:\r\n\r\n" + body},
      {"overflowing uint64", "Content-Length: 99999999999999999999999\r\n\r\n" + body},
      {"2^63", "Content-Length: 9223372036854775808\r\n\r\n" + body},
      {"2^64", "Content-Length: 18446744073709551616\r\n\r\n" + body},
      {"conflicting", "Content-Length: 5\r\nContent-Length: 6\r\n\r\n" + body},
      {"no colon", "Content-Length 5\r\n\r\n" + body},
      {"space in name", "Content Length: 5\r\n\r\n" + body},
      {"space before colon", "Content-Length : 5\r\n\r\n" + body},
      {"empty name", ": 5\r\n\r\n" + body},
      {"raw JSON without header", body},
      {"NUL bytes", std::string("Content-Length: 5\0\0\r\n\r\n", 23) + body},
      {"binary", std::string("\x00\xff\xfe\r\n\x01\r\n\r\n", 10)},
  };
  for (const auto& [name, bad] : cases) {
    const std::string bytes = bad + framedRequest(1) + framedRequest(2);
    const auto results = readAll(bytes);
    EXPECT_EQ(kinds(results), (Kinds{"error", "msg 1", "msg 2", "end"})) << name;
    EXPECT_EQ(results[0].error.offset, 0u) << name;
    EXPECT_FALSE(results[0].error.seq) << name;
    // The same byte by byte.
    EXPECT_EQ(kinds(readAll(bytes, {}, [] { return size_t(1); })), (Kinds{"error", "msg 1", "msg 2", "end"})) << name;
  }
}

TEST(NetMessageReader, ErrorTextsSayWhatWasWrong) {
  EXPECT_EQ(firstError(readAll("Content-Type: x\r\n\r\n")), "header without Content-Length");
  EXPECT_EQ(firstError(readAll("Content-Length: -5\r\n\r\n")), "Content-Length '-5' is negative");
  EXPECT_EQ(firstError(readAll("Content-Length: abc\r\n\r\n")), "Content-Length 'abc' is not a decimal number");
  EXPECT_EQ(firstError(readAll("Content-Length: 9223372036854775808\r\n\r\n")),
            "Content-Length '9223372036854775808' is too large (over 2^63 - 1)");
  EXPECT_EQ(firstError(readAll("Content-Length: 5\r\nContent-Length: 6\r\n\r\n")),
            "Content-Length 6 contradicts an earlier Content-Length 5");
  EXPECT_EQ(firstError(readAll("junk\r\n\r\n")), "header line 'junk' is not 'name: value'");
  EXPECT_EQ(firstError(readAll("Content-Length: 100000000\r\n\r\n")),
            "Content-Length 100000000 is over the limit of 67108864 bytes: looking for the next message");
}

TEST(NetMessageReader, ErrorsCarryTheOffsetOfTheirMessage) {
  const std::string first = framedRequest(1);
  const std::string bad = "Content-Length: x\r\n\r\n";
  const std::string bytes = first + bad + framedRequest(2) + framed("{}") + framedRequest(3);
  const auto results = readAll(bytes);
  ASSERT_EQ(kinds(results), (Kinds{"msg 1", "error", "msg 2", "error", "msg 3", "end"}));
  EXPECT_EQ(results[1].error.offset, first.size());
  EXPECT_EQ(results[3].error.offset, first.size() + bad.size() + framedRequest(2).size());
  EXPECT_EQ(results[1].error.toString(),
            "byte " + std::to_string(first.size()) + ": Content-Length 'x' is not a decimal number");
}

TEST(NetMessageReader, HeaderOverTheLimit) {
  ReaderLimits limits;
  // A line longer than the limit, with a line break after it.
  std::string bytes = "X-Junk: " + std::string(20000, 'a') + "\r\n\r\n" + framedRequest(1);
  auto results = readAll(bytes, limits);
  EXPECT_EQ(kinds(results), (Kinds{"error", "msg 1", "end"}));
  EXPECT_EQ(firstError(results), "header longer than 8192 bytes");
  // No line break at all, and pieces of every size.
  bytes = std::string(100000, 'z') + framedRequest(1) + framedRequest(2);
  EXPECT_EQ(kinds(readAll(bytes, limits, [] { return size_t(1000); })), (Kinds{"error", "msg 1", "msg 2", "end"}));
  // Many short lines, none blank.
  bytes.clear();
  for (int i = 0; i < 2000; ++i) bytes += "X-Field-" + std::to_string(i) + ": v\r\n";
  bytes += "\r\n" + framedRequest(1);
  EXPECT_EQ(kinds(readAll(bytes, limits)), (Kinds{"error", "msg 1", "end"}));
  // Just under the limit is fine.
  limits.maxHeaderBytes = 64;
  const std::string body = request(7).dump();
  std::string header = "Content-Length: " + std::to_string(body.size()) + "\r\nX: ";
  header += std::string(64 - header.size() - 4, 'p') + "\r\n\r\n";
  ASSERT_EQ(header.size(), 64u);
  EXPECT_EQ(kinds(readAll(header + body, limits)), (Kinds{"msg 7", "end"}));
  header.insert(header.size() - 4, "p");  // one byte more
  EXPECT_EQ(kinds(readAll(header + body + framedRequest(8), limits)), (Kinds{"error", "msg 8", "end"}));
}

TEST(NetMessageReader, ContentLengthCutByTheHeaderLimitIsStillFound) {
  ReaderLimits limits;
  limits.maxHeaderBytes = 100;
  // Junk without a line break, ending so that the next header straddles the 100th byte.
  for (size_t junk = 80; junk <= 110; ++junk) {
    const std::string bytes = std::string(junk, 'j') + framedRequest(1);
    EXPECT_EQ(kinds(readAll(bytes, limits)), (Kinds{"error", "msg 1", "end"})) << junk;
    EXPECT_EQ(kinds(readAll(bytes, limits, [] { return size_t(1); })), (Kinds{"error", "msg 1", "end"})) << junk;
  }
}

// ---------------------------------------------------------------- over-limit and huge lengths

TEST(NetMessageReader, BodyOverTheLimitIsPassedOverAndTheNextMessageRead) {
  ReaderLimits limits;
  limits.maxBodyBytes = 100;
  const std::string big = R"({"seq":1,"type":"request","command":")" + std::string(5000, 'b') + "\"}";
  const std::string bytes = framed(big) + framedRequest(2) + framed(std::string(100000, '{')) + framedRequest(3);
  for (size_t piece : {size_t(1) << 20, size_t(1), size_t(33)}) {
    const auto results = readAll(bytes, limits, [=] { return piece; });
    EXPECT_EQ(kinds(results), (Kinds{"error", "msg 2", "error", "msg 3", "end"})) << piece;
    EXPECT_EQ(firstError(results), "Content-Length " + std::to_string(big.size()) +
                                       " is over the limit of 100 bytes: looking for the next message");
  }
  // Exactly at the limit is fine.
  limits.maxBodyBytes = request(4).dump().size();
  EXPECT_EQ(kinds(readAll(framedRequest(4), limits)), (Kinds{"msg 4", "end"}));
}

// An over-limit body is searched in bounded pieces, never stored: a reader with a 1 KiB limit
// passes over a 64 MiB body (its memory would show under ASan if it were kept; here it must be quick).
TEST(NetMessageReader, SkippingAHugeBodyStoresNothing) {
  class Zeros : public Stream {  // an endless-looking stream of a given length, then a message
   public:
    explicit Zeros(uint64_t n) : left_(n), tail_(framedRequest(9)) {}
    ptrdiff_t read(std::span<char> buffer, std::string&) override {
      maxAsked = std::max(maxAsked, buffer.size());
      if (left_ > 0) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left_, buffer.size()));
        std::memset(buffer.data(), 0, n);
        left_ -= n;
        return static_cast<ptrdiff_t>(n);
      }
      const size_t n = std::min(buffer.size(), tail_.size() - tailPos_);
      std::memcpy(buffer.data(), tail_.data() + tailPos_, n);
      tailPos_ += n;
      return static_cast<ptrdiff_t>(n);
    }
    bool write(std::string_view, std::string&) override { return true; }
    void close() override {}
    size_t maxAsked = 0;

   private:
    uint64_t left_;
    std::string tail_;
    size_t tailPos_ = 0;
  };
  const uint64_t bodySize = 64ull << 20;
  const std::string header = "Content-Length: " + std::to_string(bodySize) + "\r\n\r\n";
  class Prefixed : public Stream {
   public:
    Prefixed(std::string prefix, Stream& rest) : prefix_(std::move(prefix)), rest_(rest) {}
    [[nodiscard]] ptrdiff_t read(std::span<char> buffer, std::string& error) override {
      if (pos_ < prefix_.size()) {
        const size_t n = std::min(buffer.size(), prefix_.size() - pos_);
        std::memcpy(buffer.data(), prefix_.data() + pos_, n);
        pos_ += n;
        return static_cast<ptrdiff_t>(n);
      }
      return rest_.read(buffer, error);
    }
    bool write(std::string_view, std::string&) override { return true; }
    void close() override {}

   private:
    std::string prefix_;
    size_t pos_ = 0;
    Stream& rest_;
  };
  Zeros zeros(bodySize);
  Prefixed stream(header, zeros);
  ReaderLimits limits;
  limits.maxBodyBytes = 1024;
  MessageReader reader(stream, limits);
  EXPECT_TRUE(reader.next().isError());
  const ReadResult r = reader.next();
  ASSERT_TRUE(r.isMessage()) << r.error.toString();
  EXPECT_EQ(r.message["seq"], 9);
  EXPECT_LE(zeros.maxAsked, 64u * 1024);
  EXPECT_TRUE(reader.next().isEnd());
}

// A huge Content-Length is reported as soon as the header is read — the reader does not first
// try to read 10^18 bytes — and the good message after it is read: the session goes on.
TEST(NetMessageReader, HugeContentLengthFollowedByAGoodMessage) {
  for (const std::string length : {"1000000000000000000", "9223372036854775807"}) {
    auto [client, server] = MemoryPipe::pair();
    std::string error;
    ASSERT_TRUE(client->write("Content-Length: " + length + "\r\n\r\n" + framedRequest(1), error));
    MessageReader reader(*server);
    const ReadResult first = reader.next();  // the client has not closed: no waiting for the body
    ASSERT_TRUE(first.isError());
    EXPECT_EQ(first.error.what,
              "Content-Length " + length + " is over the limit of 67108864 bytes: looking for the next message");
    const ReadResult second = reader.next();
    ASSERT_TRUE(second.isMessage()) << second.error.toString();
    EXPECT_EQ(second.message["seq"], 1);
    client->close();
    EXPECT_TRUE(reader.next().isEnd());
  }
  // 2^63 and more do not fit the length at all: a bad header, and the message after it is read.
  for (const std::string& length :
       std::vector<std::string>{"9223372036854775808", "18446744073709551615", std::string(400, '9')}) {
    EXPECT_EQ(kinds(readAll("Content-Length: " + length + "\r\n\r\n" + framedRequest(1))),
              (Kinds{"error", "msg 1", "end"}))
        << length;
  }
}

// ---------------------------------------------------------------- malformed bodies

TEST(NetMessageReader, BadBodiesAreReportedAndOnlyThatBodyIsLost) {
  const std::map<std::string, std::string> cases = {
      {"empty", ""},
      {"not JSON", "{\"seq\":1,"},
      {"trailing garbage", R"({"seq":1,"type":"request","command":"x"} x)"},
      {"two values", R"({"seq":1}{"seq":2})"},
      {"invalid UTF-8", "{\"seq\":1,\"type\":\"event\",\"event\":\"\xff\"}"},
      {"overlong UTF-8", "{\"seq\":1,\"type\":\"event\",\"event\":\"\xc0\xaf\"}"},
      {"UTF-8 surrogate", "{\"seq\":1,\"type\":\"event\",\"event\":\"\xed\xa0\x80\"}"},
      {"UTF-8 above U+10FFFF", "{\"seq\":1,\"type\":\"event\",\"event\":\"\xf4\x90\x80\x80\"}"},
      {"truncated UTF-8", "{\"seq\":1,\"type\":\"event\",\"event\":\"\xe4\xb8\"}"},
      {"array", "[1,2,3]"},
      {"number", "42"},
      {"string", "\"request\""},
      {"null", "null"},
      {"number overflow", R"({"seq":1,"type":"event","event":"x","body":1e999})"},
      {"control character", "{\"seq\":1,\"type\":\"event\",\"event\":\"a\x01\"}"},
      {"too deep",
       R"({"seq":1,"type":"event","event":"x","body":)" + std::string(300, '[') + std::string(300, ']') + "}"},
  };
  for (const auto& [name, body] : cases) {
    const auto results = readAll(framedRequest(1) + framed(body) + framedRequest(2));
    EXPECT_EQ(kinds(results), (Kinds{"msg 1", "error", "msg 2", "end"})) << name;
    EXPECT_EQ(results[1].error.offset, framedRequest(1).size()) << name;
    EXPECT_FALSE(results[1].error.seq) << name;
  }
  EXPECT_EQ(firstError(readAll(framed("{\"a\":\"\xff\"}"))), "the body is not valid UTF-8 (at body byte 6)");
  EXPECT_EQ(firstError(readAll(framed("[1]"))), "the body is JSON but not an object (array)");
  // Where the syntax breaks, in the body's terms (the JSON library's own text names its internals).
  EXPECT_EQ(firstError(readAll(framed("{\"seq\":1,x}"))), "the body is not JSON: syntax error at byte 10 of the body");
  EXPECT_EQ(firstError(readAll(framed(R"({"seq":1,"type":"event","event":"x","body":1e999})"))).find("json.exception"),
            std::string::npos);
  EXPECT_EQ(firstError(readAll(framed(std::string(300, '[')))), "the body nests arrays and objects deeper than 256");
  // 256 levels are allowed; brackets in strings do not count.
  const std::string deep = R"({"seq":1,"type":"event","event":"x","s":"[[[[{{{{","body":)" + std::string(255, '[') +
                           std::string(255, ']') + "}";
  EXPECT_EQ(kinds(readAll(framed(deep))), (Kinds{"msg 1", "end"}));
}

TEST(NetMessageReader, ObjectsThatAreNotMessagesReportTheirSeq) {
  const std::map<std::string, std::pair<std::string, std::optional<int64_t>>> cases = {
      {"no seq", {R"({"type":"request","command":"next"})", std::nullopt}},
      {"seq a string", {R"({"seq":"7","type":"request","command":"next"})", std::nullopt}},
      {"seq a float", {R"({"seq":7.5,"type":"request","command":"next"})", std::nullopt}},
      {"seq too large", {R"({"seq":18446744073709551615,"type":"request","command":"next"})", std::nullopt}},
      {"no type", {R"({"seq":7,"command":"next"})", 7}},
      {"type unknown", {R"({"seq":7,"type":"notification","command":"next"})", 7}},
      {"type a number", {R"({"seq":7,"type":1})", 7}},
      {"request without command", {R"({"seq":7,"type":"request"})", 7}},
      {"request with a numeric command", {R"({"seq":7,"type":"request","command":3})", 7}},
      {"response without request_seq", {R"({"seq":7,"type":"response","success":true,"command":"x"})", 7}},
      {"response without success", {R"({"seq":7,"type":"response","request_seq":1,"command":"x"})", 7}},
      {"response without command", {R"({"seq":7,"type":"response","request_seq":1,"success":true})", 7}},
      {"event without event", {R"({"seq":-3,"type":"event"})", -3}},
  };
  for (const auto& [name, c] : cases) {
    const auto results = readAll(framed(c.first) + framedRequest(2));
    ASSERT_EQ(kinds(results), (Kinds{"error", "msg 2", "end"})) << name;
    EXPECT_EQ(results[0].error.seq, c.second) << name;
    EXPECT_EQ(results[0].error.what.rfind("the body is not a message: ", 0), 0u) << results[0].error.what;
  }
  EXPECT_EQ(firstError(readAll(framed(R"({"seq":7,"type":"request"})"))),
            "the body is not a message: a request's 'command' is missing or not a string");
  const auto results = readAll(framed(R"({"seq":7,"type":"request"})"));
  EXPECT_EQ(results[0].error.toString(),
            "byte 0: the body is not a message: a request's 'command' is missing or not a string (seq 7)");
  // Valid messages of each type.
  const std::string response = R"({"seq":3,"type":"response","request_seq":2,"success":false,"command":"x"})";
  const std::string event = R"({"seq":4,"type":"event","event":"initialized"})";
  EXPECT_EQ(kinds(readAll(framed(response) + framed(event))), (Kinds{"msg 3", "msg 4", "end"}));
}

// A client that counts characters instead of UTF-8 bytes sends a Content-Length that is too short
// (or, with its own bug, too long). Too short: the body's tail is in front of the next header, on
// the same line, and that next message is kept. Too long: the next header's start is eaten.
TEST(NetMessageReader, WrongLengthsResynchroniseOnTheNextHeader) {
  json m = request(1, "evaluate");
  m["arguments"] = {{"expression", "\u00e9\u00e9\u00e9"}};
  const std::string utf8 = m.dump();
  const std::string shortHeader = "Content-Length: " + std::to_string(utf8.size() - 3) + "\r\n\r\n";
  EXPECT_EQ(kinds(readAll(shortHeader + utf8 + framedRequest(2) + framedRequest(3))),
            (Kinds{"error", "error", "msg 2", "msg 3", "end"}));
  const std::string longHeader = "Content-Length: " + std::to_string(utf8.size() + 5) + "\r\n\r\n";
  EXPECT_EQ(kinds(readAll(longHeader + utf8 + framedRequest(2) + framedRequest(3))),
            (Kinds{"error", "error", "msg 3", "end"}));
  // A header whose blank line is missing: the next message is found on the body's line.
  const std::string noBlank = "Content-Length: " + std::to_string(utf8.size()) + "\r\n" + utf8;
  EXPECT_EQ(kinds(readAll(noBlank + framedRequest(2) + framedRequest(3))), (Kinds{"error", "msg 2", "msg 3", "end"}));
}

// ---------------------------------------------------------------- truncated streams, read errors

TEST(NetMessageReader, TruncatedStreams) {
  const std::string whole = framedRequest(1);
  const size_t headerSize = whole.find("\r\n\r\n") + 4;
  EXPECT_EQ(kinds(readAll("")), (Kinds{"end"}));
  EXPECT_EQ(kinds(readAll("\r\n\r\n")), (Kinds{"end"}));  // blank lines only
  for (size_t cut = 1; cut < whole.size(); ++cut) {
    const auto results = readAll(framedRequest(7) + whole.substr(0, cut), {}, [] { return size_t(5); });
    EXPECT_EQ(kinds(results), (Kinds{"msg 7", "error", "end"})) << cut;
    const std::string what = results[1].error.what;
    if (cut < headerSize) {
      EXPECT_EQ(what, "the stream ended inside a header (" + std::to_string(cut) + " bytes)") << cut;
    } else {
      EXPECT_EQ(what, "the stream ended after " + std::to_string(cut - headerSize) + " of the " +
                          std::to_string(whole.size() - headerSize) + " body bytes")
          << cut;
    }
  }
}

TEST(NetMessageReader, ReadErrorEndsTheStreamWithItsText) {
  ScriptedStream stream(framedRequest(1) + "Content-Len");
  stream.failWith = "connection reset";
  const auto results = readAll(stream, 100);
  EXPECT_EQ(kinds(results), (Kinds{"msg 1", "error", "end: connection reset"}));
}

// ---------------------------------------------------------------- adversarial resynchronisation

// Streams built to make a naive resynchronisation loop or go quadratic: the rule bounds the
// number of results (at most bytes + 2, checked by readAll) and the reader stays fast.
TEST(NetMessageReader, AdversarialStreamsStayLinear) {
  std::vector<std::string> streams;
  std::string s;
  for (int i = 0; i < 20000; ++i) s += "Content-Length";
  streams.push_back(s + framedRequest(1));
  s.clear();
  for (int i = 0; i < 20000; ++i) s += "Content-Length: x";
  streams.push_back(s + "\r\n" + framedRequest(1));
  s.clear();
  for (int i = 0; i < 20000; ++i) s += "Content-Length: x\n";
  streams.push_back(s + framedRequest(1));
  s.clear();
  for (int i = 0; i < 20000; ++i) s += "Content-Length: 0\r\n\r\n";
  streams.push_back(s + framedRequest(1));
  streams.push_back(std::string(300000, '\n') + framedRequest(1));
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& bytes : streams) {
    const auto results = readAll(bytes);
    ASSERT_GE(results.size(), 2u);
    EXPECT_TRUE(results[results.size() - 2].isMessage());
    EXPECT_TRUE(results.back().isEnd());
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// ---------------------------------------------------------------- fuzz-style

std::string randomBytes(Rng& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(uniform(rng, 0, 255));
  return s;
}

std::string randomMessage(Rng& rng, int64_t seq) {
  static const char* pieces[] = {"a", "\u00e9", "\u4e2d", "\U0001F600", "\"", "\\", "\n", "Content-Length: 3\r\n\r\n"};
  std::string text;
  for (uint64_t i = uniform(rng, 0, 12); i > 0; --i) text += pieces[uniform(rng, 0, 7)];
  json m = {
      {"seq", seq}, {"type", "event"}, {"event", "output"}, {"body", {{"output", text}, {"n", uniform(rng, 0, 1000)}}}};
  return m.dump();
}

// Applies one random mutation to a framed stream.
void mutate(Rng& rng, std::string& s) {
  if (s.empty()) {
    s = randomBytes(rng, uniform(rng, 1, 8));
    return;
  }
  const size_t at = static_cast<size_t>(uniform(rng, 0, s.size() - 1));
  switch (uniform(rng, 0, 7)) {
    case 0:  // flip a byte
      s[at] = static_cast<char>(s[at] ^ static_cast<char>(1u << uniform(rng, 0, 7)));
      break;
    case 1:  // insert random bytes
      s.insert(at, randomBytes(rng, uniform(rng, 1, 16)));
      break;
    case 2:  // delete a range
      s.erase(at, static_cast<size_t>(uniform(rng, 1, 32)));
      break;
    case 3:  // duplicate a range
      s.insert(at, s.substr(at, static_cast<size_t>(uniform(rng, 1, 64))));
      break;
    case 4: {  // change a digit of a Content-Length
      const size_t p = s.find("Length: ", at);
      if (p != std::string::npos) s[p + 8] = "0123456789-x "[uniform(rng, 0, 12)];
      break;
    }
    case 5: {  // a huge or odd length
      static const char* lengths[] = {"99999999999", "9223372036854775807", "9223372036854775808", "0", "", "-1"};
      const size_t p = s.find("Length: ", at);
      if (p != std::string::npos) {
        const size_t e = s.find('\r', p);
        if (e != std::string::npos) s.replace(p + 8, e - p - 8, lengths[uniform(rng, 0, 5)]);
      }
      break;
    }
    case 6:  // cut the stream
      s.resize(at);
      break;
    default: {  // CRLF damage
      const size_t p = s.find("\r\n", at);
      if (p != std::string::npos) s.erase(p, uniform(rng, 1, 2));
      break;
    }
  }
}

TEST(NetMessageReaderFuzz, RandomBytesNeverCrashOrHang) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng rng(seed);
    std::string bytes = randomBytes(rng, uniform(rng, 0, 4000));
    if (seed % 3 == 0) bytes = "Content-Length: " + std::to_string(uniform(rng, 0, 50)) + "\r\n\r\n" + bytes;
    ReaderLimits limits;
    limits.maxHeaderBytes = uniform(rng, 16, 200);
    limits.maxBodyBytes = uniform(rng, 0, 300);
    auto pieceRng = std::make_shared<Rng>(seed + 1000);
    readAll(bytes, limits, [pieceRng] { return static_cast<size_t>(uniform(*pieceRng, 1, 100)); });
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST(NetMessageReaderFuzz, MutatedStreamsNeverCrashOrHang) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = 0; seed < 1500; ++seed) {
    Rng rng(seed);
    std::string bytes;
    const int count = static_cast<int>(uniform(rng, 1, 12));
    for (int i = 1; i <= count; ++i) bytes += framed(randomMessage(rng, i));
    for (uint64_t m = uniform(rng, 1, 5); m > 0; --m) mutate(rng, bytes);
    ReaderLimits limits;
    if (seed % 2) {
      limits.maxHeaderBytes = uniform(rng, 20, 100);
      limits.maxBodyBytes = uniform(rng, 50, 400);
    }
    auto pieceRng = std::make_shared<Rng>(seed + 7);
    const auto results = readAll(bytes, limits, [pieceRng] { return static_cast<size_t>(uniform(*pieceRng, 1, 200)); });
    for (const ReadResult& r : results)
      if (r.isMessage()) {
        EXPECT_TRUE(r.message.is_object());
      }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120));
}

// Damage inside one body that keeps its length loses that message only.
TEST(NetMessageReaderFuzz, DamageInsideABodyLosesOnlyThatMessage) {
  for (uint64_t seed = 0; seed < 500; ++seed) {
    Rng rng(seed);
    const int count = static_cast<int>(uniform(rng, 2, 8));
    std::vector<std::string> bodies;
    for (int i = 1; i <= count; ++i) bodies.push_back(randomMessage(rng, i));
    const size_t victim = static_cast<size_t>(uniform(rng, 0, bodies.size() - 1));
    std::string& b = bodies[victim];
    for (uint64_t k = uniform(rng, 1, 4); k > 0; --k)
      b[uniform(rng, 0, b.size() - 1)] = static_cast<char>(uniform(rng, 0, 255));
    std::string bytes;
    for (const std::string& body : bodies) bytes += framed(body);
    auto pieceRng = std::make_shared<Rng>(seed + 3);
    const auto results = readAll(bytes, {}, [pieceRng] { return static_cast<size_t>(uniform(*pieceRng, 1, 64)); });
    ASSERT_EQ(results.size(), bodies.size() + 1) << seed;
    for (size_t i = 0; i < bodies.size(); ++i) {
      if (i == victim) continue;  // may or may not still be a valid message
      ASSERT_TRUE(results[i].isMessage()) << seed << " " << i;
      EXPECT_EQ(results[i].message["seq"], static_cast<int64_t>(i + 1));
    }
  }
}

// ---------------------------------------------------------------- writer

TEST(NetMessageWriter, FramesCompactUtf8) {
  ScriptedStream stream("");
  MessageWriter writer(stream);
  const json m = {{"seq", 1}, {"type", "event"}, {"event", "output"}, {"body", {{"output", "caf\u00e9"}}}};
  ASSERT_TRUE(writer.send(m));
  const std::string body = R"({"body":{"output":"café"},"event":"output","seq":1,"type":"event"})";
  EXPECT_EQ(stream.written, "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(body.size(), 67u);  // bytes, not characters
}

TEST(NetMessageWriter, InvalidUtf8IsReplacedNotThrown) {
  ScriptedStream stream("");
  MessageWriter writer(stream);
  const json m = {{"seq", 1},
                  {"type", "event"},
                  {"event", "output"},
                  {"body",
                   {{"output",
                     "a\xff"
                     "b\xc3"}}}};
  ASSERT_TRUE(writer.send(m));
  const auto results = readAll(stream.written);
  ASSERT_TRUE(results[0].isMessage()) << results[0].error.toString();
  EXPECT_EQ(results[0].message["body"]["output"],
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
}

TEST(NetMessageWriter, OneWriteCallPerMessage) {
  class Counting : public Stream {
   public:
    ptrdiff_t read(std::span<char>, std::string&) override { return 0; }
    bool write(std::string_view data, std::string&) override {
      writes.emplace_back(data);
      return true;
    }
    void close() override {}
    std::vector<std::string> writes;
  } stream;
  MessageWriter writer(stream);
  ASSERT_TRUE(writer.send(request(1)));
  ASSERT_TRUE(writer.send(request(2)));
  ASSERT_EQ(stream.writes.size(), 2u);
  EXPECT_EQ(stream.writes[1], framedRequest(2));
}

TEST(NetMessageWriter, ConcurrentWritersNeverInterleave) {
  auto [client, server] = MemoryPipe::pair();
  MessageWriter writer(*server);
  constexpr int kThreads = 8, kEach = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&writer, t] {
      for (int i = 0; i < kEach; ++i) {
        json m = {{"seq", 1},
                  {"type", "event"},
                  {"event", "output"},
                  {"body", {{"thread", t}, {"i", i}, {"pad", std::string(static_cast<size_t>(i % 50) * 13, 'p')}}}};
        EXPECT_TRUE(writer.send(m));
      }
    });
  }
  std::vector<int> next(kThreads, 0);
  int received = 0;
  std::thread readerThread([&] {
    MessageReader reader(*client);
    for (;;) {
      const ReadResult r = reader.next();
      if (r.isEnd()) break;
      ASSERT_TRUE(r.isMessage()) << r.error.toString();
      const int t = r.message["body"]["thread"], i = r.message["body"]["i"];
      EXPECT_EQ(i, next[static_cast<size_t>(t)]++);  // each thread's messages in its order
      ++received;
    }
  });
  for (auto& t : threads) t.join();
  server->close();
  readerThread.join();
  EXPECT_EQ(received, kThreads * kEach);
}

TEST(NetMessageWriter, SendFailsOnAClosedStream) {
  auto [client, server] = MemoryPipe::pair();
  MessageWriter writer(*server);
  client.reset();  // the client went away
  std::string error;
  EXPECT_FALSE(writer.send(request(1), &error));
  EXPECT_EQ(error, "the other end of the pipe is closed");
}

// ---------------------------------------------------------------- MemoryPipe

TEST(NetMemoryPipe, BytesFlowBothWaysAndCloseEndsTheOtherSide) {
  auto [client, server] = MemoryPipe::pair();
  std::string error;
  ASSERT_TRUE(client->write("hello", error));
  ASSERT_TRUE(server->write("world!", error));
  char buf[16];
  ASSERT_EQ(server->read(std::span<char>(buf, 3), error), 3);
  EXPECT_EQ(std::string(buf, 3), "hel");
  client->close();
  EXPECT_EQ(server->read(std::span<char>(buf, 16), error), 2);  // what was buffered...
  EXPECT_EQ(std::string(buf, 2), "lo");
  EXPECT_EQ(server->read(std::span<char>(buf, 16), error), 0);  // ...then the end
  EXPECT_EQ(client->read(std::span<char>(buf, 16), error), 0);  // a closed end reads nothing
  EXPECT_FALSE(client->write("x", error));
  EXPECT_EQ(error, "the pipe is closed");
  EXPECT_FALSE(server->write("x", error));
  EXPECT_EQ(error, "the other end of the pipe is closed");
  EXPECT_EQ(server->read(std::span<char>(buf, 0), error), 0);
}

TEST(NetMemoryPipe, CloseWakesABlockedRead) {
  for (int own = 0; own < 2; ++own) {
    auto [client, server] = MemoryPipe::pair();
    std::atomic<ptrdiff_t> got{-2};
    std::atomic<pid_t> reader{0};
    std::thread t([&, s = server.get()] {
      char buf[4];
      std::string error;
      reader = test::currentThreadId();
      got = s->read(std::span<char>(buf, 4), error);
    });
    EXPECT_TRUE(test::eventually([&] { return reader != 0 && test::blocked(reader); })) << "the read blocks";
    if (own) {
      server->close();
    } else {
      client->close();
    }
    t.join();
    EXPECT_EQ(got.load(), 0);
  }
}

TEST(NetMemoryPipe, ByteByByteWriterThread) {
  auto [client, server] = MemoryPipe::pair();
  const std::string bytes = framedRequest(1) + framed("nope") + framedRequest(2);
  std::thread writer([&bytes, c = client.get()] {
    std::string error;
    for (const char ch : bytes) {
      ASSERT_TRUE(c->write(std::string_view(&ch, 1), error));
      if (ch == '\n') std::this_thread::yield();
    }
    c->close();
  });
  EXPECT_EQ(kinds(readAll(*server, bytes.size())), (Kinds{"msg 1", "error", "msg 2", "end"}));
  writer.join();
}

// ---------------------------------------------------------------- FdStream

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  int release(int i) {
    const int fd = fds[i];
    fds[i] = -1;
    return fd;
  }
};

TEST(NetFdStream, RoundTripOverPipes) {
  Pipe toServer, toClient;
  FdStream server(toServer.release(0), toClient.release(1), true);
  FdStream client(toClient.release(0), toServer.release(1), true);
  MessageWriter clientWriter(client), serverWriter(server);
  ASSERT_TRUE(clientWriter.send(request(1, "initialize")));
  MessageReader serverReader(server);
  ReadResult r = serverReader.next();
  ASSERT_TRUE(r.isMessage());
  EXPECT_EQ(r.message["command"], "initialize");
  ASSERT_TRUE(serverWriter.send({{"seq", 1}, {"type", "event"}, {"event", "initialized"}}));
  MessageReader clientReader(client);
  r = clientReader.next();
  ASSERT_TRUE(r.isMessage());
  EXPECT_EQ(r.message["event"], "initialized");
  client.close();  // closes its write end: the server reads the end
  EXPECT_TRUE(serverReader.next().isEnd());
}

TEST(NetFdStream, CloseFromAnotherThreadWakesABlockedRead) {
  Pipe p;
  FdStream stream(p.fds[0], p.fds[1], false);  // nobody ever writes
  std::atomic<bool> done{false};
  std::atomic<pid_t> readerThread{0};
  std::thread t([&] {
    MessageReader reader(stream);
    readerThread = test::currentThreadId();
    EXPECT_TRUE(reader.next().isEnd());
    done = true;
  });
  EXPECT_TRUE(test::eventually([&] { return readerThread != 0 && test::blocked(readerThread); })) << "the read blocks";
  EXPECT_FALSE(done.load());
  stream.close();
  t.join();
  EXPECT_TRUE(done.load());
  std::string error;
  EXPECT_FALSE(stream.write("x", error));
  EXPECT_EQ(error, "the stream is closed");
}

TEST(NetFdStream, WritingToAPipeWithoutReaderIsAnErrorNotASignal) {
  Pipe p;
  ::close(p.release(0));
  FdStream stream(-1, p.fds[1], false);
  std::string error;
  EXPECT_FALSE(stream.write(framedRequest(1), error));  // SIGPIPE would end the test binary
  EXPECT_EQ(error, "write failed: the other end closed the stream");
}

TEST(NetFdStream, LargeMessagesThroughAPipe) {
  Pipe p;
  FdStream in(p.fds[0], -1, false), out(-1, p.fds[1], false);
  json m = request(1, "evaluate");
  m["arguments"] = {{"expression", std::string(1 << 20, 'e')}};  // more than a pipe holds
  std::thread t([&] {
    MessageWriter writer(out);
    EXPECT_TRUE(writer.send(m));
    EXPECT_TRUE(writer.send(request(2)));
  });
  MessageReader reader(in);
  const ReadResult r = reader.next();
  ASSERT_TRUE(r.isMessage());
  EXPECT_EQ(r.message, m);
  EXPECT_EQ(reader.next().message["seq"], 2);
  t.join();
}

// ---------------------------------------------------------------- TCP

int connectTo(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST(NetTcpListener, RoundTripOnPortZero) {
  std::string error;
  auto listener = TcpListener::listen(0, error);
  ASSERT_TRUE(listener) << error;
  ASSERT_NE(listener->port(), 0);
  std::thread clientThread([port = listener->port()] {
    const int fd = connectTo(port);
    ASSERT_GE(fd, 0);
    auto client = FdStream::socket(fd);
    MessageWriter writer(*client);
    MessageReader reader(*client);
    json init = request(1, "initialize");
    init["arguments"] = {{"adapterID", "scanback"}, {"clientName", "t\u00e9st"}};
    ASSERT_TRUE(writer.send(init));
    const ReadResult r = reader.next();
    ASSERT_TRUE(r.isMessage()) << r.error.toString();
    EXPECT_EQ(r.message["request_seq"], 1);
    EXPECT_EQ(r.message["body"]["supportsStepBack"], true);
    // The client goes away; the server reads the end.
  });
  auto conn = listener->accept(error);
  ASSERT_TRUE(conn) << error;
  MessageReader reader(*conn);
  MessageWriter writer(*conn);
  ReadResult r = reader.next();
  ASSERT_TRUE(r.isMessage()) << r.error.toString();
  EXPECT_EQ(r.message["arguments"]["clientName"], "t\u00e9st");
  ASSERT_TRUE(writer.send({{"seq", 1},
                           {"type", "response"},
                           {"request_seq", 1},
                           {"success", true},
                           {"command", "initialize"},
                           {"body", {{"supportsStepBack", true}}}}));
  clientThread.join();
  EXPECT_TRUE(reader.next().isEnd());
}

TEST(NetTcpListener, ServerCloseEndsTheClientsStream) {
  std::string error;
  auto listener = TcpListener::listen(0, error);
  ASSERT_TRUE(listener) << error;
  const int fd = connectTo(listener->port());
  ASSERT_GE(fd, 0);
  auto client = FdStream::socket(fd);
  auto conn = listener->accept(error);
  ASSERT_TRUE(conn) << error;
  std::atomic<pid_t> readerThread{0};
  std::thread t([&] {
    MessageReader reader(*client);
    readerThread = test::currentThreadId();
    EXPECT_TRUE(reader.next().isEnd());
  });
  EXPECT_TRUE(test::eventually([&] { return readerThread != 0 && test::blocked(readerThread); })) << "the read blocks";
  conn->close();  // shutdown(): the client's blocked read ends
  t.join();
}

TEST(NetTcpListener, CloseStopsABlockedAccept) {
  std::string error;
  auto listener = TcpListener::listen(0, error);
  ASSERT_TRUE(listener) << error;
  std::atomic<bool> returned{false};
  std::atomic<pid_t> acceptThread{0};
  std::thread t([&] {
    std::string e;
    acceptThread = test::currentThreadId();
    EXPECT_EQ(listener->accept(e), nullptr);
    EXPECT_EQ(e, "");
    returned = true;
  });
  EXPECT_TRUE(test::eventually([&] { return acceptThread != 0 && test::blocked(acceptThread); }))
      << "the accept blocks";
  EXPECT_FALSE(returned.load());
  listener->close();
  t.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(listener->accept(error), nullptr);  // and every later accept
}

TEST(NetTcpListener, PortInUseIsAnError) {
  std::string error;
  auto first = TcpListener::listen(0, error);
  ASSERT_TRUE(first) << error;
  auto second = TcpListener::listen(first->port(), error);
  EXPECT_EQ(second, nullptr);
  EXPECT_EQ(error, "cannot listen on 127.0.0.1:" + std::to_string(first->port()) + ": Address already in use");
}

}  // namespace
}  // namespace scanback::net
