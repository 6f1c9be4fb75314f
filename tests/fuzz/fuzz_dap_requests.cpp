// libFuzzer target: typed DAP request sequences against a launched program (tests/fuzz/README.md).
// Each input launches a small two-task program (stopped on entry; recorded, so that reverse
// requests work, when the first byte says so), then reads the rest of the bytes as requests: a byte
// picks the command, the following bytes pick each argument from values chosen to reach edge cases
// (ids that exist and do not, 1.5, -1, huge numbers, wrong types, expressions good and bad). Each
// request waits for its response; the session ends with disconnect. A response that never comes is
// a hang, which libFuzzer reports as a timeout.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dap/session/session.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"

using namespace scanback;
using namespace scanback::dap;
namespace fs = std::filesystem;

namespace {

const char* kProgram = R"(TYPE Point : STRUCT x : INT; y : REAL; END_STRUCT; END_TYPE
FUNCTION_BLOCK Counter
VAR_INPUT step : INT; END_VAR
VAR_OUTPUT total : DINT; END_VAR
total := total + step;
END_FUNCTION_BLOCK
PROGRAM Main
VAR
  n : INT;
  c : Counter;
  t : TON;
  p : Point;
  a : ARRAY[0..3] OF INT;
  s : STRING := 'abc';
END_VAR
n := n + 1;
c(step := n);
t(IN := n MOD 3 = 0, PT := T#20ms);
a[n MOD 4] := n;
p.x := n * 2;
IF n > 7 THEN
  n := 0;
END_IF
END_PROGRAM
PROGRAM Other
VAR k : DINT; END_VAR
k := k + 10;
END_PROGRAM
CONFIGURATION Cell
  RESOURCE R ON PLC
    TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
    TASK Slow (INTERVAL := T#30ms, PRIORITY := 2);
    PROGRAM M WITH Fast : Main;
    PROGRAM O WITH Slow : Other;
  END_RESOURCE
END_CONFIGURATION
)";

// The program file and the trace path, in a directory of this process.
struct Files {
  fs::path dir, program, trace;
  Files() {
    // In memory when possible: closing a trace syncs it to disk, which would dominate each input.
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir = base / ("scanback-fuzz-dap-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    program = dir / "main.st";
    trace = dir / "session.trace";
    std::ofstream(program) << kProgram;
  }
  ~Files() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};
const Files& files() {
  static const Files f;
  return f;
}

// Reads the input a byte at a time; 0 once it is used up.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  template <class T, size_t N>
  const T& pick(const T (&options)[N]) {
    return options[next() % N];
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

json integer(Bytes& in) {
  static const json values[] = {0,
                                1,
                                2,
                                3,
                                4,
                                5,
                                -1,
                                1000,
                                1.5,
                                2.0,
                                "1",
                                nullptr,
                                INT64_MAX,
                                -9223372036854775807LL,
                                18446744073709551615ULL,
                                true,
                                1e300};
  return in.pick(values);
}

json expression(Bytes& in) {
  static const json values[] = {"n",       "n + 1", "c.total",     "M.n", "a[2]",   "a[99]",         "p",
                                "p.x > 3", "t.ET",  "gMissing",    "(",   "n := 5", "'text'",        "s",
                                "%IX0.0",  "n / 0", "T#1s + t.ET", "",    "O.k",    "INT#32767 + 1", "a[n MOD 4]",
                                "REF(n)",  "c",     "1.5e3"};
  return in.pick(values);
}

json threadId(Bytes& in) { return in.next() % 4 == 0 ? integer(in) : json(1 + in.next() % 2); }

json request(Bytes& in, std::string& command) {
  const std::string source = files().program.string();
  switch (in.next() % 26) {
    case 0: command = "threads"; return json::object();
    case 1:
      command = "stackTrace";
      return {{"threadId", threadId(in)}, {"startFrame", integer(in)}, {"levels", integer(in)}};
    case 2: command = "scopes"; return {{"frameId", integer(in)}};
    case 3:
      command = "variables";
      return {{"variablesReference", integer(in)}, {"start", integer(in)}, {"count", integer(in)}};
    case 4: command = "next"; return {{"threadId", threadId(in)}};
    case 5: command = "stepIn"; return {{"threadId", threadId(in)}};
    case 6: command = "stepOut"; return {{"threadId", threadId(in)}};
    case 7: command = "continue"; return {{"threadId", threadId(in)}};
    case 8: command = "pause"; return {{"threadId", threadId(in)}};
    case 9: command = "stepBack"; return {{"threadId", threadId(in)}};
    case 10: command = "reverseContinue"; return {{"threadId", threadId(in)}};
    case 11:
      command = "evaluate";
      return {{"expression", expression(in)}, {"frameId", integer(in)}, {"context", "watch"}};
    case 12: {
      command = "setBreakpoints";
      json list = json::array();
      for (int i = in.next() % 4; i > 0; --i) {
        json b = {{"line", integer(in)}};
        if (in.next() % 2) b["condition"] = expression(in);
        if (in.next() % 3 == 0) b["hitCondition"] = in.pick({">= 2", "3", "% 2", "x", "> -1"});
        if (in.next() % 4 == 0) b["logMessage"] = "n is {n}, {(}";
        list.push_back(b);
      }
      return {{"source", {{"path", source}}}, {"breakpoints", list}};
    }
    case 13:
      command = "setExceptionBreakpoints";
      return {{"filters", in.next() % 2 ? json::array({"faults"}) : json::array()}};
    case 14:
      command = "setVariable";
      return {{"variablesReference", integer(in)}, {"name", expression(in)}, {"value", expression(in)}};
    case 15:
      command = "setExpression";
      return {{"expression", expression(in)}, {"value", expression(in)}, {"frameId", integer(in)}};
    case 16: command = "dataBreakpointInfo"; return {{"name", expression(in)}, {"frameId", integer(in)}};
    case 17: {
      command = "setDataBreakpoints";
      static const char* ids[] = {"0:0:2:-1:M.n", "0:4:4:-1:c.total", "1:0:2:-1:M.n", "0:999999:2:-1:x", "bad"};
      json list = json::array();
      for (int i = in.next() % 3; i > 0; --i) list.push_back({{"dataId", in.pick(ids)}});
      return {{"breakpoints", list}};
    }
    case 18:
      command = "breakpointLocations";
      return {{"source", {{"path", source}}}, {"line", integer(in)}, {"endLine", integer(in)}};
    case 19: command = "source"; return {{"sourceReference", integer(in)}};
    case 20: command = "restartFrame"; return {{"frameId", integer(in)}};
    case 21: command = "exceptionInfo"; return {{"threadId", threadId(in)}};
    case 22: command = "scanback/seek"; return {{"cycle", integer(in)}, {"step", integer(in)}};
    case 23: command = "scanback/timeline"; return json::object();
    case 24:
      command = in.next() % 2 ? "scanback/stepBackIn" : "scanback/stepBackOut";
      return {{"threadId", threadId(in)}};
    default: command = "stReload"; return json::object();
  }
}

// Reads the session's messages on its own thread, so that a wait can end at a deadline.
class Client {
 public:
  explicit Client(net::Stream& stream) : writer_(stream) {
    reader_ = std::thread([this, &stream] {
      net::MessageReader reader(stream);
      for (;;) {
        net::ReadResult r = reader.next();
        std::lock_guard lock(mutex_);
        if (r.isEnd()) {
          ended_ = true;
          arrived_.notify_all();
          return;
        }
        if (r.isMessage()) {
          messages_.push_back(std::move(r.message));
          arrived_.notify_all();
        }
      }
    });
  }
  ~Client() { reader_.join(); }  // ends once the stream is closed

  // Sends the request and waits for its response; after one that resumes the target, also for the
  // stop (or the end) it leads to, for at most a second, so that the next request finds the target
  // paused when it pauses at all. False once the session has ended.
  bool call(const std::string& command, const json& arguments) {
    const int64_t seq = seq_++;
    if (!writer_.send(json{{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", arguments}}))
      return false;
    std::unique_lock lock(mutex_);
    const json* response = nullptr;
    arrived_.wait(lock, [&] {
      response =
          find([&](const json& m) { return m.value("type", "") == "response" && m.value("request_seq", -1) == seq; });
      return response || ended_;
    });
    if (!response) return false;
    if (verbose_)
      std::fprintf(stderr, "%s %s -> %s\n", command.c_str(), arguments.dump().c_str(), response->dump().c_str());
    const bool resumed = response->value("success", false) && resumes(command) && (command != "pause" || running_);
    if (response->value("success", false) && resumes(command) && command != "pause") running_ = true;
    // What came before the response is done with; a stop after it is what a resume waits for.
    messages_.erase(messages_.begin(), messages_.begin() + (response - messages_.data()) + 1);
    if (resumed) {
      const bool stopped = arrived_.wait_for(lock, std::chrono::seconds(1), [&] {
        return ended_ || find([](const json& m) {
                           const std::string event = m.value("event", "");
                           return event == "stopped" || event == "terminated" || event == "exited";
                         }) != nullptr;
      });
      if (verbose_ && !stopped) std::fprintf(stderr, "  (no stop within a second)\n");
      if (stopped) running_ = false;
      messages_.clear();
    }
    return !ended_;
  }

 private:
  static bool resumes(const std::string& command) {
    for (const char* c : {"continue", "next", "stepIn", "stepOut", "pause", "stepBack", "reverseContinue",
                          "scanback/stepBackIn", "scanback/stepBackOut", "restartFrame", "scanback/seek"})
      if (command == c) return true;
    return false;
  }
  template <class Match>
  const json* find(Match match) const {
    for (const json& m : messages_)
      if (match(m)) return &m;
    return nullptr;
  }

  net::MessageWriter writer_;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<json> messages_;
  bool ended_ = false;
  bool running_ = false;  // a resume was answered and no stop has come since
  int64_t seq_ = 1;
  // SCANBACK_FUZZ_VERBOSE=1: every request and its response on stderr (to see what an input does).
  const bool verbose_ = std::getenv("SCANBACK_FUZZ_VERBOSE") != nullptr;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  const bool record = in.next() % 2 == 1;
  net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
  std::thread server([&] {
    Session session(*pipe.server, [](const std::string&) {});
    session.run();
    pipe.server->close();
  });
  {
    Client client(*pipe.client);
    bool open = client.call("initialize", json{{"adapterID", "fuzz"}, {"linesStartAt1", in.next() % 4 != 0}});
    json launch = {{"program", files().program.string()}, {"stopOnEntry", true}, {"realtime", false}, {"cycles", 60}};
    launch["record"] = record ? json(files().trace.string()) : json(false);
    if (open) open = client.call("launch", launch);
    if (open) open = client.call("configurationDone", json::object());
    for (int requests = 0; open && !in.empty() && requests < 64; ++requests) {
      std::string command;
      const json arguments = request(in, command);
      open = client.call(command, arguments);
    }
    if (open) client.call("disconnect", json{{"terminateDebuggee", true}});
    pipe.client->close();  // ends the session if it still runs, and the client's reader
  }
  server.join();
  return 0;
}
