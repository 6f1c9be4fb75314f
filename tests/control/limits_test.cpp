// The control server's limits (docs/control.md, "Limits") over a real unix socket, in this
// process: the refusal beyond the connection limit is the protocol's error line, a request
// connection that stops asking is closed while a stream is not, requests are paced, and a token is
// never sent to a socket of another user.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "control/client.h"
#include "control/server.h"
#include "net/connect.h"
#include "tests/support/trace_support.h"
#include "tests/support/wait.h"

namespace scanback::control {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class StatusOnlyRuntime final : public ControlledRuntime {
 public:
  explicit StatusOnlyRuntime(recorder::Recorder* rec = nullptr) : rec_(rec) {}
  json status() const override { return json{{"state", "running"}, {"cycles", 1}}; }
  recorder::Recorder* recorder() override { return rec_; }
  void stop() override {}
  bool setPaused(bool, std::string&) override { return true; }

 private:
  recorder::Recorder* rec_;
};

// A control server on a unix socket in a directory of its own.
class Endpointed {
 public:
  Endpointed(ControlledRuntime& runtime, ControlOptions options) {
    static int counter = 0;
    dir_ =
        fs::temp_directory_path() / ("scanback_limits_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
    std::string error;
    endpoint_ = *parseEndpoint("unix://" + (dir_ / "rt.sock").string(), error);
    auto listener = listenOn(endpoint_, "127.0.0.1", error);
    EXPECT_TRUE(listener) << error;
    options.log = [this](const std::string& text) {
      std::lock_guard lock(mutex_);
      said_ += text + "\n";
    };
    server_ = std::make_unique<ControlServer>(std::move(listener), runtime, std::move(options));
  }
  ~Endpointed() {
    server_->close();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const Endpoint& endpoint() const { return endpoint_; }
  ControlServer& server() { return *server_; }
  std::unique_ptr<ControlClient> client(std::optional<std::string> token = std::nullopt) {
    std::string error;
    auto c = ControlClient::connect(endpoint_, std::move(token), error);
    EXPECT_TRUE(c) << error;
    return c;
  }
  std::string said() {
    std::lock_guard lock(mutex_);
    return said_;
  }

 private:
  fs::path dir_;
  Endpoint endpoint_;
  std::unique_ptr<ControlServer> server_;
  std::mutex mutex_;
  std::string said_;
};

json statusOf(ControlClient& c) {
  std::string error;
  const std::optional<json> r = c.request(json{{"command", "status"}}, error);
  return r ? *r : json{{"clientError", error}};
}

TEST(ControlLimits, BeyondTheLimitAConnectionGetsTheProtocolsErrorLine) {
  StatusOnlyRuntime runtime;
  ControlOptions options;
  options.maxConnections = 2;
  Endpointed e(runtime, options);
  auto a = e.client(), b = e.client();
  EXPECT_EQ(statusOf(*a).value("ok", false), true);
  EXPECT_EQ(statusOf(*b).value("ok", false), true);
  auto c = e.client();
  EXPECT_EQ(statusOf(*c),
            (json{{"ok", false}, {"error", "this server serves at most 2 connections at once; try again later"}}));
  EXPECT_NE(e.said().find("refused a connection from pid "), std::string::npos) << e.said();
  EXPECT_EQ(statusOf(*a).value("ok", false), true);
}

TEST(ControlLimits, ARequestConnectionThatStopsAskingIsClosedAStreamIsNot) {
  auto program = test::compilePlant();
  ASSERT_TRUE(program);
  Runtime rt(program);
  recorder::RecorderOptions recording;
  recording.ringBytes = 16u << 20;
  std::string error;
  auto rec = recorder::Recorder::start(rt, recording, error);
  ASSERT_TRUE(rec) << error;
  StatusOnlyRuntime runtime(rec.get());
  ControlOptions options;
  options.idleTimeout = 200ms;
  options.statusEvery = 20ms;
  Endpointed e(runtime, options);

  auto idle = e.client();
  EXPECT_EQ(statusOf(*idle).value("ok", false), true);
  auto stream = e.client();
  ASSERT_EQ(stream->request(json{{"command", "stream"}}, error).value_or(json()).value("ok", false), true) << error;
  // The request connection is closed once 200 ms pass without a request...
  EXPECT_FALSE(idle->nextEvent(error));
  EXPECT_EQ(error, "unix://" + e.endpoint().path + " closed the connection");
  // (said by the connection's thread as it ends, after the client has seen the end)
  EXPECT_TRUE(test::eventually([&] { return e.said().find("no request for 0.2 s") != std::string::npos; })) << e.said();
  // ...while the stream, which the client never writes to again, carries on well past that.
  const auto start = std::chrono::steady_clock::now();
  int statuses = 0;
  while (std::chrono::steady_clock::now() - start < 600ms) {
    const auto event = stream->nextEvent(error);
    ASSERT_TRUE(event) << error;
    if (event->message["event"] == "status") ++statuses;
  }
  EXPECT_GE(statuses, 5);
  stream->close();
  e.server().close();
  ASSERT_TRUE(rec->finish(error)) << error;
}

TEST(ControlLimits, AConnectionsRequestsArePaced) {
  StatusOnlyRuntime runtime;
  ControlOptions options;
  options.requestsPerSecond = 20;
  options.requestBurst = 2;
  Endpointed e(runtime, options);
  auto c = e.client();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) ASSERT_EQ(statusOf(*c).value("ok", false), true);
  // Two at once (the burst), then one each 50 ms: at least 200 ms for six, however fast the machine.
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
}

TEST(ControlLimits, ATokenIsNotSentToASocketOfAnotherUser) {
  StatusOnlyRuntime runtime;
  ControlOptions options;
  options.token = "a-token-of-enough-bytes";
  Endpointed e(runtime, options);
  EXPECT_EQ(statusOf(*e.client(options.token)).value("ok", false), true);
  if (::geteuid() != 0) return;  // only root can give the socket to another user (CI runs as root)
  ASSERT_EQ(::chown(e.endpoint().path.c_str(), 65534, 65534), 0);
  std::string error;
  EXPECT_FALSE(ControlClient::connect(e.endpoint(), options.token, error));
  EXPECT_NE(error.find("the socket " + e.endpoint().path + " belongs to user "), std::string::npos) << error;
  // Without a token there is nothing to keep from it.
  EXPECT_TRUE(ControlClient::connect(e.endpoint(), std::nullopt, error)) << error;
}

}  // namespace
}  // namespace scanback::control
