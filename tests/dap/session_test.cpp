// DAP sessions over an in-memory pipe: one test (or more) per rule of the DAP issue, named after
// the rule. Every message the session sends is validated against the official schema
// (SessionClient::schemaErrors, checked after each test).
#include <gtest/gtest.h>

#include <fstream>
#include <utility>

#include "dap/handlers/handlers.h"
#include "tests/dap/session_client.h"
#include "tests/support/st_programs.h"

using namespace scanback::dap;
using namespace scanback::dap::testing;

namespace {

const std::string kSessionMain = scanback::test::twoTaskMain("    gStart AT %IX0.0 : BOOL;\n");

const char* kSessionLib = R"(FUNCTION Twice : INT
VAR_INPUT x : INT; END_VAR
Twice := x * 2;
END_FUNCTION

FUNCTION_BLOCK Counter
VAR_INPUT step : INT; END_VAR
VAR count : INT; history : ARRAY[1..1000] OF INT; END_VAR
count := count + step;
history[(count MOD 1000) + 1] := count;
IF count > 30000 THEN count := 0; END_IF
END_FUNCTION_BLOCK
)";

class DapSession : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }

  json launchArgs(bool stopOnEntry = false) {
    return json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})},
                {"stopOnEntry", stopOnEntry},
                {"realtime", false}};
  }
  json source(const std::string& file) { return json{{"path", project_.path(file)}}; }
  json setBreakpoints(const std::string& file, json breakpoints) {
    return client_.request("setBreakpoints", json{{"source", source(file)}, {"breakpoints", breakpoints}});
  }
  // main.st with `from` replaced by `to` (the file as the user edits it for a reload).
  void editMain(const std::string& from, const std::string& to) {
    std::string text = kSessionMain;
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    std::ofstream(project_.path("main.st"), std::ios::trunc) << text;
  }
  std::string evaluate(const std::string& expression) {
    const json r = client_.request("evaluate", json{{"expression", expression}, {"frameId", 1}});
    EXPECT_TRUE(r["success"]) << r.dump();
    return r["body"].value("result", std::string("?"));
  }
  json stackTrace(int64_t thread = 1) { return client_.request("stackTrace", json{{"threadId", thread}}); }
  json topFrame() { return stackTrace()["body"]["stackFrames"][0]; }

  TempProject project_{
      {{"main.st", kSessionMain}, {"lib.st", kSessionLib}, {"faulty.st", scanback::test::kFaultsInThirdCycle}}};
  SessionClient client_;
};

TEST_F(DapSession, InitializedEventComesOnlyAfterTheInitializeResponse) {
  // ... and after the launch response: breakpoints resolve against the launched program.
  const int64_t init = client_.send("initialize", json{{"adapterID", "scanback"}});
  EXPECT_TRUE(client_.noEvent("initialized", 100ms));
  const int64_t launch = client_.send("launch", launchArgs());
  client_.event("initialized");
  const int event = client_.indexOfEvent("initialized");
  EXPECT_LT(client_.indexOfResponse(init), event);
  EXPECT_LT(client_.indexOfResponse(launch), event);
}

TEST_F(DapSession, MessagesCarrySeqInTheOrderTheyAreWrittenFromEveryThread) {
  // A bounded run: an endless flood of logpoint output at full speed starved the client's
  // scanning of its log under TSan (no response seen within the timeout).
  json args = launchArgs();
  args["cycles"] = 3000;
  client_.start(args);
  // Logpoint output comes from the target's thread while the session's thread answers requests.
  setBreakpoints("main.st", json::array({{{"line", 22}, {"logMessage", "total {gTotal}"}}}));
  client_.configured();
  for (int i = 0; i < 200; ++i) client_.send("threads");
  client_.response(client_.send("threads"));
  const std::vector<json> all = client_.messages();
  ASSERT_GT(all.size(), 200u);
  for (size_t i = 1; i < all.size(); ++i) ASSERT_EQ(all[i]["seq"], all[i - 1]["seq"].get<int64_t>() + 1) << i;
}

TEST_F(DapSession, AResumeThatArrivesTheMomentAStopIsReportedIsNeverLost) {
  client_.start(launchArgs());
  setBreakpoints("main.st", json::array({{{"line", 22}}}));
  client_.configured();
  // Continue at once after each stop, many times: every continue leads to the next stop.
  for (int i = 0; i < 300; ++i) {
    client_.event("stopped");
    client_.send("continue", json{{"threadId", 1}});
  }
  client_.event("stopped");
}

TEST_F(DapSession, CapabilitiesAreBuiltFromTheRegisteredHandlers) {
  const json r = client_.request("initialize", json{{"adapterID", "scanback"}});
  ASSERT_TRUE(r["success"]);
  EXPECT_EQ(r["body"], capabilities());
  EXPECT_EQ(r["body"]["supportsConfigurationDoneRequest"], true);
  EXPECT_EQ(r["body"]["supportsHitConditionalBreakpoints"], true);
  EXPECT_EQ(r["body"]["exceptionBreakpointFilters"][0]["filter"], "faults");
  EXPECT_EQ(r["body"]["exceptionBreakpointFilters"][0]["default"], true);
}

// The Forced Values view asks scanback/forced at every stop and session change, so its failure (here:
// no program yet; in VS Code: a replay set moving by a Continue right after the stop) is no popup.
TEST_F(DapSession, TheForcedValuesViewsRequestFailsWithoutAPopup) {
  client_.request("initialize", json{{"adapterID", "scanback"}});
  const json r = client_.request("scanback/forced");
  ASSERT_FALSE(r["success"]);
  EXPECT_FALSE(r["body"]["error"]["showUser"]);
  // What the user asks of it is shown.
  const json release = client_.request("scanback/release");
  ASSERT_FALSE(release["success"]);
  EXPECT_TRUE(release["body"]["error"]["showUser"]);
}

TEST_F(DapSession, UnknownCommandGetsAnErrorResponseAndTheSessionGoesOn) {
  client_.request("initialize", json{{"adapterID", "scanback"}});
  const json r = client_.request("frobnicate");
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r["message"].get<std::string>().find("unknown request 'frobnicate'"), std::string::npos);
  EXPECT_TRUE(client_.request("threads")["success"]);
}

TEST_F(DapSession, BadArgumentsGetAnErrorResponseNamingTheProblem) {
  client_.start(launchArgs());
  // Requests the schema rejects, sent on purpose.
  const json r = client_.response(client_.send("setBreakpoints", json{{"source", "not an object"}}, false));
  EXPECT_FALSE(r["success"]);
  const json s = client_.response(client_.send("stackTrace", json{{"threadId", "one"}}, false));
  EXPECT_FALSE(s["success"]);
  EXPECT_NE(s["message"].get<std::string>().find("stackTrace"), std::string::npos);
  EXPECT_TRUE(client_.request("threads")["success"]);
}

// VS Code pops up every error whose showUser is true. Requests the client sends by itself to fill
// its views (and that race with a resume) must not; an action the user asked for must.
TEST_F(DapSession, OnlyErrorsOfWhatTheUserAskedForAreShownToTheUser) {
  client_.start(launchArgs());
  const json view = client_.request("scopes", json{{"frameId", 999999}});
  ASSERT_FALSE(view["success"]);
  EXPECT_FALSE(view["body"]["error"]["showUser"]);
  // The extension's requests for the editor's marks and inline values at every stop, too.
  for (const char* command : {"scanback/flow", "scanback/values"}) {
    const json marks = client_.request(command, json{{"frameId", 999999}, {"expressions", json::array()}});
    ASSERT_FALSE(marks["success"]) << command;
    EXPECT_FALSE(marks["body"]["error"]["showUser"]) << command;
  }
  const json action = client_.request("stepBack", json{{"threadId", 999999}});
  ASSERT_FALSE(action["success"]);
  EXPECT_TRUE(action["body"]["error"]["showUser"]);
  EXPECT_EQ(action["body"]["error"]["format"], action["message"]);
}

// Arguments that are not an object are refused for every request, initialize included (it once
// took `[1,2]` or `"x"` as "no arguments").
TEST_F(DapSession, ArgumentsThatAreNoObjectAreRefused) {
  for (const json& bad : {json::array({1, 2}), json("x"), json(7), json(true)}) {
    const json r = client_.response(client_.send("initialize", bad, false));
    EXPECT_FALSE(r["success"]) << bad.dump();
    EXPECT_EQ(r["message"], "invalid arguments for 'initialize': the arguments must be an object, not " +
                                (bad.is_array() ? std::string("an array") : bad.dump()));
  }
  // Still not initialized: a proper initialize works.
  EXPECT_TRUE(client_.request("initialize", json{{"adapterID", "scanback"}})["success"]);
  const json r = client_.response(client_.send("threads", json::array(), false));
  EXPECT_FALSE(r["success"]);
}

// Integer arguments take whole numbers only: 1.5 was silently taken as 1. A value of the wrong type
// is named with what it must be, in the request's terms, never with a JSON library's message.
TEST_F(DapSession, IntegerArgumentsRefuseFractionsAndWrongTypesAreNamed) {
  client_.start(launchArgs(/*stopOnEntry=*/true));
  client_.configured();
  client_.event("stopped");
  const json frames = client_.request("stackTrace", json{{"threadId", 1}});
  ASSERT_TRUE(frames["success"]) << frames.dump();
  // 1.0 is the integer 1 (JSON has one number type).
  EXPECT_TRUE(client_.response(client_.send("scopes", json{{"frameId", 1.0}}, false))["success"]);
  const struct {
    const char* command;
    json arguments;
    std::string message;
  } cases[] = {
      {"scopes", json{{"frameId", 1.5}}, "invalid arguments for 'scopes': 'frameId' must be an integer, not 1.5"},
      {"stackTrace", json{{"threadId", 1.5}},
       "invalid arguments for 'stackTrace': 'threadId' must be an integer, not 1.5"},
      {"stackTrace", json{{"threadId", 1}, {"levels", 0.25}},
       "invalid arguments for 'stackTrace': 'levels' must be an integer, not 0.25"},
      {"next", json{{"threadId", "one"}}, "invalid arguments for 'next': 'threadId' must be an integer, not \"one\""},
      {"variables", json{{"variablesReference", 1e300}},
       "invalid arguments for 'variables': 'variablesReference' must be an integer, not 1e+300"},
      {"variables", json{{"variablesReference", 18446744073709551615ull}},
       "invalid arguments for 'variables': 'variablesReference' is out of range: 18446744073709551615"},
      {"evaluate", json{{"expression", 42}}, "invalid arguments for 'evaluate': 'expression' must be a string, not 42"},
      {"evaluate", json{{"expression", "1"}, {"frameId", -0.5}},
       "invalid arguments for 'evaluate': 'frameId' must be an integer, not -0.5"},
      {"setBreakpoints", json{{"source", json{{"path", "x.st"}}}, {"breakpoints", json::array({json{{"line", 2.5}}})}},
       "invalid arguments for 'setBreakpoints': 'breakpoints[0].line' must be an integer, not 2.5"},
      {"setBreakpoints", json{{"source", json{{"path", "x.st"}}}, {"breakpoints", json::array({7})}},
       "invalid arguments for 'setBreakpoints': 'breakpoints[0]' must be an object, not 7"},
      {"setBreakpoints", json{{"source", json{{"path", "x.st"}}}, {"lines", json::array({1, 2.5})}},
       "invalid arguments for 'setBreakpoints': 'lines[1]' must be an integer, not 2.5"},
      {"setDataBreakpoints", json{{"breakpoints", json::array({json{{"dataId", 3}}})}},
       "invalid arguments for 'setDataBreakpoints': 'breakpoints[0].dataId' must be a string, not 3"},
      {"setExceptionBreakpoints", json{{"filters", "faults"}},
       "invalid arguments for 'setExceptionBreakpoints': 'filters' must be an array, not \"faults\""},
      {"source", json{{"source", "x"}}, "'source' must be a Source object, not \"x\""},
      {"scanback/seek", json{{"cycle", 2.5}},
       "invalid arguments for 'scanback/seek': 'cycle' must be an integer, not 2.5"},
  };
  for (const auto& c : cases) {
    const json r = client_.response(client_.send(c.command, c.arguments, false));
    EXPECT_FALSE(r["success"]) << c.command << " " << c.arguments.dump();
    EXPECT_EQ(r["message"], c.message) << c.command << " " << c.arguments.dump();
  }
  for (const json& m : client_.messages()) EXPECT_EQ(m.dump().find("json.exception"), std::string::npos) << m.dump();
  EXPECT_TRUE(client_.request("threads")["success"]);
}

TEST_F(DapSession, MalformedFramingIsRejectedAndTheSessionGoesOn) {
  client_.request("initialize", json{{"adapterID", "scanback"}});
  client_.sendRaw("Content-Length: 12\r\n\r\nnot json!!!!");
  client_.sendRaw("Content-Type: nothing\r\n\r\n");
  client_.sendRaw("Content-Length: 99999999999999999999\r\n\r\n");
  const json r = client_.request("threads");
  EXPECT_TRUE(r["success"]);
}

TEST_F(DapSession, ACompileErrorFailsLaunchWithTheDiagnosticsInTheMessageAndAsOutput) {
  TempProject broken{{{"bad.st", "PROGRAM P\nVAR x : INT; END_VAR\nx := y + 1;\nEND_PROGRAM\n"}}};
  client_.request("initialize", json{{"adapterID", "scanback"}});
  const json r = client_.request("launch", json{{"program", broken.path("bad.st")}});
  EXPECT_FALSE(r["success"]);
  const std::string message = r["message"];
  EXPECT_NE(message.find("bad.st:3:6"), std::string::npos) << message;
  const json output = client_.event("output");
  EXPECT_NE(output["body"]["output"].get<std::string>().find("bad.st:3:6"), std::string::npos);
}

// Every error also as data in the error response's body, for a client to list where its user
// looks for errors (VS Code's Problems): errors of two files, with their ranges.
TEST_F(DapSession, ACompileErrorsDiagnosticsComeAsDataWithTheirFilesAndRanges) {
  TempProject broken{{{"a.st", "PROGRAM P\nVAR x : INT; END_VAR\nx := y + 1;\nEND_PROGRAM\n"},
                      {"b.st", "FUNCTION F : INT\nF := q;\nEND_FUNCTION\n"}}};
  client_.request("initialize", json{{"adapterID", "scanback"}});
  const json r = client_.request("launch", json{{"program", json::array({broken.path("a.st"), broken.path("b.st")})}});
  EXPECT_FALSE(r["success"]);
  EXPECT_EQ(r["body"]["error"]["format"], r["message"]);
  json diagnostics = r["body"]["diagnostics"];
  ASSERT_EQ(diagnostics.size(), 2u) << r.dump();
  // (In the compiler's order; here by file.)
  if (diagnostics[0]["path"] != broken.path("a.st")) std::swap(diagnostics[0], diagnostics[1]);
  EXPECT_EQ(diagnostics[0]["path"], broken.path("a.st"));
  EXPECT_EQ(diagnostics[0]["line"], 3);
  EXPECT_EQ(diagnostics[0]["column"], 6);
  EXPECT_EQ(diagnostics[0]["endLine"], 3);
  EXPECT_GT(diagnostics[0]["endColumn"].get<int>(), 6);
  EXPECT_EQ(diagnostics[0]["severity"], "error");
  EXPECT_NE(diagnostics[0]["message"].get<std::string>().find("y"), std::string::npos) << diagnostics[0].dump();
  EXPECT_EQ(diagnostics[1]["path"], broken.path("b.st"));
  EXPECT_EQ(diagnostics[1]["line"], 2);
  EXPECT_EQ(client_.schemaErrors(), "");
}

TEST_F(DapSession, EachTaskIsAThreadNamedAfterItWithAStableId) {
  client_.start(launchArgs());
  const json r = client_.request("threads");
  ASSERT_EQ(r["body"]["threads"].size(), 2u);
  EXPECT_EQ(r["body"]["threads"][0], (json{{"id", 1}, {"name", "Fast"}}));
  EXPECT_EQ(r["body"]["threads"][1], (json{{"id", 2}, {"name", "Slow"}}));
  EXPECT_EQ(client_.request("threads")["body"], r["body"]);
}

TEST_F(DapSession, AProgramWithoutConfigurationHasOneThreadForItsImplicitTask) {
  client_.start(json{{"program", project_.path("faulty.st")}, {"realtime", false}});
  const json r = client_.request("threads");
  ASSERT_EQ(r["body"]["threads"].size(), 1u);
  EXPECT_EQ(r["body"]["threads"][0]["id"], 1);
  EXPECT_FALSE(r["body"]["threads"][0]["name"].get<std::string>().empty());
}

TEST_F(DapSession, StopOnEntryStopsWithReasonEntryAtTheFirstStatement) {
  client_.start(launchArgs(true));
  client_.configured();
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "entry");
  EXPECT_EQ(stopped["body"]["threadId"], 1);
  const json frame = topFrame();
  EXPECT_EQ(frame["line"], 20);
  EXPECT_EQ(frame["column"], 1);
  EXPECT_EQ(frame["source"]["path"], project_.path("main.st"));
}

TEST_F(DapSession, BreakpointsSetBeforeConfigurationDoneApplyFromTheFirstStatement) {
  client_.start(launchArgs());
  const json r = setBreakpoints("main.st", json::array({{{"line", 20}}}));
  ASSERT_TRUE(r["body"]["breakpoints"][0]["verified"]);
  client_.configured();
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "breakpoint");
  EXPECT_EQ(stopped["body"]["hitBreakpointIds"][0], r["body"]["breakpoints"][0]["id"]);
  // The very first cycle: n was 0 before this statement.
  const json n = client_.request("evaluate", json{{"expression", "n"}, {"frameId", topFrame()["id"]}});
  EXPECT_EQ(n["body"]["result"], "0");
}

TEST_F(DapSession, ABreakpointResolvesToTheFirstStatementAtOrAfterTheRequestedPosition) {
  client_.start(launchArgs());
  // Line 15 is a declaration: the first statement after it is line 20. Line 23 with no column
  // snaps to its first non-blank column (3); column 1 is before it and snaps too; a column inside
  // the IF statement goes on to the next statement start after it (the nested `n := 0` at 20).
  const json r = setBreakpoints(
      "main.st",
      json::array({{{"line", 15}}, {{"line", 23}}, {{"line", 23}, {"column", 1}}, {{"line", 23}, {"column", 5}}}));
  const json& b = r["body"]["breakpoints"];
  EXPECT_EQ(b[0]["line"], 20);
  EXPECT_EQ(b[0]["column"], 1);
  EXPECT_EQ(b[1]["line"], 23);
  EXPECT_EQ(b[1]["column"], 3);
  EXPECT_EQ(b[2]["column"], 3);
  EXPECT_EQ(b[3]["line"], 23);
  EXPECT_EQ(b[3]["column"], 20);
  for (const json& x : b) EXPECT_TRUE(x["verified"]);
}

TEST_F(DapSession, ALinePastTheLastStatementIsUnverifiedWithAMessage) {
  client_.start(launchArgs());
  const json r = setBreakpoints("main.st", json::array({{{"line", 29}}, {{"line", 500}}}));
  for (const json& b : r["body"]["breakpoints"]) {
    EXPECT_FALSE(b["verified"]);
    EXPECT_FALSE(b["message"].get<std::string>().empty());
  }
}

TEST_F(DapSession, BreakpointLocationsAreTheStatementStartsInTheRange) {
  client_.start(launchArgs());
  const json r =
      client_.request("breakpointLocations", json{{"source", source("main.st")}, {"line", 20}, {"endLine", 23}});
  std::vector<std::pair<int, int>> got;
  for (const json& l : r["body"]["breakpoints"]) got.push_back({l["line"], l["column"]});
  const std::vector<std::pair<int, int>> expected{{20, 1}, {21, 1}, {22, 1}, {23, 3}, {23, 20}};
  EXPECT_EQ(got, expected);
}

TEST_F(DapSession, LinesAndColumnsHonourLinesStartAt1AndColumnsStartAt1) {
  client_.start(launchArgs(true), json{{"linesStartAt1", false}, {"columnsStartAt1", false}});
  const json r = setBreakpoints("main.st", json::array({{{"line", 19}}}));  // 0-based 19 = line 20
  EXPECT_EQ(r["body"]["breakpoints"][0]["line"], 19);
  EXPECT_EQ(r["body"]["breakpoints"][0]["column"], 0);
  client_.configured();
  client_.event("stopped");
  EXPECT_EQ(topFrame()["line"], 19);
  EXPECT_EQ(topFrame()["column"], 0);
}

// Found by fuzz_dap_requests: with 0-based lines, the largest line number overflowed when it was
// converted (tests/fuzz/regressions/dap_requests/line-int64-max-zero-based).
TEST_F(DapSession, TheLargestLineAndColumnConvertWithoutOverflow) {
  client_.start(launchArgs(true), json{{"linesStartAt1", false}, {"columnsStartAt1", false}});
  // Beyond the schema's largest integer (2^53 - 1): sent without the schema check.
  const json r = client_.response(
      client_.send("setBreakpoints",
                   json{{"source", source("main.st")},
                        {"breakpoints", json::array({{{"line", INT64_MAX}, {"column", INT64_MAX}}, {{"line", 19}}})}},
                   false));
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_EQ(r["body"]["breakpoints"][0]["verified"], false);
  EXPECT_EQ(r["body"]["breakpoints"][1]["line"], 19);
  const json locations = client_.response(client_.send(
      "breakpointLocations",
      json{{"source", source("main.st")}, {"line", INT64_MAX}, {"endLine", INT64_MAX}, {"column", INT64_MAX}}, false));
  ASSERT_TRUE(locations["success"]) << locations.dump();
  EXPECT_TRUE(locations["body"]["breakpoints"].empty());
}

TEST_F(DapSession, ABreakpointOnAStatementThatRunsEveryCycleStopsEveryCycleUntilCleared) {
  client_.start(launchArgs());
  setBreakpoints("main.st", json::array({{{"line", 22}}}));
  client_.configured();
  int64_t previous = -1;
  for (int i = 0; i < 3; ++i) {
    const json stopped = client_.event("stopped");
    EXPECT_EQ(stopped["body"]["reason"], "breakpoint");
    const json total = client_.request("evaluate", json{{"expression", "gTotal"}, {"frameId", 1}});
    const int64_t value = std::stoll(total["body"]["result"].get<std::string>());
    EXPECT_EQ(value, previous + 1);
    previous = value;
    client_.request("continue", json{{"threadId", 1}});
  }
  client_.event("stopped");
  // Cleared: an empty list clears them in the adapter and the runtime at once; continue runs on.
  const json cleared = setBreakpoints("main.st", json::array());
  EXPECT_TRUE(cleared["body"]["breakpoints"].empty());
  client_.request("continue", json{{"threadId", 1}});
  EXPECT_TRUE(client_.noEvent("stopped", 300ms));
}

TEST_F(DapSession, ClearingBreakpointsWhileRunningMeansNoBreakpointStopAfterTheResponse) {
  client_.start(launchArgs());
  client_.configured();
  auto stops = [&] {
    std::vector<int> at;
    const std::vector<json> all = client_.messages();
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i]["type"] == "event" && all[i]["event"] == "stopped") at.push_back(static_cast<int>(i));
    return at;
  };
  // A logpoint in the other file shows the task running on: every 50th call of Twice prints.
  setBreakpoints("lib.st", json::array({{{"line", 3}, {"logMessage", "tick"}, {"hitCondition", "%50"}}}));
  // Waits until the task has printed two ticks after message `from`: at least 50 more cycles ran.
  auto ranOn = [&](size_t from) {
    int ticks = 0;
    return !client_
                .awaitMessage(
                    [&](const json& m) {
                      return m.value("event", "") == "output" && m["body"]["output"] == "tick\n" && ++ticks == 2;
                    },
                    from)
                .is_null();
  };
  for (int i = 0; i < 20; ++i) {
    const size_t before = stops().size();
    setBreakpoints("main.st", json::array({{{"line", 22}}}));
    const json cleared = setBreakpoints("main.st", json::array());
    const int after = client_.indexOfResponse(cleared["request_seq"]);
    // (Everything sent before the response has arrived with it: a stop before it is seen now.)
    if (stops().size() > before) client_.request("continue", json{{"threadId", 1}});
    ASSERT_TRUE(ranOn(client_.messages().size()));
    // A stop for the breakpoint may come before the clearing response, never after it.
    const std::vector<int> now = stops();
    for (size_t k = before; k < now.size(); ++k) EXPECT_LT(now[k], after);
  }
  const size_t total = stops().size();
  ASSERT_TRUE(ranOn(client_.messages().size()));
  EXPECT_EQ(stops().size(), total);
}

TEST_F(DapSession, PauseWhileRunningRespondsFirstThenStopsWithReasonPause) {
  client_.start(launchArgs());
  client_.configured();
  const int64_t seq = client_.send("pause", json{{"threadId", 2}});
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "pause");
  EXPECT_EQ(stopped["body"]["threadId"], 2);
  EXPECT_LT(client_.indexOfResponse(seq), client_.indexOfEvent("stopped"));
  // The stop is in a cycle of the Slow task: thread 1 is between cycles, without frames.
  EXPECT_EQ(stackTrace(1)["body"]["totalFrames"], 0);
  EXPECT_EQ(stackTrace(2)["body"]["stackFrames"][0]["line"], 28);
}

TEST_F(DapSession, RealtimePacingRestartsFromTheMomentOfResumingWithoutABurstOfMissedCycles) {
  json args = launchArgs(true);
  args["realtime"] = true;  // Fast runs every 10 ms of wall time
  client_.start(args);
  client_.configured();
  client_.event("stopped");
  EXPECT_TRUE(client_.noEvent("stopped", 400ms));  // 40 cycles' worth of time spent paused
  client_.request("continue", json{{"threadId", 1}});
  EXPECT_TRUE(client_.noEvent("stopped", 100ms));  // running on, paced
  client_.request("pause", json{{"threadId", 1}});
  client_.event("stopped");
  const json total = client_.request("evaluate", json{{"expression", "gTotal"}, {"frameId", 1}});
  const int64_t cycles = std::stoll(total["body"]["result"].get<std::string>());
  // About 10 Fast cycles in 100 ms (fewer on a busy machine); catching up on the 40 missed while
  // paused would give 50.
  EXPECT_GE(cycles, 1);
  EXPECT_LT(cycles, 30);
}

TEST_F(DapSession, PauseWhilePausedSucceedsWithoutAnEvent) {
  client_.start(launchArgs(true));
  client_.configured();
  client_.event("stopped");
  EXPECT_TRUE(client_.request("pause", json{{"threadId", 1}})["success"]);
  EXPECT_TRUE(client_.noEvent("stopped", 200ms));
}

TEST_F(DapSession, StepInEntersACalledFunctionBlockAtItsFirstStatement) {
  client_.start(launchArgs());
  setBreakpoints("main.st", json::array({{{"line", 21}}}));
  client_.configured();
  client_.event("stopped");
  // Line 21 calls Twice (argument) and then Counter: step in enters Twice first.
  const size_t before = client_.messages().size();
  const int64_t seq = client_.send("stepIn", json{{"threadId", 1}});
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "step");
  // The response comes before the stopped event.
  EXPECT_LT(client_.indexOfResponse(seq), client_.indexOfEvent("stopped", before));
  json frame = topFrame();
  EXPECT_EQ(frame["source"]["path"], project_.path("lib.st"));
  EXPECT_EQ(frame["line"], 3);
  const json trace = stackTrace();
  ASSERT_EQ(trace["body"]["totalFrames"], 2);
  // The caller keeps its own file and line.
  EXPECT_EQ(trace["body"]["stackFrames"][1]["source"]["path"], project_.path("main.st"));
  EXPECT_EQ(trace["body"]["stackFrames"][1]["line"], 21);
  client_.request("stepIn", json{{"threadId", 1}});
  client_.event("stopped");
  frame = topFrame();
  EXPECT_EQ(frame["line"], 9);  // Counter's first statement
  EXPECT_EQ(frame["name"], "Main.c (Counter)");
}

TEST_F(DapSession, NextStaysInTheFrameAndStepOutReturnsToTheCaller) {
  client_.start(launchArgs());
  setBreakpoints("main.st", json::array({{{"line", 21}}}));
  client_.configured();
  client_.event("stopped");
  client_.request("next", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "step");
  EXPECT_EQ(topFrame()["line"], 22);
  setBreakpoints("main.st", json::array());
  setBreakpoints("lib.st", json::array({{{"line", 9}}}));
  client_.request("continue", json{{"threadId", 1}});
  client_.event("stopped");
  EXPECT_EQ(topFrame()["line"], 9);
  setBreakpoints("lib.st", json::array());
  client_.request("stepOut", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "step");
  EXPECT_EQ(topFrame()["line"], 22);
  EXPECT_EQ(stackTrace()["body"]["totalFrames"], 1);
}

TEST_F(DapSession, StackTraceHonoursStartFrameAndLevels) {
  client_.start(launchArgs());
  setBreakpoints("lib.st", json::array({{{"line", 3}}}));
  client_.configured();
  client_.event("stopped");
  const json all = stackTrace();
  EXPECT_EQ(all["body"]["totalFrames"], 2);
  const json second = client_.request("stackTrace", json{{"threadId", 1}, {"startFrame", 1}, {"levels", 1}});
  ASSERT_EQ(second["body"]["stackFrames"].size(), 1u);
  EXPECT_EQ(second["body"]["stackFrames"][0], all["body"]["stackFrames"][1]);
  EXPECT_EQ(second["body"]["totalFrames"], 2);
}

TEST_F(DapSession, ScopesAndVariablesShowLocalsInstanceGlobalsAndIo) {
  client_.start(launchArgs());
  setBreakpoints("lib.st", json::array({{{"line", 10}}}));
  client_.configured();
  client_.event("stopped");
  const json scopes = client_.request("scopes", json{{"frameId", 1}});
  std::vector<std::string> names;
  for (const json& s : scopes["body"]["scopes"]) names.push_back(s["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Locals", "Instance", "Globals", "Retain", "I/O"}));
  // Each variable in one scope: the FB's input in Locals, the rest of its instance in Instance.
  const json locals =
      client_.request("variables", json{{"variablesReference", scopes["body"]["scopes"][0]["variablesReference"]}});
  std::vector<std::string> localNames;
  for (const json& v : locals["body"]["variables"]) localNames.push_back(v["name"]);
  EXPECT_EQ(localNames, std::vector<std::string>{"step"});
  const json instance =
      client_.request("variables", json{{"variablesReference", scopes["body"]["scopes"][1]["variablesReference"]}});
  std::map<std::string, json> byName;
  for (const json& v : instance["body"]["variables"]) byName[v["name"]] = v;
  EXPECT_EQ(byName.count("step"), 0u);
  ASSERT_TRUE(byName.count("count"));
  EXPECT_EQ(byName["count"]["value"], "2");  // first cycle: step = Twice(1)
  ASSERT_TRUE(byName.count("history"));
  EXPECT_EQ(byName["history"]["indexedVariables"], 1000);
  // A large array pages.
  // Arrays have indexed children only.
  EXPECT_TRUE(client_
                  .request("variables", json{{"variablesReference", byName["history"]["variablesReference"]},
                                             {"filter", "named"}})["body"]["variables"]
                  .empty());
  const json page = client_.request(
      "variables", json{{"variablesReference", byName["history"]["variablesReference"]}, {"start", 10}, {"count", 5}});
  ASSERT_EQ(page["body"]["variables"].size(), 5u);
  EXPECT_EQ(page["body"]["variables"][0]["name"], "[11]");
  const json io =
      client_.request("variables", json{{"variablesReference", scopes["body"]["scopes"][4]["variablesReference"]}});
  ASSERT_EQ(io["body"]["variables"].size(), 1u);
  EXPECT_EQ(io["body"]["variables"][0]["name"], "gStart");
  EXPECT_EQ(io["body"]["variables"][0]["type"], "BOOL AT %IX0.0");
}

TEST_F(DapSession, VariableReferencesResetWhenExecutionResumes) {
  client_.start(launchArgs());
  setBreakpoints("main.st", json::array({{{"line", 22}}}));
  client_.configured();
  client_.event("stopped");
  const json scopes = client_.request("scopes", json{{"frameId", 1}});
  const int64_t ref = scopes["body"]["scopes"][0]["variablesReference"];
  client_.request("continue", json{{"threadId", 1}});
  client_.event("stopped");
  const json stale = client_.request("variables", json{{"variablesReference", ref}});
  EXPECT_FALSE(stale["success"]);
}

TEST_F(DapSession, AFaultStopsWithReasonExceptionAndExceptionInfoDescribesIt) {
  client_.start(json{{"program", project_.path("faulty.st")}, {"realtime", false}});
  client_.configured();
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "exception");
  EXPECT_EQ(topFrame()["line"], 4);
  const json info = client_.request("exceptionInfo", json{{"threadId", 1}});
  ASSERT_TRUE(info["success"]);
  EXPECT_NE(info["body"]["description"].get<std::string>().find("faulty.st:4"), std::string::npos);
  // Continuing past the fault: exited (with an exit code), then terminated, in that order.
  client_.request("continue", json{{"threadId", 1}});
  const json exited = client_.event("exited");
  EXPECT_EQ(exited["body"]["exitCode"], 3);
  client_.event("terminated");
  EXPECT_LT(client_.indexOfEvent("exited"), client_.indexOfEvent("terminated"));
}

TEST_F(DapSession, WithTheFaultFilterOffAFaultEndsTheProgramWithoutStopping) {
  client_.start(json{{"program", project_.path("faulty.st")}, {"realtime", false}});
  client_.request("setExceptionBreakpoints", json{{"filters", json::array()}});
  client_.configured();
  EXPECT_EQ(client_.event("exited")["body"]["exitCode"], 3);
  client_.event("terminated");
  EXPECT_EQ(client_.indexOfEvent("stopped"), -1);
}

TEST_F(DapSession, TheCycleLimitEndsWithExitedThenTerminated) {
  json args = launchArgs();
  args["cycles"] = 50;
  client_.start(args);
  client_.configured();
  EXPECT_EQ(client_.event("exited")["body"]["exitCode"], 0);
  client_.event("terminated");
  EXPECT_LT(client_.indexOfEvent("exited"), client_.indexOfEvent("terminated"));
}

TEST_F(DapSession, DisconnectEndsTheLaunchedProgramAndSendsTerminated) {
  client_.start(launchArgs());
  client_.configured();
  const json r = client_.request("disconnect", json{{"terminateDebuggee", true}});
  EXPECT_TRUE(r["success"]);
  client_.event("terminated");
  // The response first, as for every event a request causes; nothing from the program after it.
  const int response = client_.indexOfResponse(r["request_seq"]);
  EXPECT_EQ(client_.indexOfEvent("terminated"), response + 1);
  EXPECT_EQ(static_cast<int>(client_.messages().size()), response + 2);
}

TEST_F(DapSession, TerminateEndsTheProgramAndSendsTerminated) {
  client_.start(launchArgs());
  client_.configured();
  EXPECT_TRUE(client_.request("terminate")["success"]);
  client_.event("terminated");
}

TEST_F(DapSession, SetVariableWritesAtOnceAndTheCycleGoesOnFromTheNewValue) {
  client_.start(launchArgs());
  setBreakpoints("main.st", json::array({{{"line", 22}}}));
  client_.configured();
  client_.event("stopped");
  const json scopes = client_.request("scopes", json{{"frameId", 1}});
  // A PROGRAM frame: its Instance (the program's own variables) first.
  ASSERT_EQ(scopes["body"]["scopes"][0]["name"], "Instance") << scopes.dump();
  const int64_t locals = scopes["body"]["scopes"][0]["variablesReference"];
  const json bad =
      client_.request("setVariable", json{{"variablesReference", locals}, {"name", "n"}, {"value", "'text'"}});
  EXPECT_FALSE(bad["success"]);
  const json r = client_.request("setVariable", json{{"variablesReference", locals}, {"name", "n"}, {"value", "500"}});
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_EQ(r["body"]["value"], "500");
  EXPECT_EQ(client_.request("evaluate", json{{"expression", "n"}, {"frameId", 1}})["body"]["result"], "500")
      << "written at once, at the paused statement";
  client_.request("continue", json{{"threadId", 1}});
  client_.event("stopped");
  // The next cycle's first statement added one.
  EXPECT_EQ(client_.request("evaluate", json{{"expression", "n"}, {"frameId", 1}})["body"]["result"], "501");
}

TEST_F(DapSession, ADataBreakpointStopsAfterTheStatementThatWroteTheVariable) {
  client_.start(launchArgs(true));
  client_.configured();
  client_.event("stopped");
  const json info = client_.request("dataBreakpointInfo", json{{"name", "gTotal"}, {"frameId", 1}});
  ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
  const json set = client_.request(
      "setDataBreakpoints",
      json{{"breakpoints", json::array({{{"dataId", info["body"]["dataId"]}, {"accessType", "write"}}})}});
  EXPECT_TRUE(set["body"]["breakpoints"][0]["verified"]);
  client_.request("continue", json{{"threadId", 1}});
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
  EXPECT_EQ(topFrame()["line"], 23);  // right after `gTotal := gTotal + 1;`
}

// ------------------------------------------------------------------ stReload (custom request)

TEST_F(DapSession, StReloadWhilePausedKeepsValuesStaysPausedAtTheSameFrameAndReportsPause) {
  client_.start(launchArgs());
  setBreakpoints("main.st", json::array({{{"line", 22}}}));
  client_.configured();
  for (int i = 0; i < 3; ++i) {
    client_.event("stopped");
    if (i < 2) client_.request("continue", json{{"threadId", 1}});
  }
  EXPECT_EQ(evaluate("gTotal"), "2");
  editMain("gTotal := gTotal + 1;", "gTotal := gTotal + 100;");
  const json r = client_.request("stReload");
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_GT(r["body"]["kept"].get<int64_t>(), 0);
  EXPECT_TRUE(r["body"]["reset"].empty()) << r.dump();
  const json stopped = client_.event("stopped");
  EXPECT_EQ(stopped["body"]["reason"], "pause");
  EXPECT_EQ(stopped["body"]["threadId"], 1);
  // The response comes before the event.
  const int response = client_.indexOfResponse(r["request_seq"]);
  EXPECT_EQ(client_.indexOfEvent("stopped", static_cast<size_t>(response)),
            static_cast<int>(client_.messages().size()) - 1);
  EXPECT_EQ(topFrame()["line"], 22);
  EXPECT_EQ(evaluate("gTotal"), "2");
  // The cycle under way finishes on the old code; the next runs the new one, values kept.
  client_.request("continue", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "breakpoint");
  EXPECT_EQ(evaluate("gTotal"), "3");
  client_.request("next", json{{"threadId", 1}});
  client_.event("stopped");
  EXPECT_EQ(evaluate("gTotal"), "103");
}

TEST_F(DapSession, StReloadWhileRunningStaysRunningAndNewVariablesStartFromTheirInitialValue) {
  client_.start(launchArgs());
  client_.configured();
  editMain("  d : INT;\n", "  d : INT;\n  added : INT := 7;\n");
  const json r =
      client_.request("stReload", json{{"program", json::array({project_.path("main.st"), project_.path("lib.st")})}});
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_EQ(r["body"]["reset"], json::array({"Main.added (new)"}));
  EXPECT_TRUE(client_.noEvent("stopped", 200ms));
  client_.request("pause", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "pause");
  EXPECT_EQ(evaluate("Main.added"), "7");
  // The program kept counting from where it was: gTotal was never reset.
  EXPECT_GT(std::stoll(evaluate("gTotal")), 0);
}

TEST_F(DapSession, StReloadRevalidatesBreakpointsKeepingIdsAndSendsABreakpointEventForEachThatChanged) {
  client_.start(launchArgs());
  const json set = setBreakpoints("main.st", json::array({{{"line", 21}}, {{"line", 22}}}));
  const int64_t unchangedId = set["body"]["breakpoints"][0]["id"];
  const int64_t movedId = set["body"]["breakpoints"][1]["id"];
  client_.configured();
  client_.event("stopped");
  // A blank line before `gTotal := ...`: the breakpoint on line 22 now resolves to line 23.
  editMain("gTotal := gTotal + 1;", "\ngTotal := gTotal + 1;");
  const json r = client_.request("stReload");
  ASSERT_TRUE(r["success"]) << r.dump();
  const json changed = client_.event("breakpoint");
  EXPECT_EQ(changed["body"]["reason"], "changed");
  EXPECT_EQ(changed["body"]["breakpoint"]["id"], movedId);
  EXPECT_EQ(changed["body"]["breakpoint"]["line"], 23);
  EXPECT_TRUE(changed["body"]["breakpoint"]["verified"]);
  EXPECT_TRUE(client_.noEvent("breakpoint", 100ms));  // the one on line 21 did not change
  client_.event("stopped");                           // the reload's pause
  // The moved breakpoint stops at its new line with its id.
  for (int i = 0; i < 4; ++i) {
    client_.request("continue", json{{"threadId", 1}});
    const json stopped = client_.event("stopped");
    ASSERT_EQ(stopped["body"]["reason"], "breakpoint");
    const int64_t id = stopped["body"]["hitBreakpointIds"][0];
    if (id == unchangedId) continue;
    EXPECT_EQ(id, movedId);
    EXPECT_EQ(topFrame()["line"], 23);
    return;
  }
  ADD_FAILURE() << "the moved breakpoint never stopped";
}

TEST_F(DapSession, StReloadRightAfterAStepNeverReplacesTheStepsStop) {
  client_.start(launchArgs(true));
  client_.configured();
  client_.event("stopped");
  // Sent back to back: the reload may come while the step runs or once it has stopped.
  client_.send("next", json{{"threadId", 1}});
  const int64_t reload = client_.send("stReload");
  ASSERT_TRUE(client_.response(reload)["success"]);
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "step");
  EXPECT_TRUE(client_.noEvent("stopped", 200ms));
  // Also when the step's stop came well before the reload.
  client_.request("next", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "step");
  ASSERT_TRUE(client_.request("stReload")["success"]);
  EXPECT_TRUE(client_.noEvent("stopped", 200ms));
}

TEST_F(DapSession, StReloadRefusesAChangedTaskTableAndACompileErrorAndTheProgramRunsOn) {
  client_.start(launchArgs(true));
  client_.configured();
  client_.event("stopped");
  editMain("INTERVAL := T#10ms", "INTERVAL := T#20ms");
  const json tasks = client_.request("stReload");
  EXPECT_FALSE(tasks["success"]);
  EXPECT_NE(tasks["message"].get<std::string>().find("the interval of task Fast changed"), std::string::npos)
      << tasks.dump();
  editMain("gTotal := gTotal + 1;", "gTotal := gTotal + ;");
  const json broken = client_.request("stReload");
  EXPECT_FALSE(broken["success"]);
  EXPECT_NE(broken["message"].get<std::string>().find("main.st:22:"), std::string::npos) << broken.dump();
  json output = client_.event("output");
  while (output["body"]["category"] == "console") output = client_.event("output");  // (the recording's notes)
  EXPECT_EQ(output["body"]["category"], "stderr");
  // The old version runs on.
  client_.request("next", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "step");
  EXPECT_EQ(evaluate("n"), "1");
}

TEST_F(DapSession, ADataBreakpointFollowsItsVariableThroughAStReloadThatMovesIt) {
  client_.start(launchArgs(true));
  client_.configured();
  client_.event("stopped");
  const json info = client_.request("dataBreakpointInfo", json{{"name", "gTotal"}, {"frameId", 1}});
  const json dataId = info["body"]["dataId"];
  client_.request("setDataBreakpoints", json{{"breakpoints", json::array({{{"dataId", dataId}}})}});
  // A new global before gTotal moves it in the image.
  editMain("    gTotal : DINT;", "    gFirst : LINT;\n    gTotal : DINT;");
  ASSERT_TRUE(client_.request("stReload")["success"]);
  client_.event("stopped");  // the reload's pause
  // The cycle under way finishes on the old code, unwatched (gTotal becomes 1); the next Fast
  // cycle runs the new version, watched at gTotal's new place.
  for (int i = 0; i < 2; ++i) {
    client_.request("continue", json{{"threadId", 1}});
    const json stopped = client_.event("stopped");
    EXPECT_EQ(stopped["body"]["reason"], "data breakpoint");
    EXPECT_EQ(topFrame()["line"], 24);  // right after `gTotal := gTotal + 1;`, one line lower now
    EXPECT_EQ(evaluate("gTotal"), std::to_string(i + 2));
  }
  // The client sends the dataId it got before the reload again: found by name in the new layout.
  const json again = client_.request("setDataBreakpoints", json{{"breakpoints", json::array({{{"dataId", dataId}}})}});
  EXPECT_TRUE(again["body"]["breakpoints"][0]["verified"]) << again.dump();
}

}  // namespace
