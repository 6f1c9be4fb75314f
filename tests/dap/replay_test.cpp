// Replay sessions and the reverse requests (the time-travel issue), over an in-memory pipe: one
// test per rule, named after it. The traces are recorded here from small programs; every message
// is validated against the official schema.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "replayer/replayer.h"
#include "tests/dap/session_client.h"
#include "tests/support/crafted_traces.h"
#include "tests/support/st_programs.h"
#include "tests/support/trace_support.h"
#include "tests/support/wait.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "vm/runtime/values.h"

using namespace scanback;
using namespace scanback::dap;
using namespace scanback::dap::testing;

namespace {

using test::mustCompileSourceFiles;
using test::recordCycles;

const std::string kMain = test::twoTaskMain();

const char* kLib = R"(FUNCTION Twice : INT
VAR_INPUT x : INT; END_VAR
Twice := x * 2;
END_FUNCTION

FUNCTION_BLOCK Counter
VAR_INPUT step : INT; END_VAR
VAR count : INT; END_VAR
count := count + step;
IF count > 30000 THEN count := 0; END_IF
END_FUNCTION_BLOCK
)";

const char* const kFaulty = test::kFaultsInThirdCycle;

// Sets and clears a flag within cycle 70 (n = 71) only: every cycle ends with it FALSE, so no
// comparison at cycle boundaries sees either write.
const char* kBlink = R"(PROGRAM Blink
VAR n : INT; flag : BOOL; other : INT; END_VAR
n := n + 1;
IF n = 71 THEN
  flag := TRUE;
  other := other + 1;
  flag := FALSE;
END_IF
other := other MOD 1000;
END_PROGRAM
)";
constexpr int kLineBlinkOther = 6, kLineBlinkLast = 9;

// Line numbers in kMain and kLib.
constexpr int kLineN = 19, kLineCall = 20, kLineTotal = 21, kLineTicks = 27;
constexpr int kLineCountFirst = 9;

class DapReplay : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }

  // Records `cycles` cycles of the project's `files` to a trace; its path.
  std::string record(const std::vector<std::string>& files, uint64_t cycles, const std::string& name = "run.trace",
                     uint32_t keyframeEvery = 16) {
    std::vector<std::string> paths;
    for (const std::string& f : files) paths.push_back(project_.path(f));
    const std::shared_ptr<const Program> program = mustCompileSourceFiles(paths);
    if (!program) return {};
    const std::string trace = project_.path(name);
    recordCycles(program, trace, cycles, keyframeEvery);
    return trace;
  }
  std::string recordMain(uint64_t cycles = 100) { return record({"main.st", "lib.st"}, cycles); }

  // initialize, launch the replay, configurationDone: the first stop.
  json startReplay(const std::string& trace, json extra = json::object()) {
    json args{{"trace", trace}};
    args.update(extra);
    client_.start(args);
    client_.configured();
    return client_.event("stopped");
  }
  json timeline() {
    const json r = client_.request("scanback/timeline");
    EXPECT_TRUE(r["success"]) << r.dump();
    return r["body"];
  }
  std::pair<uint64_t, uint64_t> position() {
    const json t = timeline();
    return {t["cycle"].get<uint64_t>(), t["step"].get<uint64_t>()};
  }
  std::string evaluate(const std::string& expression) {
    const json r = client_.request("evaluate", json{{"expression", expression}, {"frameId", 1}});
    EXPECT_TRUE(r["success"]) << expression << ": " << r.dump();
    return r["body"].value("result", std::string("?"));
  }
  json topFrame(int64_t thread = 1) {
    const json r = client_.request("stackTrace", json{{"threadId", thread}});
    EXPECT_FALSE(r["body"]["stackFrames"].empty()) << r.dump();
    return r["body"]["stackFrames"].empty() ? json::object() : r["body"]["stackFrames"][0];
  }
  // Sends a move and returns its stopped event, checking that the response came first.
  json move(const std::string& command, json args = json{{"threadId", 1}}) {
    const size_t from = client_.messages().size();
    const int64_t seq = client_.send(command, args);
    const json response = client_.response(seq);
    EXPECT_TRUE(response["success"]) << command << ": " << response.dump();
    const json stopped = client_.event("stopped");
    EXPECT_LT(client_.indexOfResponse(seq), client_.indexOfEvent("stopped", from)) << command;
    return stopped;
  }
  // Whether an output event containing `text` was sent.
  bool said(const std::string& text) {
    for (const json& m : client_.messages())
      if (m.value("event", "") == "output" && m["body"]["output"].get<std::string>().find(text) != std::string::npos)
        return true;
    return false;
  }
  json setBreakpoints(json breakpoints, const std::string& file = "main.st") {
    return client_.request("setBreakpoints",
                           json{{"source", json{{"path", project_.path(file)}}}, {"breakpoints", breakpoints}});
  }

  TempProject project_{{{"main.st", kMain}, {"lib.st", kLib}, {"faulty.st", kFaulty}, {"blink.st", kBlink}}};
  SessionClient client_;
};

TEST_F(DapReplay, AReplayLaunchStopsAtTheEndWithReasonEntryAndTheSourcesAreTheRecordedFiles) {
  const std::string trace = recordMain(100);
  const json stopped = startReplay(trace);
  EXPECT_EQ(stopped["body"]["reason"], "entry");
  const json t = timeline();
  EXPECT_EQ(t["firstCycle"], 0);
  EXPECT_EQ(t["lastCycle"], 99);
  EXPECT_EQ(t["cycle"], 99);
  EXPECT_EQ(t["tasks"].size(), 2u);
  // The last recorded statement of the last cycle (a Fast cycle: the IF).
  const json frame = topFrame(stopped["body"]["threadId"]);
  EXPECT_EQ(frame["source"]["path"], project_.path("main.st"));
  EXPECT_EQ(frame["line"], kLineTotal + 1);
  const json threads = client_.request("threads");
  EXPECT_EQ(threads["body"]["threads"].size(), 2u);
}

TEST_F(DapReplay, AReplayOfATraceEndingInAFaultStartsAtTheFaultWithReasonException) {
  const std::string trace = record({"faulty.st"}, 10);
  const json stopped = startReplay(trace);
  EXPECT_EQ(stopped["body"]["reason"], "exception");
  EXPECT_EQ(topFrame()["line"], 4);
  EXPECT_EQ(evaluate("n"), "3");
  const json info = client_.request("exceptionInfo", json{{"threadId", 1}});
  ASSERT_TRUE(info["success"]) << info.dump();
  EXPECT_EQ(info["body"]["exceptionId"], "division by zero");
  EXPECT_NE(info["body"]["description"].get<std::string>().find("faulty.st:4:"), std::string::npos);
}

TEST_F(DapReplay, StartAtStartOrACycleStopsThereWithReasonEntry) {
  const std::string trace = recordMain(50);
  EXPECT_EQ(startReplay(trace, json{{"startAt", "start"}})["body"]["reason"], "entry");
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{0, 0}));
  EXPECT_EQ(topFrame()["line"], kLineN);
}

TEST_F(DapReplay, StartAtACycleNumberStopsAtItsFirstStatement) {
  const std::string trace = recordMain(50);
  startReplay(trace, json{{"startAt", 7}});
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{7, 0}));
}

TEST_F(DapReplay, AStartAtOutsideTheRecordingFailsTheLaunchWithTheRange) {
  const std::string trace = recordMain(50);
  client_.request("initialize", json{{"adapterID", "scanback"}});
  const json r = client_.request("launch", json{{"trace", trace}, {"startAt", 500}});
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r["message"].get<std::string>().find("cycles 0 to 49"), std::string::npos) << r.dump();
  const json missing = client_.request("launch", json{{"trace", project_.path("none.trace")}});
  EXPECT_FALSE(missing["success"]);
}

TEST_F(DapReplay, SourcesNotOnDiskAreServedBySourceReferenceAndBreakpointsAcceptBothIdentities) {
  const std::string trace = recordMain(30);
  const std::string lib = project_.path("lib.st");
  std::filesystem::remove(lib);
  startReplay(trace, json{{"startAt", "start"}});
  // By the recorded path, though the file is gone.
  const json set = setBreakpoints(json::array({{{"line", kLineCountFirst}}}), "lib.st");
  ASSERT_TRUE(set["body"]["breakpoints"][0]["verified"]) << set.dump();
  const json source = set["body"]["breakpoints"][0]["source"];
  ASSERT_TRUE(source.contains("sourceReference")) << source.dump();
  EXPECT_FALSE(source.contains("path"));
  EXPECT_EQ(move("continue")["body"]["reason"], "breakpoint");
  const json frame = topFrame();
  EXPECT_EQ(frame["source"]["sourceReference"], source["sourceReference"]);
  const json text = client_.request("source", json{{"source", source}, {"sourceReference", source["sourceReference"]}});
  EXPECT_EQ(text["body"]["content"], kLib);
  // By sourceReference.
  const json again = client_.request(
      "setBreakpoints", json{{"source", source}, {"breakpoints", json::array({{{"line", kLineCountFirst + 1}}})}});
  EXPECT_TRUE(again["body"]["breakpoints"][0]["verified"]) << again.dump();
}

// A trace replayed away from its sources (issue 31): a workspace file with the same name and text
// stands for the recorded one; one found nowhere is named by a URI of the client's scheme (no
// sourceReference, so the client shows it from the trace under its own scheme), which breakpoints
// then name too.
TEST_F(DapReplay, SourcesAwayFromTheirPathsAreFoundByNameAndTextElseNamedByTheClientsScheme) {
  const std::string trace = recordMain(30);
  const std::filesystem::path workspace = std::filesystem::path(project_.path("workspace")) / "src" / "plant";
  std::filesystem::create_directories(workspace);
  std::filesystem::create_directories(std::filesystem::path(project_.path("workspace")) / "node_modules");
  // A copy of lib.st with the recorded text, one of main.st that was edited since; both moved away.
  std::filesystem::copy_file(project_.path("lib.st"), workspace / "lib.st");
  std::filesystem::copy_file(project_.path("lib.st"),
                             std::filesystem::path(project_.path("workspace")) / "node_modules" / "main.st");
  {
    std::ofstream edited(workspace / "main.st");
    edited << "(* edited *)\n" << kMain;
  }
  std::filesystem::remove(project_.path("lib.st"));
  std::filesystem::remove(project_.path("main.st"));
  startReplay(trace, json{{"startAt", "start"},
                          {"sourceFolders", json::array({project_.path("workspace")})},
                          {"sourceScheme", "scanback-trace"}});
  const json lib = setBreakpoints(json::array({{{"line", kLineCountFirst}}}), "lib.st")["body"]["breakpoints"][0];
  ASSERT_TRUE(lib["verified"]) << lib.dump();
  EXPECT_EQ(lib["source"]["path"], (workspace / "lib.st").string()) << "the workspace's copy with the recorded text";
  EXPECT_FALSE(lib["source"].contains("sourceReference"));
  // main.st: the workspace's differs, node_modules is not searched: named from the trace.
  const json frames = client_.request("stackTrace", json{{"threadId", 1}})["body"]["stackFrames"];
  const json main = frames[0]["source"];
  const std::string uri = main.value("path", "");
  EXPECT_TRUE(uri.starts_with("scanback-trace://")) << main.dump();
  EXPECT_TRUE(uri.ends_with(project_.path("main.st"))) << uri;
  EXPECT_FALSE(main.contains("sourceReference"));
  EXPECT_EQ(main["name"], "main.st");
  // The authority is the trace's path in hex (what the extension reads the text from).
  const std::string authority = uri.substr(std::string("scanback-trace://").size(), uri.find('/', 17) - 17);
  std::string decoded;
  for (size_t i = 0; i + 1 < authority.size(); i += 2)
    decoded += static_cast<char>(std::stoi(authority.substr(i, 2), nullptr, 16));
  EXPECT_EQ(decoded, std::filesystem::absolute(trace).lexically_normal().string());
  // A breakpoint by that URI, as the client encodes it (a space would be %20; '/' stays).
  const json byUri = client_.request("setBreakpoints", json{{"source", json{{"path", uri}, {"name", "main.st"}}},
                                                            {"breakpoints", json::array({{{"line", kLineTotal}}})}});
  ASSERT_TRUE(byUri["body"]["breakpoints"][0]["verified"]) << byUri.dump();
  EXPECT_EQ(byUri["body"]["breakpoints"][0]["source"]["path"], uri);
  // (lib.st's breakpoint, by the name of the file that was removed, goes: main.st's is hit next.)
  setBreakpoints(json::array(), "lib.st");
  EXPECT_EQ(move("continue")["body"]["reason"], "breakpoint");
  EXPECT_EQ(topFrame()["line"], kLineTotal);
  // A scheme that is not one is refused.
  SessionClient other;
  other.request("initialize", json{{"adapterID", "scanback"}});
  const json bad = other.request("launch", json{{"trace", trace}, {"sourceScheme", "no scheme"}});
  EXPECT_FALSE(bad["success"]);
  EXPECT_NE(bad.value("message", "").find("'sourceScheme' must be a URI scheme"), std::string::npos) << bad.dump();
}

TEST_F(DapReplay, StepBackIsTheExactReverseOfNextAndHistoryShowsWhatTheForwardRunShowed) {
  const std::string trace = recordMain(40);
  startReplay(trace, json{{"startAt", "start"}});
  struct Seen {
    std::pair<uint64_t, uint64_t> at;
    int64_t line;
    std::string n, total, count, ticks;
  };
  auto look = [&] {
    Seen s;
    s.at = position();
    s.line = topFrame(client_.messages().back()["body"].value("threadId", 1))["line"];
    s.n = evaluate("Main.n");
    s.total = evaluate("gTotal");
    s.count = evaluate("Main.c.count");
    s.ticks = evaluate("Watch.ticks");
    return s;
  };
  std::vector<Seen> forward{look()};
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(move("next")["body"]["reason"], "step");
    forward.push_back(look());
  }
  for (int i = 29; i >= 0; --i) {
    EXPECT_EQ(move("stepBack")["body"]["reason"], "step");
    const Seen back = look();
    EXPECT_EQ(back.at, forward[static_cast<size_t>(i)].at) << "step back " << 30 - i;
    EXPECT_EQ(back.line, forward[static_cast<size_t>(i)].line);
    EXPECT_EQ(back.n, forward[static_cast<size_t>(i)].n);
    EXPECT_EQ(back.total, forward[static_cast<size_t>(i)].total);
    EXPECT_EQ(back.count, forward[static_cast<size_t>(i)].count);
    EXPECT_EQ(back.ticks, forward[static_cast<size_t>(i)].ticks);
  }
}

TEST_F(DapReplay, StepBackOverACallDoesNotEnterItAndFromAPousFirstStatementGoesToTheCall) {
  const std::string trace = recordMain(20);
  startReplay(trace, json{{"startAt", 4}});  // a Fast cycle (0 Fast, 1 Slow, 2 Fast, 3 Fast, 4 Fast)
  move("next");
  move("next");
  EXPECT_EQ(topFrame()["line"], kLineTotal);
  move("stepBack");
  EXPECT_EQ(topFrame()["line"], kLineCall);  // over the call, not into Counter
  move("stepIn");
  move("stepIn");
  const json inside = client_.request("stackTrace", json{{"threadId", 1}})["body"];
  ASSERT_EQ(inside["totalFrames"], 2);
  EXPECT_EQ(inside["stackFrames"][0]["line"], kLineCountFirst);
  move("stepBack");
  EXPECT_EQ(topFrame()["line"], kLineCall);  // the caller's call statement
}

TEST_F(DapReplay, ReverseContinueStopsAtTheLastHitBeforeHereHonouringConditionAndHitCondition) {
  const std::string trace = recordMain(100);
  startReplay(trace);
  const json set = setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal MOD 10 = 3"}}}));
  const int64_t id = set["body"]["breakpoints"][0]["id"];
  json stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "breakpoint");
  EXPECT_EQ(stopped["body"]["hitBreakpointIds"], json::array({id}));
  EXPECT_EQ(topFrame()["line"], kLineTotal);
  const int64_t last = std::stoll(evaluate("gTotal"));
  EXPECT_EQ(last % 10, 3);
  move("reverseContinue");
  EXPECT_EQ(std::stoll(evaluate("gTotal")), last - 10);
  // The 2nd hit since the start of the recording: gTotal = 13.
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal MOD 10 = 3"}, {"hitCondition", "=2"}}}));
  move("scanback/seek", json{{"cycle", 90}});
  EXPECT_EQ(move("reverseContinue")["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "13");
}

TEST_F(DapReplay, ReverseContinueWithoutBreakpointsGoesToTheStartOfTheRecordingAndSaysSo) {
  const std::string trace = recordMain(30);
  startReplay(trace);
  const json stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "step");
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{0, 0}));
  EXPECT_TRUE(said("the start of the recording was reached"));
  EXPECT_EQ(client_.indexOfEvent("terminated"), -1);
}

TEST_F(DapReplay, ReachingTheEndGoingForwardStopsThereWithAnOutputAndTheSessionGoesOn) {
  const std::string trace = recordMain(30);
  startReplay(trace, json{{"startAt", 25}});
  EXPECT_EQ(move("continue")["body"]["reason"], "step");
  EXPECT_EQ(position().first, 29u);
  EXPECT_TRUE(said("the end of the recording was reached"));
  EXPECT_EQ(client_.indexOfEvent("terminated"), -1);
  EXPECT_EQ(move("stepBack")["body"]["reason"], "step");  // and it goes on
}

TEST_F(DapReplay, LogpointsPrintGoingForwardAndNeverStopGoingBackwards) {
  const std::string trace = recordMain(30);
  startReplay(trace, json{{"startAt", 20}});
  setBreakpoints(json::array({{{"line", kLineTotal}, {"logMessage", "total={gTotal}"}}}));
  EXPECT_EQ(move("reverseContinue")["body"]["reason"], "step");  // to the start: the logpoint never stopped
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{0, 0}));
  move("scanback/seek", json{{"cycle", 26}});
  move("continue");
  std::vector<std::string> printed;
  for (const json& m : client_.messages())
    if (m.value("event", "") == "output" && m["body"]["output"].get<std::string>().rfind("total=", 0) == 0)
      printed.push_back(m["body"]["output"]);
  // Every Fast cycle from 26 to the end printed gTotal before its write, one more each time.
  ASSERT_GE(printed.size(), 2u);
  for (size_t i = 1; i < printed.size(); ++i)
    EXPECT_EQ(std::stoll(printed[i].substr(6)), std::stoll(printed[i - 1].substr(6)) + 1) << printed[i];
}

TEST_F(DapReplay, DataBreakpointsStopAfterTheWriteInBothDirections) {
  const std::string trace = recordMain(60);
  startReplay(trace, json{{"startAt", 30}});
  const json info = client_.request("dataBreakpointInfo", json{{"name", "gTotal"}, {"frameId", 1}});
  ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
  const json set =
      client_.request("setDataBreakpoints", json{{"breakpoints", json::array({{{"dataId", info["body"]["dataId"]}}})}});
  const int64_t id = set["body"]["breakpoints"][0]["id"];
  const int64_t here = std::stoll(evaluate("gTotal"));
  json stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(stopped["body"]["hitBreakpointIds"], json::array({id}));
  EXPECT_EQ(topFrame()["line"], kLineTotal + 1);    // right after the write
  EXPECT_EQ(std::stoll(evaluate("gTotal")), here);  // the last write before here made today's value
  move("reverseContinue");
  EXPECT_EQ(std::stoll(evaluate("gTotal")), here - 1);
  stopped = move("continue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(std::stoll(evaluate("gTotal")), here);
}

// Issue 27: a write undone within its cycle, in a chunk whose cycle boundaries never differ for the
// watched variable, stops a data breakpoint in both directions (the write index holds every
// statement's writes, not only what differs at cycle ends).
TEST_F(DapReplay, DataBreakpointsStopAtWritesUndoneWithinTheirCycle) {
  const std::string trace = record({"blink.st"}, 120, "blink.trace", 16);
  auto watchFlag = [&] {
    const json info = client_.request("dataBreakpointInfo", json{{"name", "Blink.flag"}, {"frameId", 1}});
    ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
    client_.request("setDataBreakpoints", json{{"breakpoints", json::array({{{"dataId", info["body"]["dataId"]}}})}});
  };
  startReplay(trace);  // at the end, cycle 119
  watchFlag();
  json stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(position().first, 70u);
  EXPECT_EQ(topFrame()["line"], kLineBlinkLast);  // right after flag := FALSE
  EXPECT_EQ(evaluate("flag"), "FALSE");
  stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(position().first, 70u);
  EXPECT_EQ(topFrame()["line"], kLineBlinkOther);  // right after flag := TRUE
  EXPECT_EQ(evaluate("flag"), "TRUE");
  stopped = move("continue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(topFrame()["line"], kLineBlinkLast);
  EXPECT_EQ(evaluate("flag"), "FALSE");
}

TEST_F(DapReplay, AForwardDataBreakpointStopsAtAWriteUndoneWithinItsCycle) {
  const std::string trace = record({"blink.st"}, 120, "blink.trace", 16);
  startReplay(trace, json{{"startAt", "start"}});
  const json info = client_.request("dataBreakpointInfo", json{{"name", "Blink.flag"}, {"frameId", 1}});
  ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
  client_.request("setDataBreakpoints", json{{"breakpoints", json::array({{{"dataId", info["body"]["dataId"]}}})}});
  const json stopped = move("continue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(position().first, 70u);
  EXPECT_EQ(topFrame()["line"], kLineBlinkOther);
  EXPECT_EQ(evaluate("flag"), "TRUE");
}

TEST_F(DapReplay, WritesAndReloadsAreRefusedBecauseHistoryIsReadOnly) {
  const std::string trace = recordMain(20);
  startReplay(trace);
  const json scopes = client_.request("scopes", json{{"frameId", 1}});
  const int64_t globals = scopes["body"]["scopes"][2]["variablesReference"];
  const json set =
      client_.request("setVariable", json{{"variablesReference", globals}, {"name", "gTotal"}, {"value", "5"}});
  EXPECT_FALSE(set["success"]);
  EXPECT_NE(set["message"].get<std::string>().find("history is read-only"), std::string::npos) << set.dump();
  const json expression =
      client_.request("setExpression", json{{"expression", "gTotal"}, {"value", "5"}, {"frameId", 1}});
  EXPECT_FALSE(expression["success"]);
  EXPECT_NE(expression["message"].get<std::string>().find("history is read-only"), std::string::npos);
  const json reload = client_.request("stReload");
  EXPECT_FALSE(reload["success"]);
  EXPECT_NE(reload["message"].get<std::string>().find("history is read-only"), std::string::npos);
}

TEST_F(DapReplay, SeekJumpsAnywhereRespondingFirstThenStoppedWithReasonGoto) {
  const std::string trace = recordMain(60);
  startReplay(trace);
  const json stopped = move("scanback/seek", json{{"cycle", 12}, {"step", 2}});
  EXPECT_EQ(stopped["body"]["reason"], "goto");
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{12, 2}));
  const json outside = client_.request("scanback/seek", json{{"cycle", 600}});
  EXPECT_FALSE(outside["success"]);
  EXPECT_NE(outside["message"].get<std::string>().find("not in the recording"), std::string::npos);
  const json pastEnd = client_.request("scanback/seek", json{{"cycle", 12}, {"step", 99}});
  EXPECT_FALSE(pastEnd["success"]);
  EXPECT_TRUE(client_.noEvent("stopped", 100ms));
}

TEST_F(DapReplay, RestartFrameGoesBackToTheFirstStatementOfTheSelectedFrame) {
  const std::string trace = recordMain(20);
  startReplay(trace, json{{"startAt", 2}});
  move("next");
  move("stepIn");
  move("stepIn");
  move("next");
  const json inside = client_.request("stackTrace", json{{"threadId", 1}})["body"];
  ASSERT_EQ(inside["totalFrames"], 2);
  EXPECT_EQ(inside["stackFrames"][0]["line"], kLineCountFirst + 1);
  // The FB's frame: back to its first statement.
  EXPECT_EQ(move("restartFrame", json{{"frameId", 1}})["body"]["reason"], "restart");
  EXPECT_EQ(topFrame()["line"], kLineCountFirst);
  // The program's frame: back to the first statement of the program body.
  move("restartFrame", json{{"frameId", 2}});
  EXPECT_EQ(topFrame()["line"], kLineN);
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{2, 0}));
}

TEST_F(DapReplay, StepBackInEntersTheCallThatEndedHereAndStepBackOutGoesToTheCall) {
  const std::string trace = recordMain(20);
  startReplay(trace, json{{"startAt", 2}});
  move("next");
  move("next");
  EXPECT_EQ(topFrame()["line"], kLineTotal);
  move("scanback/stepBackIn");
  const json inside = client_.request("stackTrace", json{{"threadId", 1}})["body"];
  ASSERT_EQ(inside["totalFrames"], 2) << inside.dump();
  EXPECT_EQ(inside["stackFrames"][0]["line"], kLineCountFirst + 1);  // Counter's last statement
  move("scanback/stepBackOut");
  const json out = client_.request("stackTrace", json{{"threadId", 1}})["body"];
  EXPECT_EQ(out["totalFrames"], 1);
  EXPECT_EQ(out["stackFrames"][0]["line"], kLineCall);
}

TEST_F(DapReplay, TheTimelineNamesTheRecordingThePositionTheTasksAndTheFault) {
  const std::string trace = record({"faulty.st"}, 10);
  startReplay(trace);
  const json t = timeline();
  EXPECT_EQ(t["firstCycle"], 0);
  EXPECT_EQ(t["lastCycle"], 2);
  EXPECT_EQ(t["cycle"], 2);
  EXPECT_EQ(t["lastTimeNs"], t["timeNs"]);
  EXPECT_EQ(t["tasks"][0]["threadId"], 1);
  EXPECT_TRUE(t["gaps"].empty());
  // docs/timeline-protocol.md: the fault is an object with its position and source.
  ASSERT_TRUE(t["fault"].is_object()) << t.dump();
  EXPECT_NE(t["fault"]["message"].get<std::string>().find("division by zero"), std::string::npos);
  EXPECT_EQ(t["fault"]["cycle"], 2);
  EXPECT_EQ(t["fault"]["step"], 1);  // the second statement of the cycle: d := 10 / (3 - n)
  EXPECT_EQ(t["fault"]["file"], project_.path("faulty.st"));
  EXPECT_EQ(t["fault"]["line"], 4);
  EXPECT_FALSE(t["live"]);
}

TEST_F(DapReplay, ALiveSessionThatDoesNotRecordRefusesReverseMovesWithWhy) {
  client_.start(json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                     {"stopOnEntry", true},
                     {"realtime", false},
                     {"record", false}});
  client_.configured();
  client_.event("stopped");
  const json back = client_.request("stepBack", json{{"threadId", 1}});
  EXPECT_FALSE(back["success"]);
  EXPECT_NE(back["message"].get<std::string>().find("no history"), std::string::npos) << back.dump();
  EXPECT_FALSE(client_.request("scanback/timeline")["success"]);
}

}  // namespace

namespace {

TEST_F(DapReplay, ATraceCutOffByACrashReplaysUpToItsLastCompleteChunkAndSaysWhatWasLost) {
  const std::string trace = recordMain(100);
  const auto size = std::filesystem::file_size(trace);
  std::filesystem::resize_file(trace, size * 2 / 3);  // as after a power loss
  const json stopped = startReplay(trace);
  EXPECT_EQ(stopped["body"]["reason"], "entry");
  const json t = timeline();
  EXPECT_GT(t["lastCycle"].get<uint64_t>(), 0u);
  EXPECT_LT(t["lastCycle"].get<uint64_t>(), 99u);
  EXPECT_TRUE(said("cut off")) << "the reader's warning goes out as output";
  EXPECT_EQ(move("stepBack")["body"]["reason"], "step");
}

TEST_F(DapReplay, AFileThatIsNoTraceFailsTheLaunchWithAClearError) {
  const std::string path = project_.path("main.st");  // ST text, not a trace
  client_.request("initialize", json{{"adapterID", "scanback"}});
  const json r = client_.request("launch", json{{"trace", path}});
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r["message"].get<std::string>().find("cannot replay"), std::string::npos) << r.dump();
  const json both = client_.request("launch", json{{"trace", path}, {"program", path}});
  EXPECT_FALSE(both["success"]);
  EXPECT_NE(both["message"].get<std::string>().find("not both"), std::string::npos);
  // The session goes on: a good launch still works.
  const json ok = client_.request("launch", json{{"trace", recordMain(10)}});
  EXPECT_TRUE(ok["success"]) << ok.dump();
}

TEST_F(DapReplay, CraftedTracesBeyondTheImageLimitFailTheLaunchNamingTheTrace) {
  // docs/language.md, "Limits": what the header claims, and what the sources declare, are checked
  // before anything is allocated for them.
  client_.request("initialize", json{{"adapterID", "scanback"}});
  const std::pair<test::CraftedTrace, std::string> cases[] = {
      {test::CraftedTrace::ImageBeyondLimit, "the header claims an image of 4294967295 bytes"},
      {test::CraftedTrace::HugeSources, "does not compile"},
      {test::CraftedTrace::SourcesBeyondHeader, "the trace recorded an image of 72 bytes"},
      {test::CraftedTrace::ImageMismatch, "compiles differently from the recording"},
  };
  for (const auto& [kind, message] : cases) {
    const std::string path = project_.path(std::string(test::craftedTraceName(kind)) + ".trace");
    std::string error;
    ASSERT_TRUE(test::writeCraftedTrace(kind, path, error)) << error;
    const json r = client_.request("launch", json{{"trace", path}});
    EXPECT_FALSE(r["success"]) << r.dump();
    const std::string text = r.value("message", "");
    EXPECT_NE(text.find("cannot replay " + path), std::string::npos) << text;
    EXPECT_NE(text.find(message), std::string::npos) << text;
  }
  const json ok = client_.request("launch", json{{"trace", recordMain(10)}});
  EXPECT_TRUE(ok["success"]) << ok.dump();
}

}  // namespace

namespace {

TEST_F(DapReplay, OnlyALiveLaunchWithoutRecordingTellsTheClientItCannotStepBack) {
  client_.start(json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                     {"realtime", false},
                     {"record", false}});
  const json caps = client_.event("capabilities");
  EXPECT_EQ(caps["body"]["capabilities"]["supportsStepBack"], false);
  EXPECT_LT(client_.indexOfEvent("capabilities"), client_.indexOfEvent("initialized"));
  SessionClient recorded;
  recorded.start(
      json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})}, {"realtime", false}});
  EXPECT_TRUE(recorded.noEvent("capabilities", 50ms));
  SessionClient replay;
  replay.start(json{{"trace", recordMain(10)}});
  EXPECT_TRUE(replay.noEvent("capabilities", 50ms));
  EXPECT_EQ(recorded.schemaErrors(), "");
  EXPECT_EQ(replay.schemaErrors(), "");
}

}  // namespace

namespace {

TEST_F(DapReplay, AStepNamingAnotherThreadEndsInThatTasksNextOrPreviousCycle) {
  const std::string trace = recordMain(40);
  startReplay(trace, json{{"startAt", 8}});  // Fast cycles 0, 2-5, 7-10 ...; Slow cycles 1, 6, 12 ...
  ASSERT_EQ(move("next")["body"]["threadId"], 1);
  json stopped = move("next", json{{"threadId", 2}});
  EXPECT_EQ(stopped["body"]["reason"], "step");
  EXPECT_EQ(stopped["body"]["threadId"], 2);
  const uint64_t slow = position().first;
  EXPECT_GT(slow, 8u);
  EXPECT_EQ(position().second, 0u);
  EXPECT_EQ(topFrame(2)["line"], kLineTicks);
  move("scanback/seek", json{{"cycle", slow + 1}});
  stopped = move("stepBack", json{{"threadId", 2}});
  EXPECT_EQ(stopped["body"]["threadId"], 2);
  EXPECT_EQ(position().first, slow);
  EXPECT_EQ(topFrame(2)["line"], kLineTicks);
}

}  // namespace

namespace {

TEST_F(DapReplay, PauseCutsALongSearchShortAndStopsWhereTheMoveBeganWithReasonPause) {
  // Few keyframes: each evaluation re-executes hundreds of cycles (seconds in all).
  const std::string trace = record({"main.st", "lib.st"}, 12000, "long.trace", 4000);
  startReplay(trace);
  const std::pair<uint64_t, uint64_t> here = position();
  // A condition that never holds: reverseContinue evaluates it at every earlier run of the
  // statement, re-executing history for each, all the way to the start.
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal < 0"}}}));
  const std::chrono::milliseconds busy = test::othersCpuTime();
  const int64_t seq = client_.send("reverseContinue", json{{"threadId", 1}});
  ASSERT_TRUE(client_.response(seq)["success"]);
  // The search is under way: the target's thread has been working for a while.
  ASSERT_TRUE(test::eventually([&] { return test::othersCpuTime() >= busy + 30ms; }));
  const json pause = client_.request("pause", json{{"threadId", 1}});
  EXPECT_TRUE(pause["success"]);
  const json stopped = client_.event("stopped", 5s);
  EXPECT_EQ(stopped["body"]["reason"], "pause");
  EXPECT_EQ(position(), here);  // the search was cut short before it moved anything
}

}  // namespace

namespace {

// What a client sees at a stop: where (file, line, column, frame names) and the values.
json observe(SessionClient& client, int64_t thread) {
  const json trace = client.request("stackTrace", json{{"threadId", thread}})["body"];
  json seen{{"thread", thread}, {"frames", json::array()}};
  for (const json& f : trace["stackFrames"])
    seen["frames"].push_back(json{
        {"name", f["name"]}, {"path", f["source"].value("path", "")}, {"line", f["line"]}, {"column", f["column"]}});
  for (const char* e : {"Main.n", "Main.d", "Main.c.count", "gTotal", "Watch.ticks"})
    seen[e] = client.request("evaluate", json{{"expression", e}, {"frameId", 1}})["body"].value("result", "?");
  const json scopes = client.request("scopes", json{{"frameId", 1}})["body"]["scopes"];
  const json locals =
      client.request("variables", json{{"variablesReference", scopes[0]["variablesReference"]}})["body"];
  for (const json& v : locals["variables"]) seen["locals"][v["name"].get<std::string>()] = v["value"];
  return seen;
}

TEST_F(DapReplay, HistoryShowsExactlyWhatTheLiveRunShowedAtEveryStep) {
  // The live run: stepIn through the first cycles of the program, both tasks running.
  SessionClient live;
  live.start(json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                  {"stopOnEntry", true},
                  {"realtime", false}});
  live.configured();
  std::vector<json> liveSeen;
  int64_t thread = live.event("stopped")["body"]["threadId"];
  liveSeen.push_back(observe(live, thread));
  for (int i = 0; i < 60; ++i) {
    live.request("stepIn", json{{"threadId", 1}});
    thread = live.event("stopped")["body"]["threadId"];
    liveSeen.push_back(observe(live, thread));
  }
  EXPECT_EQ(live.schemaErrors(), "");
  // The run went through calls and cycles: there is something to compare.
  std::set<std::string> totals;
  size_t deepest = 0;
  for (const json& s : liveSeen) {
    totals.insert(s["gTotal"].get<std::string>());
    deepest = std::max(deepest, s["frames"].size());
  }
  EXPECT_GE(totals.size(), 5u);
  EXPECT_FALSE(totals.count("?"));
  EXPECT_EQ(deepest, 2u);
  // The same program recorded, replayed from its start with the same steps.
  const std::string trace = recordMain(40);
  startReplay(trace, json{{"startAt", "start"}});
  std::vector<json> replaySeen{observe(client_, 1)};
  for (int i = 0; i < 60; ++i) {
    const json stopped = move("stepIn");
    replaySeen.push_back(observe(client_, stopped["body"]["threadId"]));
  }
  ASSERT_EQ(replaySeen.size(), liveSeen.size());
  for (size_t i = 0; i < liveSeen.size(); ++i) EXPECT_EQ(replaySeen[i], liveSeen[i]) << "stop " << i;
  // And going back over the same steps shows them again.
  for (size_t i = liveSeen.size() - 1; i > liveSeen.size() - 20; --i) {
    const json stopped = move("scanback/stepBackIn");
    EXPECT_EQ(observe(client_, stopped["body"]["threadId"]), liveSeen[i - 1]) << "back to stop " << i - 1;
  }
}

}  // namespace

// ---------------------------------------------------------------- live sessions keep their history

namespace {

class DapLiveHistory : public DapReplay {
 protected:
  // A live launch of main.st + lib.st as fast as it goes, recording (the default) unless `extra` says otherwise.
  void startLive(json extra = json::object()) {
    json args{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})}, {"realtime", false}};
    args.update(extra);
    client_.start(args);
  }
  // From a pause, on to a live stop on line 21 (gTotal := gTotal + 1) where gTotal = `total`
  // before it runs.
  json runToTotal(int total) {
    setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal = " + std::to_string(total)}}}));
    return move("continue");
  }
};

TEST_F(DapLiveHistory, StepBackFromALivePauseShowsHistoryAndNextReturnsToTheLiveTaskWhichRunsOn) {
  startLive();
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal = 20"}}}));
  client_.configured();
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "breakpoint");
  const auto live = position();
  EXPECT_EQ(evaluate("gTotal"), "20");
  const std::string n = evaluate("Main.n");
  setBreakpoints(json::array());
  // Back over the call, and into the previous cycles of the task.
  std::vector<std::pair<std::pair<uint64_t, uint64_t>, std::string>> seen;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(move("stepBack")["body"]["reason"], "step");
    seen.emplace_back(position(), evaluate("gTotal"));
    EXPECT_LT(seen.back().first, live);
  }
  EXPECT_EQ(seen.front().first.first, live.first) << "the first step back stays in the cycle under way";
  EXPECT_EQ(topFrame()["line"], kLineTotal) << "eight statements back (4 per cycle of Main)";
  EXPECT_EQ(evaluate("gTotal"), "18");
  // A write is refused in history.
  const json write = client_.request("setExpression", json{{"expression", "gTotal"}, {"value", "7"}, {"frameId", 1}});
  EXPECT_FALSE(write["success"]);
  EXPECT_NE(write["message"].get<std::string>().find("history"), std::string::npos) << write.dump();
  // Forward again by replay, to exactly where the task is paused.
  for (int i = 6; i >= 0; --i) {
    move("next");
    EXPECT_EQ(position(), seen[static_cast<size_t>(i)].first);
    EXPECT_EQ(evaluate("gTotal"), seen[static_cast<size_t>(i)].second);
  }
  move("next");
  EXPECT_EQ(position(), live);
  EXPECT_EQ(evaluate("Main.n"), n);
  // And on: the task itself executes the next statement, and then the program runs on live.
  EXPECT_EQ(move("next")["body"]["reason"], "step");
  EXPECT_EQ(evaluate("gTotal"), "21");
  const json again = runToTotal(60);
  EXPECT_EQ(again["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "60");
  EXPECT_GT(position().first, live.first);
}

TEST_F(DapLiveHistory, ReverseContinueFindsEarlierHitsAndContinueComesBackToTheLiveOneThenGoesOnLive) {
  startLive();
  const json set = setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal MOD 10 = 3"}}}));
  const int64_t id = set["body"]["breakpoints"][0]["id"];
  client_.configured();
  client_.event("stopped");
  EXPECT_EQ(evaluate("gTotal"), "3");
  client_.request("continue", json{{"threadId", 1}});
  client_.event("stopped");
  client_.request("continue", json{{"threadId", 1}});
  client_.event("stopped");
  EXPECT_EQ(evaluate("gTotal"), "23");
  json stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "breakpoint");
  EXPECT_EQ(stopped["body"]["hitBreakpointIds"], json::array({id}));
  EXPECT_EQ(evaluate("gTotal"), "13");
  move("reverseContinue");
  EXPECT_EQ(evaluate("gTotal"), "3");
  EXPECT_EQ(move("reverseContinue")["body"]["reason"], "step") << "no hit before the first: the start";
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{0, 0}));
  // Forward: the hits again, by replay, up to the live one; then live execution finds the next.
  move("continue");
  EXPECT_EQ(evaluate("gTotal"), "3");
  move("continue");
  EXPECT_EQ(evaluate("gTotal"), "13");
  move("continue");
  EXPECT_EQ(evaluate("gTotal"), "23");
  stopped = move("continue");
  EXPECT_EQ(stopped["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "33");
  // Writes work again at the live position.
  const json write = client_.request("setExpression", json{{"expression", "Main.d"}, {"value", "7"}, {"frameId", 1}});
  EXPECT_TRUE(write["success"]) << write.dump();
}

TEST_F(DapLiveHistory, DataBreakpointsFindTheLastWriteInHistoryFromALivePause) {
  startLive(json{{"stopOnEntry", true}});
  client_.configured();
  client_.event("stopped");
  runToTotal(12);
  const json info = client_.request("dataBreakpointInfo", json{{"name", "gTotal"}});
  ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
  client_.request("setDataBreakpoints",
                  json{{"breakpoints", json::array({{{"dataId", info["body"]["dataId"]}, {"accessType", "write"}}})}});
  setBreakpoints(json::array());
  const json stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "12") << "right after the statement that made it 12";
  EXPECT_EQ(topFrame()["line"], kLineTotal + 1);
  move("reverseContinue");
  EXPECT_EQ(evaluate("gTotal"), "11");
  // Forward: the live position comes before the next write, then live execution makes it.
  move("continue");
  EXPECT_EQ(evaluate("gTotal"), "12");
  const json live = move("continue");
  EXPECT_EQ(live["body"]["reason"], "data breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "13");
}

TEST_F(DapLiveHistory, TheTimelineOfALiveSessionEndsWhereTheTaskIsPausedAndSaysItIsLive) {
  startLive(json{{"stopOnEntry", true}});
  client_.configured();
  client_.event("stopped");
  json t = timeline();
  EXPECT_EQ(t["live"], true);
  EXPECT_EQ(t["cycle"], 0);
  EXPECT_EQ(t["lastCycle"], 0);
  // Nothing before the first statement: the step back stays, and says so.
  EXPECT_EQ(move("stepBack")["body"]["reason"], "step");
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{0, 0}));
  EXPECT_TRUE(said("the start of the recording was reached"));
  runToTotal(30);
  t = timeline();
  EXPECT_GT(t["lastCycle"].get<uint64_t>(), 30u);
  EXPECT_EQ(t["cycle"], t["lastCycle"]);
  // Nothing after the live position: the cycle under way has gone no further.
  const json past =
      client_.request("scanback/seek", json{{"cycle", t["cycle"]}, {"step", t["step"].get<uint64_t>() + 1}});
  EXPECT_FALSE(past["success"]);
  EXPECT_NE(past["message"].get<std::string>().find("has gone no further"), std::string::npos) << past.dump();
  move("scanback/seek", json{{"cycle", 5}});
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{5, 0}));
}

TEST_F(DapLiveHistory, TheTraceIsRemovedAtTheEndUnlessKeptOrNamed) {
  auto recordingPath = [&](SessionClient& client) {
    for (const json& m : client.messages()) {
      if (m.value("event", "") != "output") continue;
      const std::string text = m["body"]["output"];
      if (text.rfind("recording to ", 0) == 0) return text.substr(13, text.find_first_of(" \n", 13) - 13);
    }
    return std::string();
  };
  std::string temporary, kept;
  {
    SessionClient client;
    client.start(json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                      {"realtime", false},
                      {"cycles", 50}});
    client.configured();
    client.event("exited");
    temporary = recordingPath(client);
    ASSERT_FALSE(temporary.empty());
    EXPECT_TRUE(std::filesystem::exists(temporary)) << "finished when the program ended";
    client.request("disconnect");
  }
  EXPECT_FALSE(std::filesystem::exists(temporary));
  {
    SessionClient client;
    client.start(json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                      {"realtime", false},
                      {"cycles", 50},
                      {"keepTrace", true}});
    client.configured();
    client.event("exited");
    kept = recordingPath(client);
    client.request("disconnect");
  }
  EXPECT_TRUE(std::filesystem::exists(kept));
  std::filesystem::remove(kept);
  const std::string named = project_.path("named.trace");
  {
    SessionClient client;
    client.start(json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                      {"realtime", false},
                      {"cycles", 50},
                      {"record", "named.trace"},
                      {"cwd", project_.dir().string()}});
    client.configured();
    client.event("exited");
    client.request("disconnect");
  }
  // A whole trace of the 50 cycles: a replay session opens it.
  SessionClient replay;
  replay.start(json{{"trace", named}});
  replay.configured();
  replay.event("stopped");
  EXPECT_EQ(replay.request("scanback/timeline")["body"]["lastCycle"], 49);
}

}  // namespace

namespace {

// At random positions of a live session's history: stepBack then next comes back to the same
// position with the same values (the exactness rule). At a POU's first statement stepBack goes out
// to the call, so there the mirror pair is stepBackIn then stepIn.
TEST_F(DapLiveHistory, AtRandomPositionsStepBackThenNextReturnsToTheSamePositionAndValues) {
  startLive();
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal = 60"}}}));
  client_.configured();
  client_.event("stopped");
  setBreakpoints(json::array());
  const uint64_t lastCycle = timeline()["lastCycle"];
  auto values = [&] {
    return std::vector<std::string>{evaluate("gTotal"), evaluate("Main.n"), evaluate("Main.c.count"),
                                    evaluate("Watch.ticks")};
  };
  auto depth = [&](int64_t thread) {
    const json frames = client_.request("stackTrace", json{{"threadId", thread}})["body"]["stackFrames"];
    // The end of a cycle: one frame, the program at its END_PROGRAM, and no statement there.
    if (frames.size() == 1 && frames[0]["name"].get<std::string>().ends_with("end of cycle")) return size_t{0};
    return frames.size();
  };
  std::mt19937_64 random(11);
  int sameFrame = 0, firstStatements = 0;
  for (int i = 0; i < 40; ++i) {
    const uint64_t cycle = 1 + random() % (lastCycle - 1);
    const uint64_t step = random() % 8;
    const json seek = client_.request("scanback/seek", json{{"cycle", cycle}, {"step", step}});
    if (!seek["success"]) continue;  // past the end of that cycle
    const int64_t thread = client_.event("stopped")["body"]["threadId"];
    const auto at = position();
    const size_t frames = depth(thread);
    if (frames == 0) continue;  // the end of a cycle: no statement there
    const std::vector<std::string> before = values();
    move("stepBack", json{{"threadId", thread}});
    std::string forward = "next";
    if (depth(thread) < frames) {  // out of the callee: its first statement
      move("scanback/seek", json{{"cycle", at.first}, {"step", at.second}});
      move("scanback/stepBackIn", json{{"threadId", thread}});
      forward = "stepIn";
      ++firstStatements;
    } else {
      ++sameFrame;
    }
    EXPECT_EQ(move(forward, json{{"threadId", thread}})["body"]["reason"], "step");
    EXPECT_EQ(position(), at) << forward << " back to cycle " << at.first << " step " << at.second;
    EXPECT_EQ(values(), before) << "at cycle " << at.first << " step " << at.second;
  }
  EXPECT_GT(sameFrame, 10);
  EXPECT_GT(firstStatements, 2);
}

// A trace holds one program version: stReload ends it and the history goes on in a new one, so
// stepping back reaches the reload at most, and says where the earlier cycles are.
TEST_F(DapLiveHistory, AfterAStReloadHistoryGoesBackToTheReloadAndSaysWhereTheEarlierCyclesAre) {
  startLive(json{{"stopOnEntry", true}});
  client_.configured();
  client_.event("stopped");
  runToTotal(10);
  const uint64_t before = position().first;
  std::string text = kMain;
  text.replace(text.find("IF n > 1000"), 11, "IF n > 2000");
  std::ofstream(project_.path("main.st"), std::ios::trunc) << text;
  const json reload = client_.request("stReload");
  ASSERT_TRUE(reload["success"]) << reload.dump();
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "pause") << "paused, the client refreshes";
  runToTotal(20);
  EXPECT_EQ(move("reverseContinue")["body"]["reason"], "step");
  const uint64_t start = position().first;
  EXPECT_GT(start, before) << "not before the reload";
  EXPECT_EQ(position().second, 0u);
  EXPECT_TRUE(said("the start of the history since the last stReload")) << "and where the rest is";
  const json first = timeline();
  EXPECT_EQ(first["firstCycle"], start);
  // Forward again to the live position, and on live.
  EXPECT_EQ(move("continue")["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "20");
}

TEST_F(DapLiveHistory, ATraceThatEndsWhileThePausedTaskIsInsideACycleKeepsThatCycleUpToWhereItWasPaused) {
  const std::string named = project_.path("paused.trace");
  std::pair<uint64_t, uint64_t> live;
  std::string total, n;
  {
    startLive(json{{"record", named}});
    setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal = 9"}}}));
    client_.configured();
    client_.event("stopped");
    live = position();
    total = evaluate("gTotal");
    n = evaluate("Main.n");
    client_.request("disconnect");
  }
  EXPECT_GT(live.second, 0u) << "inside the cycle";
  SessionClient replay;
  replay.start(json{{"trace", named}});
  replay.configured();
  EXPECT_EQ(replay.event("stopped")["body"]["reason"], "entry");
  const json t = replay.request("scanback/timeline")["body"];
  EXPECT_EQ((std::pair<uint64_t, uint64_t>{t["cycle"], t["step"]}), live) << "the end is where the task was paused";
  EXPECT_EQ(t["lastCycle"], live.first);
  auto value = [&](const std::string& expression) {
    return replay.request("evaluate", json{{"expression", expression}, {"frameId", 1}})["body"].value("result", "?");
  };
  EXPECT_EQ(value("gTotal"), total);
  EXPECT_EQ(value("Main.n"), n);
  EXPECT_EQ(replay.schemaErrors(), "");
}

}  // namespace

// ---------------------------------------------------------------- nonstop: the live task never halts

namespace {

class DapNonstop : public DapLiveHistory {
 protected:
  // A nonstop launch, paced in real time (Fast every 10 ms), with a breakpoint on line 21 where
  // gTotal = `total` set before it starts.
  json startNonstop(int total) {
    startLive(json{{"nonstop", true}, {"realtime", true}});
    setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal = " + std::to_string(total)}}}));
    client_.configured();
    return client_.event("stopped");
  }
  uint64_t lastCycle() { return timeline()["lastCycle"].get<uint64_t>(); }
  // Waits until the recording holds more than `cycle` (the live task ran on).
  bool growsPast(uint64_t cycle) {
    return test::eventually([&] { return lastCycle() > cycle; });
  }
};

TEST_F(DapNonstop, ABreakpointHitIsReportedFromHistoryWhileTheTaskKeepsScanning) {
  const json hit = startNonstop(5);
  EXPECT_EQ(hit["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "5");
  EXPECT_EQ(topFrame()["line"], kLineTotal);
  const json t = timeline();
  EXPECT_EQ(t["live"], true);
  const uint64_t at = t["cycle"].get<uint64_t>();
  EXPECT_TRUE(growsPast(at + 10)) << "the task scans on while the session is stopped";
  EXPECT_EQ(timeline()["cycle"], at) << "and the session stays where it stopped";
  EXPECT_EQ(evaluate("gTotal"), "5");
  EXPECT_GT(timeline()["cycleTime"]["cycles"].get<uint64_t>(), at);
}

TEST_F(DapNonstop, SteppingBackWhileTheCycleCountAdvances) {
  startNonstop(8);
  uint64_t end = lastCycle();
  auto here = position();
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(move("stepBack")["body"]["reason"], "step");
    EXPECT_LT(position(), here);
    here = position();
    EXPECT_TRUE(growsPast(lastCycle())) << "the task scans on between the steps";
  }
  EXPECT_EQ(evaluate("gTotal"), "7") << "six statements back (four per Main cycle)";
  EXPECT_TRUE(growsPast(end + 5));
  end = lastCycle();
  // Forward steps move through history and never wait for the task.
  move("next");
  EXPECT_GT(position(), here);
}

TEST_F(DapNonstop, ContinueFollowsTheGrowingRecordingToTheNextHitAndPauseShowsTheNewestPosition) {
  startNonstop(4);
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal MOD 10 = 0"}}}));
  EXPECT_EQ(move("continue")["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "10");
  EXPECT_EQ(move("continue")["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "20");
  const uint64_t hitCycle = position().first;
  // No more stops; a logpoint shows how far the continue has followed the recording.
  setBreakpoints(json::array({{{"line", kLineTotal}, {"logMessage", "total {gTotal}"}}}));
  const size_t from = client_.messages().size();
  client_.request("continue", json{{"threadId", 1}});
  ASSERT_FALSE(client_.awaitOutput("total 40", from).is_null()) << "the continue follows the recording as it grows";
  client_.request("pause", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "pause");
  // The newest position recorded when the pause came (the recording has grown since): 20 Fast
  // cycles after the hit at least.
  const json t = timeline();
  EXPECT_LE(t["cycle"].get<uint64_t>(), t["lastCycle"].get<uint64_t>());
  EXPECT_GT(t["cycle"].get<uint64_t>(), hitCycle + 15);
  EXPECT_GT(std::stoll(evaluate("gTotal")), 30);
  // History is read-only, and the task is never touched.
  const json write = client_.request("setExpression", json{{"expression", "gTotal"}, {"value", "7"}, {"frameId", 1}});
  EXPECT_FALSE(write["success"]);
}

TEST_F(DapNonstop, WhenTheProgramFaultsTheSessionStopsAtTheFaultInHistoryAndStaysOpen) {
  client_.start(json{{"program", project_.path("faulty.st")}, {"nonstop", true}, {"realtime", false}});
  client_.configured();
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "exception");
  EXPECT_NE(stopped["body"]["description"].get<std::string>().find("division by zero"), std::string::npos)
      << stopped.dump();
  EXPECT_TRUE(said("the program has ended (exit code 3)"));
  EXPECT_EQ(client_.indexOfEvent("terminated"), -1) << "the history stays open";
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{2, 1}));
  EXPECT_EQ(evaluate("Faulty.n"), "3");
  EXPECT_EQ(move("stepBack")["body"]["reason"], "step");
  EXPECT_EQ(position(), (std::pair<uint64_t, uint64_t>{2, 0}));
  // Forward again: the end, where the program faulted.
  EXPECT_EQ(move("continue")["body"]["reason"], "exception");
}

TEST_F(DapNonstop, ABreakpointSetWhileTheSessionFollowsTheRecordingStopsIt) {
  startLive(json{{"nonstop", true}, {"realtime", true}});
  // No breakpoint: the session follows the recording, as a logpoint it passes shows.
  setBreakpoints(json::array({{{"line", kLineTotal}, {"logMessage", "total {gTotal}"}}}));
  client_.configured();
  ASSERT_FALSE(client_.awaitOutput("total 3").is_null());
  EXPECT_TRUE(client_.noEvent("stopped", std::chrono::milliseconds(10)));
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal > 30"}}}));
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "breakpoint");
  EXPECT_GT(std::stoll(evaluate("gTotal")), 30);
}

TEST_F(DapNonstop, NonstopNeedsTheRecording) {
  client_.send("initialize", json{{"adapterID", "scanback"}});
  const json launch =
      client_.request("launch", json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                                     {"nonstop", true},
                                     {"record", false}});
  EXPECT_FALSE(launch["success"]);
  EXPECT_NE(launch["message"].get<std::string>().find("record"), std::string::npos) << launch.dump();
}

// ---------------------------------------------------------------- scanback/signals

// The same trace without its write index, as a recorder before the index wrote it.
std::string withoutWriteIndex(const std::string& trace, const std::string& copy) {
  return test::copyWithChunksEdited(trace, copy, [](trace::ChunkData& chunk) {
    EXPECT_TRUE(chunk.writeIndex.has_value());
    chunk.writeIndex.reset();
  });
}

TEST_F(DapReplay, SignalsGiveEveryChangeWithItsPositionTimeAndValueAsTheReplayShowsIt) {
  const std::string trace = recordMain(120);
  startReplay(trace, json{{"startAt", 40}});
  const json r =
      client_.request("scanback/signals",
                      json{{"variables", json::array({"Main.n", "gTotal", "Main.c.count", "Main.nosuch", "Main.c"})},
                           {"firstCycle", 10},
                           {"lastCycle", 90}});
  ASSERT_TRUE(r["success"]) << r.dump();
  const json& body = r["body"];
  EXPECT_EQ(body["firstCycle"], 10);
  EXPECT_EQ(body["lastCycle"], 90);
  ASSERT_EQ(body["signals"].size(), 5u);
  const json& n = body["signals"][0];
  EXPECT_EQ(n["variable"], "Main.n");
  EXPECT_EQ(n["type"], "INT");
  EXPECT_EQ(n["kind"], "integer");
  EXPECT_TRUE(n["complete"]);
  EXPECT_EQ(body["signals"][1]["kind"], "integer");
  EXPECT_EQ(body["signals"][1]["type"], "DINT");
  EXPECT_NE(body["signals"][3]["error"].get<std::string>().find("nosuch"), std::string::npos) << body.dump();
  EXPECT_FALSE(body["signals"][3].contains("changes"));
  EXPECT_NE(body["signals"][4]["error"].get<std::string>().find("not one value"), std::string::npos);

  // Against the replayer itself: the value at every change's position is the new one, at the
  // boundary before it the old one, and between changes it does not move.
  std::string error;
  auto replayer = replay::Replayer::open(trace, {}, error);
  ASSERT_TRUE(replayer) << error;
  for (size_t k = 0; k < 3; ++k) {
    const json& s = body["signals"][k];
    const std::optional<VariableLocation> v =
        findVariable(replayer->program(), s["variable"].get<std::string>(), error);
    ASSERT_TRUE(v) << error;
    auto valueAt = [&](replay::Position p) {
      EXPECT_TRUE(replayer->seek(p, error)) << error;
      return formatValue(replayer->program(), replayer->vm().image(), v->offset, v->bit, *v->type);
    };
    EXPECT_EQ(s["initial"]["text"], valueAt({10, 0 /* after the scan inputs, which write none of these */}));
    std::string before = s["initial"]["text"];
    ASSERT_GT(s["changes"].size(), 10u) << s.dump();
    replay::Position previous{10, 0};
    for (const json& c : s["changes"]) {
      const replay::Position at{c["cycle"].get<uint64_t>(), c["step"].get<uint64_t>()};
      ASSERT_GE(at.cycle, 10u);
      ASSERT_LE(at.cycle, 90u);
      ASSERT_GT(at.step, 0u);
      ASSERT_LT(previous, at);
      EXPECT_EQ(c["value"]["text"], valueAt(at)) << s["variable"] << " at " << at.cycle << ":" << at.step;
      EXPECT_EQ(c["value"]["number"].get<double>(), std::stod(c["value"]["text"].get<std::string>()));
      EXPECT_EQ(before, valueAt({at.cycle, at.step - 1})) << "the value before the writing statement";
      std::shared_ptr<const trace::ChunkData> held;
      replay::CycleRecord record;
      ASSERT_TRUE(replayer->history().cycle(at.cycle, held, record, error));
      EXPECT_EQ(c["timeNs"], record.startNs);
      before = c["value"]["text"];
      previous = at;
    }
    EXPECT_EQ(before, valueAt({90, replayer->steps(90, error)->count()})) << "no change after the last one";
  }
  // The position did not move.
  EXPECT_EQ(timeline()["cycle"], 40);
}

TEST_F(DapReplay, SignalsAreDownsampledToMaxPointsKeepingTheFirstAndTheExtremesOfEachBucket) {
  const std::string trace = recordMain(200);
  startReplay(trace);
  const json all = client_.request("scanback/signals", json{{"variables", json::array({"Main.c.count"})}});
  ASSERT_TRUE(all["success"]) << all.dump();
  const json& every = all["body"]["signals"][0];
  EXPECT_TRUE(every["complete"]);
  EXPECT_EQ(all["body"]["firstCycle"], 0);
  const size_t total = every["changes"].size();
  ASSERT_GT(total, 100u);
  const json few =
      client_.request("scanback/signals", json{{"variables", json::array({"Main.c.count"})}, {"maxPoints", 30}});
  ASSERT_TRUE(few["success"]) << few.dump();
  const json& some = few["body"]["signals"][0];
  EXPECT_FALSE(some["complete"]);
  EXPECT_LE(some["changes"].size(), 30u);
  EXPECT_GE(some["changes"].size(), 10u);
  EXPECT_EQ(some["changes"][0], every["changes"][0]) << "the first change is kept";
  // Every kept change is one of all the changes, in order; the largest value is kept.
  double largest = 0, largestKept = 0;
  for (const json& c : every["changes"]) largest = std::max(largest, c["value"]["number"].get<double>());
  size_t at = 0;
  for (const json& c : some["changes"]) {
    while (at < total && every["changes"][at] != c) ++at;
    ASSERT_LT(at, total) << c.dump() << " is not one of the changes, or out of order";
    largestKept = std::max(largestKept, c["value"]["number"].get<double>());
  }
  EXPECT_EQ(largestKept, largest);
}

TEST_F(DapReplay, SignalsAreTheSameWithAndWithoutTheWriteIndex) {
  const std::string trace = recordMain(150);
  const std::string plain = withoutWriteIndex(trace, project_.path("plain.trace"));
  const json args{{"variables", json::array({"gTotal", "Watch.ticks", "Main.d"})}, {"firstCycle", 5}};
  startReplay(trace);
  const json indexed = client_.request("scanback/signals", args);
  ASSERT_TRUE(indexed["success"]) << indexed.dump();
  SessionClient other;
  other.start(json{{"trace", plain}});
  other.configured();
  other.event("stopped");
  const json unindexed = other.request("scanback/signals", args);
  ASSERT_TRUE(unindexed["success"]) << unindexed.dump();
  EXPECT_EQ(indexed["body"], unindexed["body"]);
  EXPECT_GT(indexed["body"]["signals"][1]["changes"].size(), 5u);
  EXPECT_TRUE(indexed["body"]["signals"][2]["changes"].empty()) << "Main.d is never written";
  EXPECT_EQ(other.schemaErrors(), "");
}

TEST_F(DapReplay, BadSignalsArgumentsAreErrorsSayingWhy) {
  const std::string trace = recordMain(40);
  startReplay(trace);
  json r = client_.request("scanback/signals", json::object());
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r["message"].get<std::string>().find("variables"), std::string::npos) << r.dump();
  r = client_.request("scanback/signals", json{{"variables", json::array({1})}});
  EXPECT_FALSE(r["success"]);
  r = client_.request("scanback/signals", json{{"variables", json::array({"gTotal"})}, {"firstCycle", -1}});
  EXPECT_FALSE(r["success"]);
  r = client_.request("scanback/signals", json{{"variables", json::array({"gTotal"})}, {"maxPoints", 0}});
  EXPECT_FALSE(r["success"]);
  r = client_.request("scanback/signals",
                      json{{"variables", json::array({"gTotal"})}, {"firstCycle", 500}, {"lastCycle", 600}});
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r["message"].get<std::string>().find("outside the recorded cycles 0..39"), std::string::npos) << r.dump();
  r = client_.request("scanback/signals", json{{"variables", json::array({"gTotal"})}, {"firstCycle", "x"}});
  EXPECT_FALSE(r["success"]);
}

TEST_F(DapLiveHistory, TimelineAndSignalsAnswerWhileTheLiveTaskRuns) {
  startLive();  // as fast as it goes: chunks reach the file quickly
  client_.configured();
  // Running: the timeline grows and says it is live; signals read what is recorded so far.
  uint64_t last = 0;
  ASSERT_TRUE(test::eventually([&] {
    const json r = client_.request("scanback/timeline");
    if (!r["success"]) return false;
    last = r["body"]["lastCycle"].get<uint64_t>();
    return last >= 20 && r["body"]["live"].get<bool>();
  })) << client_.request("scanback/timeline").dump();
  const json r = client_.request("scanback/signals", json{{"variables", json::array({"gTotal"})}});
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_GE(r["body"]["lastCycle"].get<uint64_t>(), last);
  EXPECT_GE(r["body"]["signals"][0]["changes"].size(), 10u);
  EXPECT_TRUE(test::eventually([&] {
    const json t = client_.request("scanback/timeline");
    return t["success"] && t["body"]["lastCycle"].get<uint64_t>() > last && t["body"].contains("cycleTime");
  }));
}

TEST_F(DapLiveHistory, WhileTheTaskIsStoppedTheCyclesBeforeTheStopReachTheFileAndTheTimelineSaysTheRecordingIsOk) {
  const std::string trace = project_.path("held.trace");
  startLive(json{{"record", trace}, {"keepTrace", true}});
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal = 3000"}}}));
  client_.configured();
  ASSERT_EQ(client_.event("stopped")["body"]["reason"], "breakpoint");
  // Held at the breakpoint: every cycle that ended before it is in the .partial file within the
  // flush window (1 s by default), though no further cycle starts (a crash meanwhile loses none).
  // (Main counts gTotal once a Fast cycle: the stop is in the Fast cycle of 30 s, after 3000 Fast
  // cycles and the 600 Slow ones released before 30 s. No request that reads history comes first:
  // moving into history writes the file on its own.)
  const uint64_t stoppedIn = 3600;
  uint64_t held = 0;
  EXPECT_TRUE(test::eventually([&] {
    std::string error;
    std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::open(trace + ".partial", error);
    if (!reader) return false;
    held = 0;
    for (const trace::BlockInfo& b : reader->blocks())
      if (b.kind == trace::BlockKind::Chunk) held = std::max(held, b.firstCycle + b.cycleCount);
    return held >= stoppedIn;
  })) << held
      << " cycles in the file, stopped in cycle " << stoppedIn;
  const json t = client_.request("scanback/timeline");
  ASSERT_TRUE(t["success"]) << t.dump();
  EXPECT_EQ(t["body"]["cycle"], stoppedIn);
  EXPECT_EQ(t["body"]["recording"]["state"], "ok");
  EXPECT_EQ(t["body"]["recording"]["path"], trace);
  EXPECT_EQ(t["body"]["recording"]["lostCycles"], 0);
}

// ---------------------------------------------------------------- exactness

// The END_PROGRAM line comes from the parser, not from a search of the text: comments and strings
// after the last statement that mention END_ keywords do not move it.
TEST_F(DapReplay, AStopAtACyclesEndFindsEndProgramPastCommentsThatNameEndKeywords) {
  const TempProject project{{{"commented.st", R"(PROGRAM Counter
VAR n : DINT; note : STRING := 'see END_STRUCT'; END_VAR
n := n + 1;
(* the loop ends at END_FOR;
   END_STRUCT closes the type *)
// END_TYPE, END_VAR
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Counter;
END_CONFIGURATION
)"}}};
  const std::shared_ptr<const Program> program = mustCompileSourceFiles({project.path("commented.st")});
  ASSERT_TRUE(program);
  const std::string trace = project.path("commented.trace");
  recordCycles(program, trace, 20, 8);
  startReplay(trace, json{{"startAt", 10}});
  const json info = client_.request("dataBreakpointInfo", json{{"name", "Main.n"}, {"frameId", 1}});
  ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
  client_.request("setDataBreakpoints", json{{"breakpoints", json::array({{{"dataId", info["body"]["dataId"]}}})}});
  // n := n + 1 is the cycle's only statement: its write stops at the cycle's end.
  EXPECT_EQ(move("continue")["body"]["reason"], "data breakpoint");
  const json frames = client_.request("stackTrace", json{{"threadId", 1}});
  ASSERT_EQ(frames["body"]["stackFrames"].size(), 1u) << frames.dump();
  EXPECT_EQ(frames["body"]["stackFrames"][0]["line"], 7) << frames.dump();  // END_PROGRAM, not line 5 or 6
}

TEST_F(DapReplay, AStopAtACyclesEndHasTheTasksProgramAtItsEndProgramLineAsItsFrame) {
  const std::string trace = recordMain(80);
  startReplay(trace, json{{"startAt", 60}});
  // A data breakpoint on Watch.ticks, written by WatchProg's only (so last) statement: the write's
  // stop is the end of a Slow cycle.
  const json info = client_.request("dataBreakpointInfo", json{{"name", "Watch.ticks"}, {"frameId", 1}});
  ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
  client_.request("setDataBreakpoints", json{{"breakpoints", json::array({{{"dataId", info["body"]["dataId"]}}})}});
  const json stopped = move("reverseContinue");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  const int64_t thread = stopped["body"]["threadId"];
  EXPECT_EQ(thread, 2);  // the Slow task
  const json trace2 = client_.request("stackTrace", json{{"threadId", thread}});
  ASSERT_EQ(trace2["body"]["stackFrames"].size(), 1u) << trace2.dump();
  const json& top = trace2["body"]["stackFrames"][0];
  EXPECT_EQ(top["line"], kLineTicks + 1);  // END_PROGRAM
  EXPECT_EQ(top["source"]["path"], project_.path("main.st"));
  EXPECT_NE(top["name"].get<std::string>().find("end of cycle"), std::string::npos) << top.dump();
  EXPECT_EQ(trace2["body"]["totalFrames"], 1);
  // Its scopes and values work as any frame's.
  const json scopes = client_.request("scopes", json{{"frameId", 1}});
  ASSERT_TRUE(scopes["success"]) << scopes.dump();
  const json value = client_.request("evaluate", json{{"expression", "ticks"}, {"frameId", 1}});
  ASSERT_TRUE(value["success"]) << value.dump();
  EXPECT_EQ(value["body"]["result"], evaluate("Watch.ticks"));
  // A seek to a cycle's end: the same.
  const uint64_t cycle = timeline()["cycle"];
  std::string error;
  auto replayer = replay::Replayer::open(trace, {}, error);
  ASSERT_TRUE(replayer) << error;
  const uint64_t fastCycle = cycle + 1;  // Fast runs in every cycle but the Slow ones
  const uint64_t end = replayer->steps(fastCycle, error)->count();
  client_.send("scanback/seek", json{{"cycle", fastCycle}, {"step", end}});
  const json sought = client_.event("stopped");
  EXPECT_EQ(sought["body"]["reason"], "goto");
  const json mainTrace = client_.request("stackTrace", json{{"threadId", sought["body"]["threadId"]}});
  ASSERT_EQ(mainTrace["body"]["stackFrames"].size(), 1u) << mainTrace.dump();
  EXPECT_EQ(mainTrace["body"]["stackFrames"][0]["line"], kLineTotal + 2);  // after the IF line: END_PROGRAM
}

TEST_F(DapReplay, AProgramFramesVariablesAreListedOnceInItsInstanceFirstAndNoEmptyLocals) {
  const std::string trace = recordMain(30);
  startReplay(trace, json{{"startAt", 10}});
  const json scopes = client_.request("scopes", json{{"frameId", 1}})["body"]["scopes"];
  ASSERT_GE(scopes.size(), 2u);
  ASSERT_EQ(topFrame()["name"], "Main (MainProg)");
  // The instance first (the scope VS Code expands); MainProg has no VAR_TEMP and no inputs, so no
  // Locals.
  EXPECT_EQ(scopes[0]["name"], "Instance");
  EXPECT_EQ(scopes[1]["name"], "Globals");
  auto names = [&](const json& scope) {
    std::set<std::string> out;
    const json r = client_.request("variables", json{{"variablesReference", scope["variablesReference"]}});
    EXPECT_TRUE(r["success"]) << r.dump();
    for (const json& v : r["body"]["variables"]) out.insert(v["name"].get<std::string>());
    return out;
  };
  EXPECT_EQ(names(scopes[0]), (std::set<std::string>{"n", "d", "c"}));
}

TEST_F(DapLiveHistory, ADebuggerWriteTakesEffectAtOnceAndReplaysAtThePausedStatement) {
  const std::string trace = project_.path("written.trace");
  startLive(json{{"cycles", 40}, {"record", "written.trace"}, {"cwd", project_.dir().string()}});
  setBreakpoints(json::array({{{"line", kLineTotal}, {"condition", "gTotal = 5"}}}));
  client_.configured();
  client_.event("stopped");
  const auto at = position();  // the paused statement: gTotal := gTotal + 1, after n := n + 1
  const std::string before = evaluate("Main.n");
  const json scopes = client_.request("scopes", json{{"frameId", 1}})["body"]["scopes"];
  ASSERT_EQ(scopes[0]["name"], "Instance") << "a PROGRAM frame: its instance first";
  const json r = client_.request(
      "setVariable", json{{"variablesReference", scopes[0]["variablesReference"]}, {"name", "n"}, {"value", "500"}});
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_EQ(r["body"]["value"], "500");
  // At once: what the response said is what every view shows, here.
  EXPECT_EQ(evaluate("Main.n"), "500");
  EXPECT_EQ(evaluate("n"), "500");
  EXPECT_TRUE(said("is written now")) << "the output says when it applies";
  // History agrees: one statement back the old value, forward again the written one.
  move("stepBack");
  EXPECT_EQ(evaluate("Main.n"), before);
  move("next");
  EXPECT_EQ(position(), at);
  EXPECT_EQ(evaluate("Main.n"), "500");
  // The cycle goes on from the written value: its last statement sees n = 500.
  setBreakpoints(json::array());
  client_.send("continue", json{{"threadId", 1}});
  client_.event("exited");
  client_.request("disconnect");

  // The trace: every digest holds (the write replays where it was made), and the value changes
  // at exactly that position.
  std::string error;
  auto replayer = replay::Replayer::open(trace, {}, error);
  ASSERT_TRUE(replayer) << error;
  EXPECT_TRUE(replayer->verify({}, error).empty()) << "the recording replays exactly";
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(replayer->verifiedCycles(), 40u);
  auto valueAt = [&](replay::Position p) {
    EXPECT_TRUE(replayer->seek(p, error)) << error;
    const std::optional<VariableLocation> v = findVariable(replayer->program(), "Main.n", error);
    return formatValue(replayer->program(), replayer->vm().image(), v->offset, v->bit, *v->type);
  };
  EXPECT_EQ(valueAt({at.first, at.second}), "500");
  EXPECT_EQ(valueAt({at.first, at.second - 1}), before);
  const std::optional<VariableLocation> n = findVariable(replayer->program(), "Main.n", error);
  const std::vector<replay::Change> changes =
      replayer->lastChanges(replay::Watch{n->offset, 2, -1}, replay::Position{at.first, at.second + 1}, 1, error);
  ASSERT_EQ(changes.size(), 1u) << error;
  EXPECT_EQ(changes[0].position, (replay::Position{at.first, at.second}));
}

}  // namespace
