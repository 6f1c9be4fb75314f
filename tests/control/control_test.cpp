// The control server in this process, over a socket pair: what a stream sends, and that a client
// that stops reading never slows the task — its buffer fills, it gets a gap, and the history goes
// on after it. Requests and their errors are covered end to end in tests/dap/attach_test.cpp.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

#include "control/client.h"
#include "control/server.h"
#include "tests/support/trace_support.h"
#include "traces/framing.h"

namespace scanback::control {
namespace {

class TestRuntime final : public ControlledRuntime {
 public:
  explicit TestRuntime(recorder::Recorder* rec) : rec_(rec) {}
  json status() const override { return json{{"state", "running"}}; }
  recorder::Recorder* recorder() override { return rec_; }
  void stop() override {}
  [[nodiscard]] bool setPaused(bool paused, std::string& error) override {
    asked.push_back(paused);
    if (refusal.empty()) return true;
    error = refusal;
    return false;
  }
  std::vector<bool> asked;  // each setPaused, in order
  std::string refusal;      // set: setPaused refuses with it

 private:
  recorder::Recorder* rec_;
};

// One end of a socket pair with small kernel buffers, so that a client that does not read backs
// up into the server's buffer soon.
struct SocketPair {
  std::unique_ptr<net::FdStream> server, client;
  SocketPair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return;
    const int small = 4096;
    for (int fd : fds) {
      ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    server = net::FdStream::socket(fds[0]);
    client = net::FdStream::socket(fds[1]);
  }
};

json readLine(net::LineReader& reader) {
  std::string line, error;
  EXPECT_EQ(reader.readLine(line, error), net::LineReader::Result::Line) << error;
  return json::parse(line);
}

TEST(ControlStream, AClientThatStopsReadingGetsAGapAndNeverSlowsTheTask) {
  auto program = test::compilePlant();
  ASSERT_TRUE(program);
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.ringBytes = 64u << 20;  // a flight recorder without a file
  options.keyframeEvery = 10;     // many small chunks
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;

  TestRuntime runtime(rec.get());
  ControlOptions control;
  control.clientBufferBytes = 8192;
  std::atomic<bool> closing{false};
  SocketPair pair;
  ASSERT_TRUE(pair.server && pair.client);
  std::thread server([&] { ControlServer::serve(*pair.server, runtime, control, closing); });

  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "stream"}}));
  net::LineReader reader(*pair.client);
  EXPECT_EQ(readLine(reader)["ok"], true);
  const json header = readLine(reader);
  ASSERT_EQ(header["event"], "header");
  std::vector<uint8_t> block;
  ASSERT_TRUE(reader.readBytes(header["bytes"].get<size_t>(), block, error));
  EXPECT_EQ(trace::decodeFrameHeader(block.data(), error)->kind, trace::BlockKind::Header);

  // The client reads nothing while the task runs: every cycle runs, none waits for it.
  constexpr uint64_t kCycles = 20000;
  for (uint64_t c = 0; c < kCycles; ++c) {
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    while (rec->backlogged()) rec->waitUntilNotBacklogged(std::chrono::seconds(1));
  }
  ASSERT_TRUE(rec->waitForWriter(0, std::chrono::seconds(30)));
  EXPECT_EQ(rec->stats().cyclesDropped, 0u);  // the recorder kept up; only the client fell behind

  // Now it reads: chunks, then a gap for what its buffer could not hold (once it has drained),
  // then, as the task runs on, chunks again, each following on from the one before.
  std::optional<uint64_t> next;
  uint64_t gaps = 0, chunksAfterGap = 0;
  bool ranOn = false;
  while (chunksAfterGap < 2) {
    if (gaps > 0 && !ranOn) {
      ranOn = true;
      for (uint64_t c = 0; c < 200; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    }
    const json event = readLine(reader);
    const std::string kind = event["event"];
    if (kind == "chunk") {
      ASSERT_TRUE(reader.readBytes(event["bytes"].get<size_t>(), block, error)) << error;
      const auto frame = trace::decodeFrameHeader(block.data(), error);
      ASSERT_TRUE(frame) << error;
      EXPECT_EQ(frame->firstCycle, event["firstCycle"].get<uint64_t>());
      if (next) {
        EXPECT_EQ(frame->firstCycle, *next);
      }
      next = frame->firstCycle + frame->cycleCount;
      if (gaps) ++chunksAfterGap;
    } else if (kind == "gap") {
      if (next) {
        EXPECT_EQ(event["firstCycle"].get<uint64_t>(), *next);
      }
      EXPECT_GT(event["cycleCount"].get<uint64_t>(), 0u);
      next = event["firstCycle"].get<uint64_t>() + event["cycleCount"].get<uint64_t>();
      ++gaps;
    } else {
      EXPECT_TRUE(kind == "status" || kind == "caughtUp") << kind;
    }
  }
  EXPECT_GE(gaps, 1u);
  closing = true;
  pair.client->close();
  server.join();
  ASSERT_TRUE(rec->finish(error)) << error;
}

TEST(ControlStream, StreamingIsRefusedWhenDebuggingIsDisabledAndWithoutAHistory) {
  TestRuntime none(nullptr);
  ControlOptions control;
  std::atomic<bool> closing{false};
  for (bool debug : {false, true}) {
    control.debugEnabled = debug;
    SocketPair pair;
    std::thread server([&] { ControlServer::serve(*pair.server, none, control, closing); });
    ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "stream"}}));
    net::LineReader reader(*pair.client);
    const json r = readLine(reader);
    EXPECT_EQ(r["ok"], false);
    EXPECT_EQ(r["error"], debug ? "request 1: this runtime keeps no history"
                                : "request 1: debugging is disabled on this runtime (it was started with --no-debug)");
    pair.client->close();
    server.join();
  }
}

TEST(ControlServer, PauseAndResumeAreTheRuntimesToAnswer) {
  TestRuntime runtime(nullptr);
  ControlOptions control;
  std::atomic<bool> closing{false};
  SocketPair pair;
  std::thread server([&] { ControlServer::serve(*pair.server, runtime, control, closing); });
  net::LineReader reader(*pair.client);
  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "pause"}}));
  EXPECT_EQ(readLine(reader), (json{{"ok", true}, {"command", "pause"}}));
  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "resume"}}));
  EXPECT_EQ(readLine(reader), (json{{"ok", true}, {"command", "resume"}}));
  runtime.refusal = "the runtime has faulted";
  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "pause"}}));
  EXPECT_EQ(readLine(reader), (json{{"ok", false}, {"error", "request 3: the runtime has faulted"}}));
  pair.client->close();
  server.join();
  EXPECT_EQ(runtime.asked, (std::vector<bool>{true, false, true}));
}

// A runtime that keeps its forces in a list: what the server forwards, and its refusals.
class ForcingRuntime final : public ControlledRuntime {
 public:
  json status() const override { return json{{"state", "running"}}; }
  recorder::Recorder* recorder() override { return nullptr; }
  void stop() override {}
  [[nodiscard]] bool setPaused(bool, std::string&) override { return true; }
  [[nodiscard]] std::optional<json> force(const std::string& target, const std::string& value,
                                          std::string& error) override {
    if (target == "bad") {
      error = "cannot force 'bad': no such variable";
      return std::nullopt;
    }
    held.push_back(target + "=" + value);
    return json{{"target", target}, {"value", value}, {"type", "INT"}};
  }
  [[nodiscard]] std::optional<json> release(const std::string& target, std::string&) override {
    held.clear();
    return json::array({target});
  }
  json forced() const override { return json::array({json{{"held", held.size()}}}); }
  std::vector<std::string> held;
};

TEST(ControlServer, ForceReleaseAndForcedAreTheRuntimesToAnswer) {
  ForcingRuntime runtime;
  ControlOptions control;
  control.debugEnabled = false;  // an operator's action, as pause: allowed without debugging
  std::atomic<bool> closing{false};
  SocketPair pair;
  std::thread server([&] { ControlServer::serve(*pair.server, runtime, control, closing); });
  net::LineReader reader(*pair.client);
  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "force"}, {"target", "Main.x"}, {"value", "5"}}));
  EXPECT_EQ(readLine(reader), (json{{"ok", true},
                                    {"command", "force"},
                                    {"force", json{{"target", "Main.x"}, {"value", "5"}, {"type", "INT"}}}}));
  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "forced"}}));
  EXPECT_EQ(readLine(reader), (json{{"ok", true}, {"command", "forced"}, {"forced", json::array({{{"held", 1}}})}}));
  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "force"}, {"target", "bad"}, {"value", "5"}}));
  EXPECT_EQ(readLine(reader), (json{{"ok", false}, {"error", "request 3: cannot force 'bad': no such variable"}}));
  ASSERT_TRUE(net::writeLine(*pair.client, json{{"command", "release"}, {"target", "Main.x"}}));
  EXPECT_EQ(readLine(reader), (json{{"ok", true}, {"command", "release"}, {"released", json::array({"Main.x"})}}));
  pair.client->close();
  server.join();
  EXPECT_TRUE(runtime.held.empty());
}

TEST(ControlProtocol, RequestsAreReadStrictly) {
  std::string error;
  const auto pause = parseRequest("{\"command\":\"pause\"}", error);
  ASSERT_TRUE(pause) << error;
  EXPECT_EQ(pause->command, Request::Command::Pause);
  EXPECT_FALSE(parseRequest("{\"command\":\"halt\"}", error));
  EXPECT_EQ(error,
            "'command' must be one of status, snapshot, stream, stop, pause, resume, force, release, forced, not "
            "\"halt\"");
  const auto force = parseRequest(R"({"command":"force","target":"%IX0.2","value":"TRUE"})", error);
  ASSERT_TRUE(force) << error;
  EXPECT_EQ(force->command, Request::Command::Force);
  EXPECT_EQ(force->target, "%IX0.2");
  EXPECT_EQ(force->value, "TRUE");
  EXPECT_FALSE(parseRequest(R"({"command":"force","target":"%IX0.2"})", error));
  EXPECT_EQ(error, "'force' needs 'value': the value, as text");
  EXPECT_FALSE(parseRequest(R"({"command":"force","value":"1"})", error));
  EXPECT_EQ(error, "'force' needs 'target': a path (Main.fb.x) or an address (%IX0.2)");
  EXPECT_FALSE(parseRequest(R"({"command":"force","target":"","value":"1"})", error));
  EXPECT_EQ(error, "'target' must be a non-empty string, not \"\"");
  EXPECT_FALSE(parseRequest(R"({"command":"force","target":"x","value":1})", error));
  EXPECT_EQ(error, "'value' must be a non-empty string, not 1");
  const auto releaseAll = parseRequest(R"({"command":"release"})", error);
  ASSERT_TRUE(releaseAll) << error;
  EXPECT_EQ(releaseAll->command, Request::Command::Release);
  EXPECT_TRUE(releaseAll->target.empty());
  EXPECT_FALSE(parseRequest(R"({"command":"release","target":3})", error));
  EXPECT_EQ(error, "'target' must be a non-empty string, not 3");
  EXPECT_FALSE(parseRequest("{\"command\":\"stream\",\"fromCycle\":1.5}", error));
  EXPECT_EQ(error, "'fromCycle' must be a whole number from 0, not 1.5");
  EXPECT_FALSE(parseRequest("{\"command\":\"stream\",\"fromCycle\":1e300}", error));
  const auto whole = parseRequest("{\"command\":\"stream\",\"fromCycle\":2.0}", error);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->fromCycle, 2u);
  EXPECT_FALSE(parseRequest("{\"command\":\"status\",\"token\":5}", error));
  EXPECT_EQ(error, "'token' must be a string");
  EXPECT_FALSE(parseRequest("{\"command\":\"snapshot\"}", error));
  EXPECT_NE(error.find("needs 'path'"), std::string::npos);
  EXPECT_FALSE(parseRequest("{\"comm", error));
  EXPECT_EQ(error, "syntax error at byte 7 of the request");  // where the input ended
  // Found by fuzz_control: a number beyond a double threw out_of_range, which nothing caught.
  EXPECT_FALSE(parseRequest("1e0010017", error));
  EXPECT_EQ(error, "a number in the request is out of range");
}

TEST(ControlEndpoint, EndpointsAreParsedWithClearErrors) {
  std::string error;
  const auto unix = parseEndpoint("unix:///tmp/a.sock", error);
  ASSERT_TRUE(unix);
  EXPECT_EQ(unix->path, "/tmp/a.sock");
  const auto tcp = parseEndpoint("tcp://127.0.0.1:9000", error);
  ASSERT_TRUE(tcp);
  EXPECT_EQ(tcp->port, 9000);
  EXPECT_EQ(tcp->text(), "tcp://127.0.0.1:9000");
  EXPECT_FALSE(parseEndpoint("unix://relative.sock", error));
  EXPECT_EQ(error, "control endpoint 'unix://relative.sock': expected unix:///absolute/path.sock");
  EXPECT_FALSE(parseEndpoint("tcp://localhost:9000", error));
  EXPECT_NE(error.find("IPv4"), std::string::npos);
  EXPECT_FALSE(parseEndpoint("tcp://127.0.0.1:70000", error));
  EXPECT_FALSE(parseEndpoint("http://x", error));
}

}  // namespace
}  // namespace scanback::control
