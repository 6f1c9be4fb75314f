// Time travel across the live edge (issue 27, section 4) in a live session with history: every
// kind of stop, forward from history through the live position into live execution, and backward
// from live execution into history. (Nonstop sessions: replay_test.cpp, DapNonstopEdge; attached
// ones: attach_test.cpp, AttachEdge.) Sessions over an in-memory pipe; every message validated
// against the official schema. Positions are (cycle, step) as scanback/timeline gives them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/dap/session_client.h"
#include "tests/support/control_runtime.h"
#include "tests/support/wait.h"

using namespace scanback;
using namespace scanback::dap;
using namespace scanback::dap::testing;

// (Named, not anonymous: the unity build compiles this file with the other DAP tests, whose
// file-scope names would collide.)
namespace live_edge_tests {
namespace {

// One task. The statement boundaries of cycle n (c = n + 1 once step 0 has run):
//   step 0  line 16  c := c + 1
//   step 1  line 17  acc(add := c)        the call
//   step 2  line 4     sum := sum + add   in the FB
//   step 3  line 5     IF sum > ...       in the FB
//   step 4  line 18  y := c * 10
//   step 5  line 19  z := 5
//   step 6  line 20  z := 0               (writes back the value z had before step 5)
//   step 7  line 21  IF c MOD 4 = 1
//   step 8  line 22  x := x + 1           only in cycles 0, 4, 8, ...: the cycle's last statement,
//                                         whose write is seen at the cycle's end, step 9
const char* kEdgeSource = R"(FUNCTION_BLOCK Acc
VAR_INPUT add : DINT; END_VAR
VAR_OUTPUT sum : DINT; END_VAR
sum := sum + add;
IF sum > 1000000 THEN sum := 0; END_IF;
END_FUNCTION_BLOCK

PROGRAM EdgeProg
VAR
  c : DINT;
  y : DINT;
  z : DINT;
  x : DINT;
  acc : Acc;
END_VAR
c := c + 1;
acc(add := c);
y := c * 10;
z := 5;
z := 0;
IF c MOD 4 = 1 THEN
  x := x + 1;
END_IF;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : EdgeProg;
END_CONFIGURATION
)";

// Faults with a division by zero at line 8 in cycle 19 (count = 20).
const char* kEdgeFaulty = R"(PROGRAM Faulty
VAR
  count : DINT;
  zero : DINT;
  q : DINT;
END_VAR
count := count + 1;
IF count = 20 THEN q := 10 / zero; END_IF;
q := q + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Faulty;
END_CONFIGURATION
)";

// A function called twice in one statement, two statements each. Boundaries of cycle n: 0 the
// caller (line 12), 1 and 2 the first call (lines 3, 4), 3 and 4 the second, 5 line 13.
const char* kEdgeCalls = R"(FUNCTION F : DINT
VAR_INPUT v : DINT; END_VAR
F := v + 1;
F := F * 2;
END_FUNCTION

PROGRAM Calls
VAR
  a : DINT;
  b : DINT;
END_VAR
a := F(a MOD 1000) + F(b);
b := b + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Calls;
END_CONFIGURATION
)";
constexpr int kLineFFirst = 3, kLineFLast = 4, kLineB = 13;

// Two tasks: Fast every 10 ms (cycles 0, 2, 3, 4, 5, 6, 8, ...), Slow every 50 ms after it
// (cycles 1, 7, 13, ...: released with Fast, of lower priority).
const char* kEdgeTasks = R"(PROGRAM FastProg
VAR f : DINT; END_VAR
f := f + 1;
f := f * 1;
END_PROGRAM

PROGRAM SlowProg
VAR s : DINT; END_VAR
s := s + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  TASK Slow (INTERVAL := T#50ms, PRIORITY := 2);
  PROGRAM Main WITH Fast : FastProg;
  PROGRAM Watch WITH Slow : SlowProg;
END_CONFIGURATION
)";
constexpr int kLineFTimes = 4, kLineS = 9;

constexpr int kLineSum = 4, kLineIfSum = 5, kLineC = 16, kLineCall = 17, kLineY = 18, kLineZ5 = 19, kLineZ0 = 20,
              kLineIf = 21, kLineX = 22, kLineEnd = 24;
// The line of each step of a cycle, and the step count of cycle n (plus one for its end).
const std::vector<int> kStepLines = {kLineC,  kLineCall, kLineSum, kLineIfSum, kLineY,
                                     kLineZ5, kLineZ0,   kLineIf,  kLineX};
uint64_t stepsOf(uint64_t cycle) { return cycle % 4 == 0 ? 9 : 8; }
// Which hit of its line step `step` of cycle `cycle` is (every line runs once a cycle, x's every
// fourth).
uint64_t hitOf(uint64_t cycle, uint64_t step) { return step == 8 ? cycle / 4 + 1 : cycle + 1; }

using Position = std::pair<uint64_t, uint64_t>;

// Where a move stopped: the position and the reason ("exited" when the program ended).
struct Landing {
  Position at;
  std::string reason;
  bool operator==(const Landing&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Landing& l) {
  return out << "(" << l.at.first << ", " << l.at.second << ") " << l.reason;
}

// A session client with the requests these tests make.
class EdgeClient {
 public:
  explicit EdgeClient(const TempProject& project) : project_(project) {}
  ~EdgeClient() { EXPECT_EQ(client.schemaErrors(), ""); }

  // A live launch of `file` as fast as it goes, recording (the default); 400 cycles at most, so that
  // a move that misses its stop ends the program rather than a test's patience.
  void launch(const std::string& file = "edge.st", json extra = json::object()) {
    file_ = file;
    json args{{"program", project_.path(file)}, {"realtime", false}, {"cycles", 400}};
    args.update(extra);
    client.start(args);
  }
  json timeline() {
    const json r = client.request("scanback/timeline");
    EXPECT_TRUE(r["success"]) << r.dump();
    return r["body"];
  }
  // The newest recorded cycle; nullopt while the recording holds none.
  std::optional<uint64_t> lastCycle() {
    const json r = client.request("scanback/timeline");
    if (!r.value("success", false)) return std::nullopt;
    return r["body"].value("lastCycle", uint64_t{0});
  }
  Position position() {
    const json t = timeline();
    return {t.value("cycle", uint64_t{0}), t.value("step", uint64_t{0})};
  }
  std::string evaluate(const std::string& expression) {
    const json r = client.request("evaluate", json{{"expression", expression}, {"frameId", 1}});
    EXPECT_TRUE(r["success"]) << expression << ": " << r.dump();
    return r["body"].value("result", std::string("?"));
  }
  int line(int64_t thread = 1) {
    const json r = client.request("stackTrace", json{{"threadId", thread}});
    return r["body"].value("stackFrames", json::array()).empty() ? -1 : r["body"]["stackFrames"][0]["line"].get<int>();
  }
  // Sends a move; its stopped event (the response came first), or the exited event.
  json move(const std::string& command, json args = json{{"threadId", 1}}) {
    const size_t from = client.messages().size();
    const int64_t seq = client.send(command, args);
    const json response = client.response(seq);
    EXPECT_TRUE(response["success"]) << command << ": " << response.dump();
    const json ended = client.awaitMessage(
        [](const json& m) { return m.value("event", "") == "stopped" || m.value("event", "") == "exited"; }, from);
    EXPECT_FALSE(ended.is_null()) << command << ": no stop";
    if (ended.is_null()) return json{{"event", "none"}, {"body", json::object()}};
    if (ended["event"] == "stopped") {
      client.event("stopped");  // (taken)
      EXPECT_LT(client.indexOfResponse(seq), client.indexOfEvent("stopped", from)) << command;
    }
    return ended;
  }
  // A move, and where it stopped.
  Landing land(const std::string& command, json args = json{{"threadId", 1}}) {
    const json stopped = move(command, std::move(args));
    if (stopped["event"] != "stopped") return Landing{{0, 0}, stopped["event"].get<std::string>()};
    return Landing{position(), stopped["body"]["reason"].get<std::string>()};
  }
  json setBreakpoints(json breakpoints) {
    const json r = client.request("setBreakpoints",
                                  json{{"source", json{{"path", project_.path(file_)}}}, {"breakpoints", breakpoints}});
    EXPECT_TRUE(r["success"]) << r.dump();
    return r;
  }
  // Breaks at `line` in cycle `cycle` (its hit number there), once.
  void breakAt(int line, uint64_t hit) {
    setBreakpoints(json::array({{{"line", line}, {"hitCondition", "=" + std::to_string(hit)}}}));
  }
  // A data breakpoint on `names` (replacing those set before); its ids.
  std::vector<int64_t> watch(const std::vector<std::string>& names) {
    json breakpoints = json::array();
    for (const std::string& name : names) {
      const json info = client.request("dataBreakpointInfo", json{{"name", name}, {"frameId", 1}});
      EXPECT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
      breakpoints.push_back(json{{"dataId", info["body"]["dataId"]}});
    }
    const json r = client.request("setDataBreakpoints", json{{"breakpoints", breakpoints}});
    std::vector<int64_t> ids;
    for (const json& b : r["body"]["breakpoints"]) ids.push_back(b.value("id", int64_t{-1}));
    return ids;
  }
  // The text of every output event from message `from` on that starts with `prefix`.
  std::vector<std::string> outputs(const std::string& prefix, size_t from = 0) {
    std::vector<std::string> out;
    const std::vector<json> all = client.messages();
    for (size_t i = from; i < all.size(); ++i) {
      const json& m = all[i];
      if (m.value("event", "") != "output") continue;
      const std::string text = m["body"].value("output", "");
      if (text.starts_with(prefix)) out.push_back(text);
    }
    return out;
  }
  // A replay session of `trace`.
  void replay(const std::string& trace) { client.start(json{{"trace", trace}}); }
  // Attaches to a runtime's control endpoint (`file` is the program it runs, for breakpoints).
  void attach(const std::string& endpoint, const std::string& file = "edge.st") {
    file_ = file;
    const json init = client.request("initialize", json{{"adapterID", "scanback"}});
    ASSERT_TRUE(init["success"]) << init.dump();
    const json r = client.request("attach", json{{"endpoint", endpoint}}, std::chrono::seconds(30));
    ASSERT_TRUE(r["success"]) << r.dump();
    client.event("initialized");
  }
  // Configured, and the first stop (within `timeout`).
  json firstStop(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    client.configured();
    return client.event("stopped", timeout);
  }

  SessionClient client;

 private:
  const TempProject& project_;
  std::string file_ = "edge.st";
};

class LiveEdge : public ::testing::Test {
 protected:
  TempProject project_{
      {{"edge.st", kEdgeSource}, {"faulty.st", kEdgeFaulty}, {"calls.st", kEdgeCalls}, {"tasks.st", kEdgeTasks}}};
  EdgeClient s_{project_};
};

// ---------------------------------------------------------------- explaining (docs/explain.md)

// Paused live in the middle of cycle 6, which the trace file does not hold yet: scanback/why and
// scanback/flow answer there (the adapter gives its reader the cycle under way), without moving.
TEST_F(LiveEdge, WhyAndFlowAnswerInTheCycleUnderWayAtTheLivePosition) {
  s_.launch();
  s_.setBreakpoints(json::array({{{"line", kLineZ0}, {"condition", "c = 7"}}}));  // cycle 6
  EXPECT_EQ(s_.firstStop()["body"]["reason"], "breakpoint");
  EXPECT_EQ(s_.position(), (Position{6, 6}));
  const std::string file = project_.path("edge.st");
  const json why = s_.client.request("scanback/why", json{{"variable", "y"}, {"depth", 2}});
  ASSERT_TRUE(why["success"]) << why.dump();
  // y = 70 from `y := c * 10` at (6, 4), which read c = 7 from `c := c + 1` at (6, 0).
  const json c{{"value", "7"},          {"variable", "Main.c"}, {"cycle", 6},           {"step", 0},
               {"file", file},          {"line", 16},           {"text", "c := c + 1"}, {"origin", "statement"},
               {"reads", json::array()}};
  const json y{{"value", "70"},
               {"variable", "Main.y"},
               {"cycle", 6},
               {"step", 4},
               {"file", file},
               {"line", 18},
               {"text", "y := c * 10"},
               {"origin", "statement"},
               {"reads", json::array({c})}};
  EXPECT_EQ(why["body"]["root"], y) << why.dump(2);
  const json flow = s_.client.request("scanback/flow", json{{"frameId", 1}});
  ASSERT_TRUE(flow["success"]) << flow.dump();
  EXPECT_EQ(flow["body"]["cycle"], 6);
  json ran = json::array(), notRan = json::array();
  for (int line : {16, 17, 18, 19, 20}) ran.push_back(json{{"file", file}, {"line", line}});
  for (int line : {21, 22}) notRan.push_back(json{{"file", file}, {"line", line}});
  EXPECT_EQ(flow["body"]["ran"], ran) << flow.dump();
  EXPECT_EQ(flow["body"]["notRan"], notRan) << flow.dump();
  EXPECT_EQ(s_.position(), (Position{6, 6})) << "the position did not move";
  // And live on: the next cycle under way answers as well.
  s_.setBreakpoints(json::array({{{"line", kLineZ0}, {"condition", "c = 8"}}}));
  EXPECT_EQ(s_.land("continue"), (Landing{{7, 6}, "breakpoint"}));
  const json again = s_.client.request("scanback/why", json{{"variable", "c"}, {"depth", 1}});
  ASSERT_TRUE(again["success"]) << again.dump();
  EXPECT_EQ(again["body"]["root"]["value"], "8");
  EXPECT_EQ(again["body"]["root"]["cycle"], 7);
}

// scanback/why names the debugger as the author of its writes (ImageWrite.author): one made at the
// entry stop and one at the first statement boundary of cycle 5. A live session stops at a
// statement boundary (the entry too: before the first statement of cycle 0), so both are applied
// there and are `write`s, at step 0 (a write between cycles, queued for the next cycle start, is
// an external write at the cycle start: tests/replayer/why_test.cpp names its author too). x is
// written by the program only in cycles 0, 4, 8, ... (at their last step, 8).
TEST_F(LiveEdge, WhyNamesTheDebuggerAsTheAuthorOfItsWrites) {
  s_.launch("edge.st", json{{"stopOnEntry", true}});
  EXPECT_EQ(s_.firstStop()["body"]["reason"], "entry");
  json set = s_.client.request("setExpression", json{{"expression", "x"}, {"value", "300"}, {"frameId", 1}});
  ASSERT_TRUE(set["success"]) << set.dump();
  s_.setBreakpoints(json::array({{{"line", kLineC}, {"condition", "c = 5"}}}));
  EXPECT_EQ(s_.land("continue"), (Landing{{5, 0}, "breakpoint"}));
  set = s_.client.request("setExpression", json{{"expression", "x"}, {"value", "100"}, {"frameId", 1}});
  ASSERT_TRUE(set["success"]) << set.dump();
  s_.setBreakpoints(json::array({{{"line", kLineC}, {"condition", "c = 8"}}}));
  EXPECT_EQ(s_.land("continue"), (Landing{{8, 0}, "breakpoint"}));
  json why = s_.client.request("scanback/why", json{{"variable", "x"}, {"depth", 1}});
  ASSERT_TRUE(why["success"]) << why.dump();
  EXPECT_EQ(why["body"]["root"], (json{{"value", "100"},
                                       {"variable", "Main.x"},
                                       {"cycle", 5},
                                       {"step", 0},
                                       {"origin", "write"},
                                       {"author", "debugger"},
                                       {"reads", json::array()}}))
      << why.dump(2);
  why = s_.client.request("scanback/why", json{{"variable", "x"}, {"depth", 1}, {"cycle", 0}, {"step", 1}});
  ASSERT_TRUE(why["success"]) << why.dump();
  EXPECT_EQ(why["body"]["root"], (json{{"value", "300"},
                                       {"variable", "Main.x"},
                                       {"cycle", 0},
                                       {"step", 0},
                                       {"origin", "write"},
                                       {"author", "debugger"},
                                       {"reads", json::array()}}))
      << why.dump(2);
}

// ---------------------------------------------------------------- data breakpoints

// The issue's report: stopped at the live position in cycle 6, a data breakpoint finds the last
// write backwards (cycle 4); continue from there stops at the next write, cycle 8, past the live
// position. x is written by its cycle's last statement: the stop is at the end of that cycle.
TEST_F(LiveEdge, ADataBreakpointFoundBackwardsStopsAtTheNextWritePastTheLivePosition) {
  s_.launch();
  s_.setBreakpoints(json::array({{{"line", kLineC}, {"condition", "c = 6"}}}));
  EXPECT_EQ(s_.firstStop()["body"]["reason"], "breakpoint");
  EXPECT_EQ(s_.position(), (Position{6, 0}));
  s_.setBreakpoints(json::array());
  const std::vector<int64_t> ids = s_.watch({"Main.x"});
  json stopped = s_.move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(stopped["body"]["hitBreakpointIds"], json(ids));
  EXPECT_EQ(s_.position(), (Position{4, 9}));
  EXPECT_EQ(s_.evaluate("x"), "2");
  stopped = s_.move("continue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(s_.position(), (Position{8, 9})) << "the end of cycle 8, live";
  EXPECT_EQ(s_.evaluate("x"), "3");
  EXPECT_EQ(s_.line(), kLineEnd) << "the end of the cycle: its last statement wrote x";
  // And on, live; then back over what was recorded meanwhile, the live position being a cycle's end.
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 9}, "data breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{8, 9}, "data breakpoint"}));
  EXPECT_EQ(s_.evaluate("x"), "3");
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{4, 9}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{8, 9}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 9}, "data breakpoint"})) << "the live position: stopped at again";
  EXPECT_EQ(s_.evaluate("x"), "4");
  EXPECT_EQ(s_.land("continue"), (Landing{{16, 9}, "data breakpoint"})) << "then live, once";
  EXPECT_EQ(s_.evaluate("x"), "5");
  // A step from the end of a cycle goes to the task's next statement, live as in history.
  EXPECT_EQ(s_.land("next"), (Landing{{17, 0}, "step"}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{16, 8}, "step"}));
  EXPECT_EQ(s_.land("next"), (Landing{{16, 9}, "data breakpoint"})) << "the write on the way";
  EXPECT_EQ(s_.land("next"), (Landing{{17, 0}, "step"})) << "the live position";
  EXPECT_EQ(s_.land("next"), (Landing{{17, 1}, "step"})) << "live";
}

// y is written at step 4; the live position is at step 1 of the same cycle.
TEST_F(LiveEdge, ADataBreakpointStopsAtAWriteLaterInTheCycleUnderWayAtTheLivePosition) {
  s_.launch();
  s_.breakAt(kLineCall, hitOf(10, 1));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{10, 1}));
  s_.setBreakpoints(json::array());
  s_.watch({"Main.y"});
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 0}, "step"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{10, 5}, "data breakpoint"})) << "live, after y := c * 10";
  EXPECT_EQ(s_.evaluate("y"), "110");
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 5}, "data breakpoint"}));
}

// The live position is past the write of its cycle: the next write is in the first live cycle.
TEST_F(LiveEdge, ADataBreakpointStopsAtAWriteInTheFirstLiveCycleAfterTheLivePosition) {
  s_.launch();
  s_.breakAt(kLineZ0, hitOf(10, 6));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{10, 6}));
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 5}, "step"}));
  s_.watch({"Main.y"});
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 5}, "data breakpoint"}));
  EXPECT_EQ(s_.evaluate("y"), "120");
  // From further back, the write of the cycle under way is history's.
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{10, 5}, "data breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{9, 5}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{10, 5}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 5}, "data breakpoint"})) << "the live position";
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 5}, "data breakpoint"}));
}

// A data breakpoint set in history compares live execution with the live values, not those where
// it was set: z is 5 at the live position and 0 where the breakpoint is set, and the live write
// that puts 0 back is a change.
TEST_F(LiveEdge, ADataBreakpointSetInHistoryStopsLiveAtAWriteThatRestoresTheValueItHadThere) {
  s_.launch();
  s_.breakAt(kLineZ0, hitOf(10, 6));
  s_.firstStop();
  EXPECT_EQ(s_.evaluate("z"), "5");
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 5}, "step"}));
  EXPECT_EQ(s_.evaluate("z"), "0");
  s_.watch({"Main.z"});
  EXPECT_EQ(s_.land("continue"), (Landing{{10, 6}, "data breakpoint"})) << "z := 5, in history, at the live position";
  EXPECT_EQ(s_.land("continue"), (Landing{{10, 7}, "data breakpoint"})) << "z := 0, live";
  EXPECT_EQ(s_.evaluate("z"), "0");
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 6}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 7}, "data breakpoint"}));
}

// A debugger's own write is no change for a live data breakpoint, inside a cycle or queued for the
// next cycle start; what the program writes next is.
TEST_F(LiveEdge, ADebuggersWriteIsNoChangeToStopAtLiveButTheProgramsNextWriteIs) {
  s_.launch();
  s_.breakAt(kLineZ5, hitOf(10, 5));
  s_.firstStop();
  s_.setBreakpoints(json::array());
  s_.watch({"Main.z", "Main.y"});
  const json write = s_.client.request("setExpression", json{{"expression", "z"}, {"value", "9"}, {"frameId", 1}});
  EXPECT_TRUE(write["success"]) << write.dump();
  EXPECT_EQ(s_.land("continue"), (Landing{{10, 6}, "data breakpoint"})) << "z := 5: a change from 9";
  EXPECT_EQ(s_.land("continue"), (Landing{{10, 7}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 5}, "data breakpoint"})) << "y; x, written at 10:9, is not watched";
}

// ---------------------------------------------------------------- line breakpoints and logpoints

TEST_F(LiveEdge, ALineBreakpointPastTheLivePositionStopsLiveAndOneAtTheLivePositionStopsThereFirst) {
  s_.launch();
  s_.breakAt(kLineZ5, hitOf(10, 5));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{10, 5}));
  const json set = s_.setBreakpoints(json::array({{{"line", kLineY}}}));
  const int64_t id = set["body"]["breakpoints"][0]["id"];
  // From history before the live position's hit: the next hit is live, in the next cycle.
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 4}, "step"}));
  json stopped = s_.move("continue");
  EXPECT_EQ(stopped["body"]["reason"], "breakpoint");
  EXPECT_EQ(stopped["body"]["hitBreakpointIds"], json::array({id}));
  EXPECT_EQ(s_.position(), (Position{11, 4}));
  // The live position is a hit: continuing from before it stops there, then live at the next.
  s_.setBreakpoints(json::array({{{"line", kLineY}}, {{"line", kLineZ5}}}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{11, 1}, "step"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 4}, "breakpoint"})) << "the live position";
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 5}, "breakpoint"})) << "then live";
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 4}, "breakpoint"}));
}

TEST_F(LiveEdge, AConditionalBreakpointStopsWhereItsConditionHoldsOnBothSidesOfTheLivePosition) {
  s_.launch();
  s_.breakAt(kLineZ5, hitOf(10, 5));
  s_.firstStop();
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"condition", "c MOD 3 = 0"}}}));
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{8, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{5, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{8, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 4}, "breakpoint"})) << "live";
  EXPECT_EQ(s_.evaluate("c"), "12");
  EXPECT_EQ(s_.land("continue"), (Landing{{14, 4}, "breakpoint"}));
}

// A breakpoint set before the program starts numbers its hits from the start, live and in history
// alike: the hit at the live position is counted once.
TEST_F(LiveEdge, AHitCountSetAtTheStartNumbersEachHitOnceOnBothSidesOfTheLivePosition) {
  s_.launch();
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"hitCondition", "%5"}}}));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{4, 4})) << "hit 5";
  EXPECT_EQ(s_.land("continue"), (Landing{{9, 4}, "breakpoint"})) << "hit 10";
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{4, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{9, 4}, "breakpoint"})) << "the live position's hit, in history";
  EXPECT_EQ(s_.land("continue"), (Landing{{14, 4}, "breakpoint"})) << "hit 15, live";
  EXPECT_EQ(s_.land("stepBack"), (Landing{{14, 1}, "step"}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{14, 0}, "step"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{14, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{19, 4}, "breakpoint"})) << "hit 20";
}

// A breakpoint set while the task is paused counts its hits from there (docs/dap.md), live and in
// history: none before, the one where it is set not either.
TEST_F(LiveEdge, AHitCountSetAtTheLivePositionCountsFromThereInHistoryAsLive) {
  s_.launch();
  s_.breakAt(kLineY, hitOf(9, 4));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{9, 4}));
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"hitCondition", "=3"}}}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{9, 1}, "step"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 4}, "breakpoint"})) << "the third hit after 9:4, live";
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{0, 0}, "step"})) << "no third hit before";
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 4}, "breakpoint"})) << "the same, from history";
  EXPECT_EQ(s_.land("continue").reason, "exited") << "no other third hit";
}

// A logpoint prints each hit a forward continue passes once, with the values there: in history up
// to the live position, then live.
TEST_F(LiveEdge, ALogpointPrintsEachHitOnceWithItsValuesFromHistoryThroughTheLivePositionIntoLiveExecution) {
  s_.launch();
  s_.setBreakpoints(json::array({{{"line", kLineZ5}, {"condition", "c = 11"}}}));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{10, 5}));
  s_.setBreakpoints(
      json::array({{{"line", kLineY}, {"logMessage", "y {y} c {c}"}}, {{"line", kLineZ5}, {"condition", "c = 14"}}}));
  s_.move("scanback/seek", json{{"cycle", 7}, {"step", 2}});
  const size_t from = s_.client.messages().size();
  EXPECT_EQ(s_.land("continue"), (Landing{{13, 5}, "breakpoint"}));
  std::vector<std::string> expected;
  for (int c = 8; c <= 14; ++c)
    expected.push_back("y " + std::to_string((c - 1) * 10) + " c " + std::to_string(c) + "\n");
  EXPECT_EQ(s_.outputs("y ", from), expected) << "cycles 7 to 10 replayed, 11 to 13 live";
}

// ---------------------------------------------------------------- steps

// A step over the FB call, made in history before the call, where the live position is inside the
// FB: the live task finishes it, at the caller's next statement.
TEST_F(LiveEdge, NextOverAnFbCallThatReturnsPastTheLivePositionEndsLiveAtTheCallersNextStatement) {
  s_.launch();
  s_.breakAt(kLineIfSum, hitOf(10, 3));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{10, 3}));
  s_.setBreakpoints(json::array());
  s_.move("scanback/seek", json{{"cycle", 10}, {"step", 1}});
  EXPECT_EQ(s_.land("next"), (Landing{{10, 4}, "step"}));
  EXPECT_EQ(s_.line(), kLineY);
  EXPECT_EQ(s_.evaluate("y"), "100") << "not yet written";
}

TEST_F(LiveEdge, StepOutOfAnFbPastTheLivePositionEndsLiveInTheCaller) {
  s_.launch();
  s_.breakAt(kLineIfSum, hitOf(10, 3));
  s_.firstStop();
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 2}, "step"}));
  EXPECT_EQ(s_.line(), kLineSum);
  EXPECT_EQ(s_.land("stepOut"), (Landing{{10, 4}, "step"}));
  EXPECT_EQ(s_.line(), kLineY);
}

TEST_F(LiveEdge, StepInToTheLivePositionThenOnIntoTheFbLive) {
  s_.launch();
  s_.breakAt(kLineCall, hitOf(10, 1));
  s_.firstStop();
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 0}, "step"}));
  EXPECT_EQ(s_.land("stepIn"), (Landing{{10, 1}, "step"})) << "the live position";
  EXPECT_EQ(s_.land("stepIn"), (Landing{{10, 2}, "step"})) << "live, into the FB";
  EXPECT_EQ(s_.line(), kLineSum);
  EXPECT_EQ(s_.land("stepOut"), (Landing{{10, 4}, "step"}));
}

// Steps whose end is in the next cycle of the task, past a live position at the end of the last
// statement of a cycle (its last boundary) or at the cycle's end.
TEST_F(LiveEdge, StepsIntoTheNextCyclePastTheLivePosition) {
  s_.launch();
  s_.breakAt(kLineIf, hitOf(9, 7));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{9, 7})) << "the last statement of cycle 9";
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("stepBack"), (Landing{{9, 6}, "step"}));
  EXPECT_EQ(s_.land("stepOut"), (Landing{{10, 0}, "step"})) << "out of the program: its next cycle, live";
  // Live positions at the end of cycles 12 and 16 (x written by their last statement).
  s_.watch({"Main.x"});
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 9}, "data breakpoint"}));
  s_.watch({});
  EXPECT_EQ(s_.land("stepBack"), (Landing{{12, 8}, "step"}));
  EXPECT_EQ(s_.land("next"), (Landing{{13, 0}, "step"})) << "live, past the end of cycle 12";
  s_.watch({"Main.x"});
  EXPECT_EQ(s_.land("continue"), (Landing{{16, 9}, "data breakpoint"}));
  s_.watch({});
  EXPECT_EQ(s_.land("stepBack"), (Landing{{16, 8}, "step"}));
  EXPECT_EQ(s_.land("stepIn"), (Landing{{17, 0}, "step"})) << "live, past the end of cycle 16";
}

// `next` at the last statement of a function whose call is followed by another call in the same
// statement returns to the caller's next statement, not into the second call (the frame the step
// began in has returned): live, and from history with the live position inside the second call.
TEST_F(LiveEdge, NextFromTheEndOfAFunctionDoesNotStopInAFunctionTheSameStatementCallsNext) {
  s_.launch("calls.st");
  s_.breakAt(kLineFLast, 2 * 10 + 1);
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{10, 2}));
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("next"), (Landing{{10, 5}, "step"})) << "live";
  EXPECT_EQ(s_.line(), kLineB);
  s_.breakAt(kLineFFirst, 6);  // counted from here, two a cycle: the second call of cycle 13
  EXPECT_EQ(s_.land("continue"), (Landing{{13, 3}, "breakpoint"}));
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("scanback/stepBackIn"), (Landing{{13, 2}, "step"})) << "the first call's last statement";
  EXPECT_EQ(s_.land("next"), (Landing{{13, 5}, "step"})) << "from history, past the live position in the second call";
  EXPECT_EQ(s_.line(), kLineB);
}

// A step naming another task than the position's ends at that task's next cycle: live past the live
// position, as a step made live does.
TEST_F(LiveEdge, AStepNamingAnotherTaskEndsLiveAtThatTasksNextCyclePastTheLivePosition) {
  s_.launch("tasks.st");
  s_.breakAt(kLineFTimes, 3);
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{3, 1}));
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("next", json{{"threadId", 2}}), (Landing{{7, 0}, "step"})) << "live, from the live position";
  EXPECT_EQ(s_.line(2), kLineS);
  s_.move("scanback/seek", json{{"cycle", 2}, {"step", 1}});
  EXPECT_EQ(s_.land("next", json{{"threadId", 2}}), (Landing{{7, 0}, "step"})) << "Slow's next recorded cycle";
  s_.breakAt(kLineFTimes, 4);  // counted from 7:1: Fast's cycles 8, 9, 10, 11
  EXPECT_EQ(s_.land("continue"), (Landing{{11, 1}, "breakpoint"}));
  s_.setBreakpoints(json::array());
  s_.move("scanback/seek", json{{"cycle", 9}, {"step", 0}});
  EXPECT_EQ(s_.land("next", json{{"threadId", 2}}), (Landing{{13, 0}, "step"})) << "from history, live";
  EXPECT_EQ(s_.land("stepBack", json{{"threadId", 1}}), (Landing{{12, 1}, "step"})) << "Fast's last statement before";
}

// A forward step that passes a data write or ends at a breakpoint stops there, in history as live.
TEST_F(LiveEdge, AStepStopsAtAWatchedWriteOnTheWayAndReportsABreakpointWhereItEndsInHistoryAsLive) {
  s_.launch();
  s_.breakAt(kLineIfSum, hitOf(10, 3));
  s_.firstStop();
  s_.setBreakpoints(json::array());
  s_.watch({"Main.acc.sum"});
  s_.move("scanback/seek", json{{"cycle", 10}, {"step", 1}});
  EXPECT_EQ(s_.land("next"), (Landing{{10, 3}, "data breakpoint"})) << "sum := sum + add, in history";
  s_.watch({"Main.y"});
  EXPECT_EQ(s_.land("next"), (Landing{{10, 4}, "step"})) << "live";
  EXPECT_EQ(s_.land("next"), (Landing{{10, 5}, "data breakpoint"})) << "y := c * 10, live";
  s_.watch({});
  s_.setBreakpoints(json::array({{{"line", kLineZ0}}}));
  EXPECT_EQ(s_.land("next"), (Landing{{10, 6}, "breakpoint"})) << "live";
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 5}, "step"}));
  EXPECT_EQ(s_.land("next"), (Landing{{10, 6}, "breakpoint"})) << "the same, in history";
}

// ---------------------------------------------------------------- backward from live execution

TEST_F(LiveEdge, StepBackAndReverseContinueFromLiveExecutionReachWhatWasRecordedBeforeAndAfterTheCrossing) {
  s_.launch();
  s_.breakAt(kLineZ5, hitOf(10, 5));
  s_.firstStop();
  s_.setBreakpoints(json::array({{{"line", kLineZ5}, {"condition", "c = 16"}}}));
  s_.move("scanback/seek", json{{"cycle", 8}, {"step", 0}});
  EXPECT_EQ(s_.land("continue"), (Landing{{15, 5}, "breakpoint"})) << "across the live position of 10:5";
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"condition", "c MOD 5 = 0"}}}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{15, 4}, "step"}));
  EXPECT_EQ(s_.evaluate("y"), "150");
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{14, 4}, "breakpoint"})) << "recorded after the crossing";
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{9, 4}, "breakpoint"})) << "recorded before it";
  s_.setBreakpoints(json::array());
  s_.watch({"Main.x"});
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{8, 9}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{12, 9}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{16, 9}, "data breakpoint"})) << "live again";
}

// ---------------------------------------------------------------- pause

TEST_F(LiveEdge, APauseAfterTheCrossingStopsTheLiveTaskWhereItHasGot) {
  s_.launch("edge.st", json{{"cycles", 10'000'000}});
  s_.breakAt(kLineZ5, hitOf(10, 5));
  s_.firstStop();
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"logMessage", "c {c}"}}}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 4}, "step"}));
  const size_t from = s_.client.messages().size();
  s_.client.request("continue", json{{"threadId", 1}});
  ASSERT_FALSE(s_.client.awaitOutput("c 40", from).is_null()) << "live, well past the live position";
  s_.client.request("pause", json{{"threadId", 1}});
  EXPECT_EQ(s_.client.event("stopped")["body"]["reason"], "pause");
  const Position at = s_.position();
  EXPECT_GT(at.first, 38u);
  const std::vector<std::string> logged = s_.outputs("c ", from);
  ASSERT_GE(logged.size(), 29u);
  for (size_t i = 0; i < logged.size(); ++i) EXPECT_EQ(logged[i], "c " + std::to_string(12 + i) + "\n");
  EXPECT_EQ(s_.land("stepBack").reason, "step");
  EXPECT_LT(s_.position(), at);
}

// A pause that comes while the move is still in history (a long search) stops it where it began,
// in history: the live task does not move.
TEST_F(LiveEdge, APauseWhileTheMoveIsStillInHistoryStopsWhereItBeganAndTheLiveTaskStaysPaused) {
  s_.launch("edge.st", json{{"cycles", 1'000'000}});
  s_.setBreakpoints(json::array({{{"line", kLineC}, {"condition", "c = 200000"}}}));
  s_.firstStop(std::chrono::minutes(2));  // (a second or so; more under a sanitizer)
  const Position live = s_.position();
  EXPECT_EQ(live, (Position{200000, 0}));
  s_.move("scanback/seek", json{{"cycle", 10}, {"step", 2}});
  // A condition that never holds: the continue evaluates it at each of the 200000 cycles before
  // the live position.
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"condition", "c < 0"}}}));
  const std::chrono::milliseconds busy = test::othersCpuTime();
  const int64_t seq = s_.client.send("continue", json{{"threadId", 1}});
  ASSERT_TRUE(s_.client.response(seq)["success"]);
  ASSERT_TRUE(test::eventually([&] { return test::othersCpuTime() >= busy + std::chrono::milliseconds(30); }));
  EXPECT_TRUE(s_.client.request("pause", json{{"threadId", 1}})["success"]);
  EXPECT_EQ(s_.client.event("stopped")["body"]["reason"], "pause");
  EXPECT_EQ(s_.position(), (Position{10, 2})) << "the search was cut short before it moved anything";
  EXPECT_EQ(s_.timeline()["lastCycle"], live.first) << "the live task is where it was";
  s_.setBreakpoints(json::array({{{"line", kLineY}}}));
  EXPECT_EQ(s_.land("continue"), (Landing{{10, 4}, "breakpoint"}));
}

// ---------------------------------------------------------------- faults

// The live position is the fault: going forward from history stops there again, as the fault;
// going on from it ends the program, as without a debugger.
TEST_F(LiveEdge, AFaultAtTheLivePositionIsStoppedAtAgainFromHistoryAndContinuingFromItEndsTheProgram) {
  s_.launch("faulty.st");
  const json fault = s_.firstStop();
  EXPECT_EQ(fault["body"]["reason"], "exception");
  const Position at = s_.position();
  EXPECT_EQ(at, (Position{19, 2}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{19, 1}, "step"}));
  EXPECT_EQ(s_.land("next"), (Landing{at, "exception"})) << "the step ends at the fault";
  s_.move("scanback/seek", json{{"cycle", 10}});
  EXPECT_EQ(s_.land("continue"), (Landing{at, "exception"}));
  EXPECT_EQ(s_.client.indexOfEvent("exited"), -1);
  EXPECT_EQ(s_.land("continue").reason, "exited");
  EXPECT_EQ(s_.client.event("exited")["body"]["exitCode"], 3);
}

TEST_F(LiveEdge, AFaultPastTheLivePositionStopsLiveExecutionAfterTheCrossing) {
  s_.launch("faulty.st");
  s_.setBreakpoints(json::array({{{"line", 9}, {"condition", "count = 10"}}}));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{9, 2}));
  s_.setBreakpoints(json::array());
  s_.move("scanback/seek", json{{"cycle", 3}});
  EXPECT_EQ(s_.land("continue"), (Landing{{19, 2}, "exception"}));
  s_.move("scanback/seek", json{{"cycle", 3}});
  EXPECT_EQ(s_.land("continue"), (Landing{{19, 2}, "exception"})) << "and again, from history";
}

// ---------------------------------------------------------------- every move, both ways

// Forward moves made from a history position end exactly where the same move made live from that
// position ends, wherever the live position is: the next boundary, or a cycle and a half later.
// The live reference is a session of its own, stopped at the origin live.
TEST_F(LiveEdge, EveryForwardMoveFromHistoryEndsWhereTheSameMoveMadeLiveEnds) {
  struct Move {
    std::string command;
    std::vector<std::string> watched;
  };
  const std::vector<Move> moves = {{"next", {}},         {"stepIn", {}},          {"stepOut", {}},
                                   {"next", {"Main.z"}}, {"stepOut", {"Main.y"}}, {"continue", {"Main.x"}}};
  // Every boundary of cycles 4 (x written) to 6.
  std::vector<Position> boundaries;
  for (uint64_t cycle = 4; cycle <= 6; ++cycle)
    for (uint64_t step = 0; step < stepsOf(cycle); ++step) boundaries.emplace_back(cycle, step);
  auto stopAtLive = [&](EdgeClient& c, Position at) {
    c.launch();
    c.breakAt(kStepLines[at.second], hitOf(at.first, at.second));
    c.firstStop();
    EXPECT_EQ(c.position(), at);
    c.setBreakpoints(json::array());
  };
  int crossed = 0, compared = 0;
  for (size_t i = 0; i < stepsOf(4); ++i) {
    const Position origin = boundaries[i];
    for (const Move& m : moves) {
      EdgeClient live(project_);
      stopAtLive(live, origin);
      if (!m.watched.empty()) live.watch(m.watched);
      const Landing expected = live.land(m.command);
      for (const size_t edge : {i + 1, i + 12}) {
        EdgeClient history(project_);
        stopAtLive(history, boundaries[edge]);
        history.move("scanback/seek", json{{"cycle", origin.first}, {"step", origin.second}});
        if (!m.watched.empty()) history.watch(m.watched);
        const Landing got = history.land(m.command);
        EXPECT_EQ(got, expected) << m.command << (m.watched.empty() ? "" : " watching " + m.watched[0]) << " from ("
                                 << origin.first << ", " << origin.second << ") with the live position at ("
                                 << boundaries[edge].first << ", " << boundaries[edge].second << ")";
        ++compared;
        crossed += boundaries[edge] < expected.at;
      }
    }
  }
  EXPECT_EQ(compared, 9 * 6 * 2);
  EXPECT_GE(crossed, 9 * 2) << "two moves from each origin cross the live position at least";
}

// Reverse moves from the live position, into history, end where the same move ends in the finished
// recording of the same run: a replay session of the trace the live session kept. The live
// position is every boundary of cycle 4, and its end.
TEST_F(LiveEdge, EveryReverseMoveFromTheLivePositionEndsWhereItEndsInTheFinishedRecording) {
  struct Move {
    std::string command;
    std::vector<std::string> watched;
  };
  const std::vector<Move> moves = {{"stepBack", {}},
                                   {"scanback/stepBackIn", {}},
                                   {"scanback/stepBackOut", {}},
                                   {"reverseContinue", {"Main.y"}},
                                   {"reverseContinue", {"Main.x"}}};
  int compared = 0, kept = 0;
  for (uint64_t step = 0; step <= stepsOf(4); ++step) {
    const Position origin{4, step};
    for (const Move& m : moves) {
      const std::string trace = project_.path("kept-" + std::to_string(kept++) + ".trace");
      Landing got;
      {
        EdgeClient live(project_);
        if (step < stepsOf(4)) {
          live.launch("edge.st", json{{"record", trace}});
          live.breakAt(kStepLines[step], hitOf(4, step));
          live.firstStop();
          live.setBreakpoints(json::array());
        } else {  // the end of cycle 4: stopped there by the write of x
          live.launch("edge.st", json{{"record", trace}, {"stopOnEntry", true}});
          live.firstStop();
          live.watch({"Main.x"});
          EXPECT_EQ(live.land("continue"), (Landing{{0, 9}, "data breakpoint"}));
          EXPECT_EQ(live.land("continue"), (Landing{{4, 9}, "data breakpoint"}));
          live.watch({});
        }
        EXPECT_EQ(live.position(), origin);
        if (!m.watched.empty()) live.watch(m.watched);
        got = live.land(m.command);
        live.client.request("disconnect");  // the trace is finished, up to the live position
      }
      EdgeClient replay(project_);
      replay.replay(trace);
      replay.firstStop();
      // The trace ends where the live task was (a replay starts at the last statement of a cycle
      // that ended).
      EXPECT_EQ(replay.position(), (step < stepsOf(4) ? origin : Position{4, 8}));
      replay.move("scanback/seek", json{{"cycle", origin.first}, {"step", origin.second}});
      if (!m.watched.empty()) replay.watch(m.watched);
      const Landing expected = replay.land(m.command);
      EXPECT_EQ(got, expected) << m.command << (m.watched.empty() ? "" : " watching " + m.watched[0])
                               << " from the live position (" << origin.first << ", " << origin.second << ")";
      ++compared;
    }
  }
  EXPECT_EQ(compared, 10 * 5);
}

// ---------------------------------------------------------------- where you are (issue 31)

// Go to Live: from anywhere in the history back to the live position, whatever moves led there;
// writes are refused in history and taken again there.
TEST_F(LiveEdge, GoToLiveStopsAtTheLivePositionFromAnywhereInTheHistory) {
  s_.launch();
  s_.breakAt(kLineZ5, hitOf(10, 5));
  s_.firstStop();
  const Position live{10, 5};
  EXPECT_EQ(s_.position(), live);
  s_.setBreakpoints(json::array());
  EXPECT_EQ(s_.land("stepBack"), (Landing{{10, 4}, "step"}));
  EXPECT_EQ(s_.land("scanback/seek", json{{"cycle", 3}, {"step", 2}}), (Landing{{3, 2}, "goto"}));
  const json write = s_.client.request("setExpression", json{{"expression", "z"}, {"value", "9"}, {"frameId", 1}});
  EXPECT_FALSE(write["success"]) << "history is read-only";
  EXPECT_EQ(s_.land("scanback/goToLive", json::object()), (Landing{live, "goto"}));
  EXPECT_EQ(s_.line(), kLineZ5);
  EXPECT_EQ(s_.evaluate("c"), "11");
  // The live position again: a write is taken, and the task goes on live from there.
  const json taken = s_.client.request("setExpression", json{{"expression", "y"}, {"value", "7"}, {"frameId", 1}});
  EXPECT_TRUE(taken["success"]) << taken.dump();
  EXPECT_EQ(s_.land("next"), (Landing{{10, 6}, "step"}));
  EXPECT_EQ(s_.evaluate("y"), "7");
  // At the live position already, it stays there.
  EXPECT_EQ(s_.land("scanback/goToLive", json::object()), (Landing{{10, 6}, "goto"}));
}

TEST_F(LiveEdge, GoToLiveIsRefusedWhileRunningAndWithoutHistory) {
  s_.launch("edge.st", json{{"record", false}});
  s_.breakAt(kLineZ5, 3);
  s_.firstStop();
  const json r = s_.client.request("scanback/goToLive");
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r.value("message", "").find("keeps no history"), std::string::npos) << r.dump();
}

// Variables in history are marked read-only (VS Code then offers no Set Value), at the live
// position they are not.
TEST_F(LiveEdge, VariablesAreReadOnlyInHistoryAndWritableAtTheLivePosition) {
  s_.launch();
  s_.breakAt(kLineZ5, hitOf(10, 5));
  s_.firstStop();
  auto instance = [&] {
    const json scopes = s_.client.request("scopes", json{{"frameId", 1}})["body"]["scopes"];
    EXPECT_EQ(scopes[0]["name"], "Instance") << scopes.dump();
    return s_.client.request("variables",
                             json{{"variablesReference", scopes[0]["variablesReference"]}})["body"]["variables"];
  };
  auto readOnly = [](const json& v) {
    return v.contains("presentationHint") && v["presentationHint"].contains("attributes") &&
           std::ranges::count(v["presentationHint"]["attributes"], json("readOnly")) == 1;
  };
  for (const json& v : instance()) EXPECT_FALSE(readOnly(v)) << v.dump();
  s_.land("stepBack");
  const json history = instance();
  ASSERT_FALSE(history.empty());
  for (const json& v : history) EXPECT_TRUE(readOnly(v)) << v.dump();
}

// A PROGRAM frame shows its Instance scope first and no empty Locals; an FB frame its inputs in
// Locals first.
TEST_F(LiveEdge, AProgramFrameShowsItsInstanceFirstAndNoEmptyLocals) {
  s_.launch();
  s_.setBreakpoints(json::array({{{"line", kLineY}}, {{"line", kLineSum}}}));
  s_.firstStop();
  auto names = [&] {
    std::vector<std::string> out;
    const json r = s_.client.request("scopes", json{{"frameId", 1}});
    for (const json& scope : r["body"]["scopes"]) out.push_back(scope["name"]);
    return out;
  };
  EXPECT_EQ(s_.line(), kLineSum);
  EXPECT_EQ(names(), (std::vector<std::string>{"Locals", "Instance", "Globals", "Retain", "I/O"})) << "Acc's add";
  s_.move("continue");
  EXPECT_EQ(s_.line(), kLineY);
  EXPECT_EQ(names(), (std::vector<std::string>{"Instance", "Globals", "Retain", "I/O"}));
}

// A data breakpoint's stop names the variable, its value before and after, and the statement that
// wrote it — live and in history, and for a write by a cycle's last statement.
TEST_F(LiveEdge, ADataBreakpointStopNamesTheOldAndNewValueAndTheWritingStatement) {
  s_.launch();
  s_.breakAt(kLineCall, hitOf(10, 1));
  s_.firstStop();
  s_.setBreakpoints(json::array());
  s_.watch({"Main.y"});
  const std::string y18 = fmt::format("(edge.st:{})", kLineY);
  json stopped = s_.move("continue");
  EXPECT_EQ(s_.position(), (Position{10, 5}));
  EXPECT_EQ(stopped["body"]["description"], "Main.y: 100 \u2192 110 " + y18) << "live";
  stopped = s_.move("continue");
  EXPECT_EQ(stopped["body"]["description"], "Main.y: 110 \u2192 120 " + y18) << "live";
  stopped = s_.move("reverseContinue");
  EXPECT_EQ(s_.position(), (Position{10, 5}));
  EXPECT_EQ(stopped["body"]["description"], "Main.y: 100 \u2192 110 " + y18) << "in history";
  s_.watch({"Main.x"});
  stopped = s_.move("continue");
  EXPECT_EQ(s_.position(), (Position{12, 9})) << "the end of cycle 12: x := x + 1 is its last statement";
  EXPECT_EQ(stopped["body"]["description"], fmt::format("Main.x: 3 \u2192 4 (edge.st:{})", kLineX)) << "live";
  stopped = s_.move("reverseContinue");
  EXPECT_EQ(s_.position(), (Position{8, 9}));
  EXPECT_EQ(stopped["body"]["description"], fmt::format("Main.x: 2 \u2192 3 (edge.st:{})", kLineX)) << "history";
}

}  // namespace

// ---------------------------------------------------------------- nonstop sessions

namespace {

// A nonstop session: the task runs on in real time (a cycle every 10 ms) and never halts; the
// session moves through its recording, which grows. The live edge is the newest recorded
// position: a continue follows the recording past it, a forward step whose end is not recorded
// yet waits for it.
class NonstopEdge : public ::testing::Test {
 protected:
  void start(json breakpoints = json::array(), const std::string& file = "edge.st") {
    s_.launch(file, json{{"nonstop", true}, {"realtime", true}, {"cycles", 1'000'000}});
    s_.setBreakpoints(std::move(breakpoints));
  }
  uint64_t newest() { return s_.lastCycle().value_or(0); }

  TempProject project_{{{"edge.st", kEdgeSource}, {"faulty.st", kEdgeFaulty}}};
  EdgeClient s_{project_};
};

TEST_F(NonstopEdge, LineBreakpointsConditionsAndHitCountsStopPastTheNewestRecordedPositionAndBack) {
  start(json::array({{{"line", kLineY}, {"hitCondition", "%20"}}}));
  EXPECT_EQ(s_.firstStop()["body"]["reason"], "breakpoint");
  EXPECT_EQ(s_.position(), (Position{19, 4})) << "hit 20";
  EXPECT_EQ(s_.land("continue"), (Landing{{39, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{19, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{39, 4}, "breakpoint"}));
  // On to hits that were not recorded when the continue began (each continue goes 200 ms of the
  // task's time ahead): every twentieth hit, none skipped, none twice.
  Position at{39, 4};
  bool crossed = false;
  for (int i = 0; i < 30 && !crossed; ++i) {
    const uint64_t recorded = newest();
    const Landing next = s_.land("continue");
    EXPECT_EQ(next, (Landing{{at.first + 20, 4}, "breakpoint"}));
    at = next.at;
    crossed = at.first > recorded;
  }
  EXPECT_TRUE(crossed);
  // A plain breakpoint on x's line (every fourth cycle), past the newest position.
  s_.setBreakpoints(json::array({{{"line", kLineX}}}));
  const uint64_t recorded = newest();
  for (;;) {
    const Landing hit = s_.land("continue");
    EXPECT_EQ(hit, (Landing{{(at.first / 4 + 1) * 4, 8}, "breakpoint"}));
    at = hit.at;
    if (at.first > recorded || hit.reason != "breakpoint") break;
  }
  // A condition, past what is recorded now.
  const uint64_t target = newest() + 30;
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"condition", "c = " + std::to_string(target + 1)}}}));
  EXPECT_EQ(s_.land("continue"), (Landing{{target, 4}, "breakpoint"}));
  EXPECT_EQ(s_.evaluate("c"), std::to_string(target + 1));
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"condition", "c MOD 25 = 0"}}}));
  EXPECT_EQ(s_.land("reverseContinue").at.second, 4u);
  EXPECT_EQ(std::stoull(s_.evaluate("c")) % 25, 0u);
}

TEST_F(NonstopEdge, ALogpointPrintsEachHitOnceAsTheContinueFollowsTheRecording) {
  start(json::array({{{"line", kLineY}, {"condition", "c = 5"}}}));
  s_.firstStop();
  EXPECT_EQ(s_.position(), (Position{4, 4}));
  const uint64_t stopAt = newest() + 40;
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"logMessage", "c {c}"}},
                                 {{"line", kLineZ5}, {"condition", "c = " + std::to_string(stopAt + 1)}}}));
  const size_t from = s_.client.messages().size();
  EXPECT_EQ(s_.land("continue"), (Landing{{stopAt, 5}, "breakpoint"}));
  std::vector<std::string> expected;
  for (uint64_t c = 6; c <= stopAt + 1; ++c) expected.push_back("c " + std::to_string(c) + "\n");
  EXPECT_EQ(s_.outputs("c ", from), expected);
}

TEST_F(NonstopEdge, DataBreakpointsStopAtWritesPastTheNewestRecordedPosition) {
  start();
  s_.client.configured();
  ASSERT_TRUE(test::eventually([&] { return newest() > 5; }));
  s_.client.request("pause", json{{"threadId", 1}});
  EXPECT_EQ(s_.client.event("stopped")["body"]["reason"], "pause");
  const Position paused = s_.position();
  s_.watch({"Main.x"});
  // x is written by the last statement of every fourth cycle: the stop is at that cycle's end.
  const Landing write = s_.land("continue");
  EXPECT_EQ(write.reason, "data breakpoint");
  EXPECT_EQ(write.at.first % 4, 0u);
  EXPECT_EQ(write.at.second, 9u);
  EXPECT_GT(write.at, paused);
  EXPECT_LE(write.at.first, paused.first + 4);
  EXPECT_EQ(s_.evaluate("x"), std::to_string(write.at.first / 4 + 1));
  EXPECT_EQ(s_.land("continue"), (Landing{{write.at.first + 4, 9}, "data breakpoint"}));
  // z := 5 then z := 0, the value it had: two changes, found from the cycle before (a value a
  // cycle changes and restores is in the write index: its write sets name every byte written).
  s_.watch({"Main.z"});
  EXPECT_EQ(s_.land("continue"), (Landing{{write.at.first + 5, 6}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{write.at.first + 5, 7}, "data breakpoint"}));
  s_.watch({"Main.x"});
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{write.at.first + 4, 9}, "data breakpoint"}));
}

TEST_F(NonstopEdge, AForwardStepAtTheNewestRecordedPositionWaitsForTheTaskToRecordItsEnd) {
  start();
  s_.client.configured();
  ASSERT_TRUE(test::eventually([&] { return newest() > 5; }));
  for (const char* command : {"next", "stepIn", "stepOut"}) {
    s_.client.request("pause", json{{"threadId", 1}});
    EXPECT_EQ(s_.client.event("stopped")["body"]["reason"], "pause");
    const Position at = s_.position();
    EXPECT_EQ(at.second, stepsOf(at.first) - 1) << "the newest recorded position: a cycle's last statement";
    EXPECT_EQ(s_.land(command), (Landing{{at.first + 1, 0}, "step"})) << command;
    EXPECT_EQ(s_.land("stepIn"), (Landing{{at.first + 1, 1}, "step"}));
    s_.client.request("continue", json{{"threadId", 1}});
  }
}

TEST_F(NonstopEdge, AtTheFaultTheHistoryEndsAndAForwardMoveStopsThereAgainWithoutWaiting) {
  start(json::array(), "faulty.st");
  const json fault = s_.firstStop();
  EXPECT_EQ(fault["body"]["reason"], "exception");
  EXPECT_EQ(s_.position(), (Position{19, 2}));
  EXPECT_EQ(s_.land("next"), (Landing{{19, 2}, "exception"}));
  EXPECT_EQ(s_.land("stepBack"), (Landing{{19, 1}, "step"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{19, 2}, "exception"}));
}

}  // namespace

// ---------------------------------------------------------------- attached sessions

namespace {

// An attached session: `scanback run --control` in a child process runs the task in real time
// (a cycle every 10 ms) and streams its history; the live edge is the newest streamed position.
// Hit numbers are not used: the streamed history may not begin at cycle 0.
class AttachEdge : public ::testing::Test {
 protected:
  uint64_t newest() { return s_.lastCycle().value_or(0); }
  // Attached and stopped by a pause at the newest streamed position, some cycles in.
  void attachPaused() {
    ASSERT_TRUE(rt_.ready());
    s_.attach(rt_.endpoint());
    s_.client.configured();
    ASSERT_TRUE(test::eventually([&] { return newest() > 5; }, std::chrono::seconds(20)));
    s_.client.request("pause", json{{"threadId", 1}});
    ASSERT_EQ(s_.client.event("stopped", std::chrono::seconds(30))["body"]["reason"], "pause");
  }

  TempProject project_{{{"edge.st", kEdgeSource}}};
  test::ControlRuntime rt_{project_.path("edge.st"), project_.dir()};
  EdgeClient s_{project_};
};

TEST_F(AttachEdge, BreakpointsAndLogpointsStopPastTheNewestStreamedPositionAndBackwardInHistory) {
  attachPaused();
  const Position paused = s_.position();
  EXPECT_EQ(paused.second, stepsOf(paused.first) - 1) << "a cycle's last statement: the newest streamed";
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"condition", "c MOD 20 = 0"}}}));
  const Landing first = s_.land("continue");
  EXPECT_EQ(first.reason, "breakpoint");
  EXPECT_EQ(first.at.second, 4u);
  EXPECT_EQ((first.at.first + 1) % 20, 0u);
  EXPECT_GT(first.at.first, paused.first);
  EXPECT_EQ(s_.land("continue"), (Landing{{first.at.first + 20, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{first.at, "breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{first.at.first + 20, 4}, "breakpoint"}));
  const uint64_t before = newest();
  const uint64_t target = before + 30;
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"logMessage", "c {c}"}},
                                 {{"line", kLineZ5}, {"condition", "c = " + std::to_string(target + 1)}}}));
  const size_t from = s_.client.messages().size();
  EXPECT_EQ(s_.land("continue"), (Landing{{target, 5}, "breakpoint"})) << "past what was streamed at " << before;
  std::vector<std::string> expected;
  for (uint64_t c = first.at.first + 22; c <= target + 1; ++c) expected.push_back("c " + std::to_string(c) + "\n");
  EXPECT_EQ(s_.outputs("c ", from), expected);
  EXPECT_EQ(s_.land("stepBack"), (Landing{{target, 4}, "step"}));
}

// Hits are numbered from the start of the streamed history: a hit condition stops at every
// seventh hit, each counted once as the continue follows the stream.
TEST_F(AttachEdge, AHitCountStopsAtEverySeventhHitPastTheNewestStreamedPosition) {
  attachPaused();
  const Position paused = s_.position();
  s_.setBreakpoints(json::array({{{"line", kLineY}, {"hitCondition", "%7"}}}));
  const Landing first = s_.land("continue");
  EXPECT_EQ(first.reason, "breakpoint");
  EXPECT_GT(first.at, paused);
  EXPECT_LE(first.at.first, paused.first + 7);
  EXPECT_EQ(s_.land("continue"), (Landing{{first.at.first + 7, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{first.at.first + 14, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), (Landing{{first.at.first + 7, 4}, "breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), first);
}

TEST_F(AttachEdge, DataBreakpointsAndStepsCrossTheNewestStreamedPosition) {
  attachPaused();
  const Position paused = s_.position();
  s_.watch({"Main.x"});
  const Landing write = s_.land("continue");
  EXPECT_EQ(write.reason, "data breakpoint");
  EXPECT_EQ(write.at.first % 4, 0u);
  EXPECT_EQ(write.at.second, 9u) << "the end of the cycle whose last statement wrote x";
  EXPECT_GT(write.at, paused);
  EXPECT_EQ(s_.land("continue"), (Landing{{write.at.first + 4, 9}, "data breakpoint"}));
  EXPECT_EQ(s_.land("reverseContinue"), write);
  // z's two writes in the next cycle, which restore its value (see NonstopEdge).
  s_.watch({"Main.z"});
  EXPECT_EQ(s_.land("continue"), (Landing{{write.at.first + 1, 6}, "data breakpoint"}));
  EXPECT_EQ(s_.land("continue"), (Landing{{write.at.first + 1, 7}, "data breakpoint"})) << "back to 0";
  s_.watch({});
  // Forward steps from the newest streamed position wait for the next cycle to be streamed.
  for (const char* command : {"next", "stepIn", "stepOut"}) {
    s_.client.request("continue", json{{"threadId", 1}});
    s_.client.request("pause", json{{"threadId", 1}});
    EXPECT_EQ(s_.client.event("stopped", std::chrono::seconds(30))["body"]["reason"], "pause");
    const Position at = s_.position();
    EXPECT_EQ(at.second, stepsOf(at.first) - 1);
    EXPECT_EQ(s_.land(command), (Landing{{at.first + 1, 0}, "step"})) << command;
  }
}

// A runtime that has faulted: its history ends at the fault, and a forward move stops there again
// without waiting for more.
TEST(AttachEdgeFault, AtTheFaultAForwardMoveStopsThereAgainWithoutWaiting) {
  TempProject project{{{"faulty.st", kEdgeFaulty}}};
  test::ControlRuntime rt(project.path("faulty.st"), project.dir());
  ASSERT_TRUE(rt.ready());
  EdgeClient s(project);
  s.attach(rt.endpoint(), "faulty.st");
  const json stop = s.firstStop();
  EXPECT_EQ(stop["body"]["reason"], "exception");
  EXPECT_EQ(s.position(), (Position{19, 2}));
  EXPECT_EQ(s.land("next"), (Landing{{19, 2}, "exception"}));
  EXPECT_EQ(s.land("stepBack"), (Landing{{19, 1}, "step"}));
  EXPECT_EQ(s.land("continue"), (Landing{{19, 2}, "exception"}));
  EXPECT_TRUE(rt.running()) << "faulted, and up";
}

}  // namespace
}  // namespace live_edge_tests
