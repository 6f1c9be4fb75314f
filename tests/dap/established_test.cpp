// When a DAP session counts as established for its server (net::Connection::established, which
// lifts the handshake deadline): once `initialize` is answered, and, when the session requires a
// token, once a `launch` or `attach` carried it — never before.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "dap/session/session.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"

namespace scanback::dap {
namespace {

// A session on its own thread behind an in-memory pipe, and the client's end of it.
class Established {
 public:
  explicit Established(std::optional<std::string> token) {
    net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
    client_ = std::move(pipe.client);
    server_ = std::move(pipe.server);
    reader_ = std::make_unique<net::MessageReader>(*client_);
    session_ = std::thread([this, token] {
      Session session(*server_, [](const std::string&) {});
      if (token) session.requireAuthToken(*token);
      session.onEstablished([this] { ++established_; });
      session.run();
    });
  }
  ~Established() {
    client_->close();
    session_.join();
  }
  // Sends a request and returns its response (events before it are passed over).
  json request(const std::string& command, json arguments = json::object()) {
    const int64_t seq = seq_++;
    std::string error;
    if (!client_->write(net::MessageWriter::frame(
                            json{{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", arguments}}),
                        error)) {
      ADD_FAILURE() << "cannot send " << command << ": " << error;
      return json();
    }
    for (;;) {
      net::ReadResult r = reader_->next();
      if (!r.isMessage()) return json();
      if (r.message.value("type", "") == "response" && r.message.value("request_seq", int64_t{-1}) == seq)
        return r.message;
    }
  }
  // How often the session said it was established (read after a response: the session says it
  // before it reads the next request, on its own thread, so the count is settled by then).
  int established() const { return established_.load(); }

 private:
  std::unique_ptr<net::Stream> client_, server_;
  std::unique_ptr<net::MessageReader> reader_;
  std::thread session_;
  std::atomic<int> established_{0};
  int64_t seq_ = 1;
};

const std::string kToken = "a-token-of-enough-bytes";

TEST(DapEstablished, WithoutATokenInitializeEstablishesTheSession) {
  Established s(std::nullopt);
  EXPECT_EQ(s.request("threads").value("success", true), false);  // before initialize: refused
  s.request("threads");
  EXPECT_EQ(s.established(), 0);
  EXPECT_EQ(s.request("initialize", json{{"adapterID", "test"}}).value("success", false), true);
  s.request("threads");  // a round trip: the session has run its hook by now if it was to
  EXPECT_EQ(s.established(), 1);
  s.request("threads");
  EXPECT_EQ(s.established(), 1);  // once
}

TEST(DapEstablished, WithATokenOnlyALaunchThatCarriesItEstablishesTheSession) {
  Established s(kToken);
  s.request("initialize", json{{"adapterID", "test"}});
  s.request("threads");
  EXPECT_EQ(s.established(), 0);  // initialized, not authenticated
  const json refused = s.request("launch", json{{"program", "/nonexistent.st"}, {"authToken", "wrong"}});
  EXPECT_EQ(refused.value("success", true), false);
  s.request("threads");
  EXPECT_EQ(s.established(), 0);
  // The right token establishes the session even when the launch itself fails (no such file): the
  // client has proven itself.
  const json failed = s.request("launch", json{{"program", "/nonexistent.st"}, {"authToken", kToken}});
  EXPECT_EQ(failed.value("success", true), false);
  s.request("threads");
  EXPECT_EQ(s.established(), 1);
}

}  // namespace
}  // namespace scanback::dap
