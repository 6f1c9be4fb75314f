// The schema validator the DAP session tests rely on: which definition each message is checked
// against, and that it accepts what the schema allows and refuses what it does not.
#include "tests/dap/schema_validator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace scanback::dap::testing {
namespace {

using json = nlohmann::json;

const DapSchema& schema() { return DapSchema::instance(); }

json response(const std::string& command, json body, bool success = true) {
  json r = {{"seq", 10}, {"type", "response"}, {"request_seq", 3}, {"success", success}, {"command", command}};
  if (!body.is_null()) r["body"] = std::move(body);
  return r;
}

json event(const std::string& name, json body) {
  json e = {{"seq", 11}, {"type", "event"}, {"event", name}};
  if (!body.is_null()) e["body"] = std::move(body);
  return e;
}

json request(const std::string& command, json arguments) {
  json r = {{"seq", 1}, {"type", "request"}, {"command", command}};
  if (!arguments.is_null()) r["arguments"] = std::move(arguments);
  return r;
}

json stackFrame(int64_t id) {
  return {{"id", id},
          {"name", "Main"},
          {"line", 12},
          {"column", 3},
          {"source", {{"name", "main.st"}, {"path", "/p/main.st"}}}};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------- names

TEST(DapSchema, CapitalisesTheFirstLetterOnly) {
  EXPECT_EQ(DapSchema::capitalised("setBreakpoints"), "SetBreakpoints");
  EXPECT_EQ(DapSchema::capitalised("configurationDone"), "ConfigurationDone");
  EXPECT_EQ(DapSchema::capitalised("stackTrace"), "StackTrace");
  EXPECT_EQ(DapSchema::capitalised("next"), "Next");
  EXPECT_EQ(DapSchema::capitalised(""), "");
}

// Every command and event the schema defines maps to definitions that exist.
TEST(DapSchema, EveryCommandAndEventHasItsDefinitions) {
  ASSERT_GE(schema().commands().size(), 40u);
  ASSERT_GE(schema().events().size(), 15u);
  for (const std::string& command : schema().commands()) {
    const std::string name = DapSchema::capitalised(command);
    EXPECT_TRUE(schema().hasDefinition(name + "Request")) << command;
    EXPECT_TRUE(schema().hasDefinition(name + "Response")) << command;
    EXPECT_EQ(schema().definitionFor(response(command, nullptr)), name + "Response");
    EXPECT_EQ(schema().definitionFor(request(command, nullptr)), name + "Request");
  }
  for (const std::string& name : schema().events()) {
    EXPECT_TRUE(schema().hasDefinition(DapSchema::capitalised(name) + "Event")) << name;
    EXPECT_EQ(schema().definitionFor(event(name, nullptr)), DapSchema::capitalised(name) + "Event");
  }
  for (const char* command : {"initialize",     "launch",     "attach",   "setBreakpoints", "configurationDone",
                              "threads",        "stackTrace", "scopes",   "variables",      "continue",
                              "next",           "stepIn",     "stepOut",  "stepBack",       "reverseContinue",
                              "pause",          "disconnect", "evaluate", "setVariable",    "runInTerminal",
                              "startDebugging", "cancel",     "goto",     "restart"})
    EXPECT_TRUE(schema().commands().count(command)) << command;
  for (const char* name : {"initialized", "stopped", "continued", "exited", "terminated", "thread", "output",
                           "breakpoint", "module", "loadedSource", "process", "capabilities", "invalidated"})
    EXPECT_TRUE(schema().events().count(name)) << name;
}

TEST(DapSchema, DefinitionChosenForEachMessage) {
  EXPECT_EQ(schema().definitionFor(response("stackTrace", nullptr)), "StackTraceResponse");
  EXPECT_EQ(schema().definitionFor(response("stackTrace", nullptr, false)), "ErrorResponse");
  EXPECT_EQ(schema().definitionFor(response("scanback/timeline", nullptr)), "Response");
  EXPECT_EQ(schema().definitionFor(response("stReload", nullptr)), "Response");
  EXPECT_EQ(schema().definitionFor(response("error", nullptr)), "Response");  // not a command: no ErrorResponse
  EXPECT_EQ(schema().definitionFor(event("stopped", nullptr)), "StoppedEvent");
  EXPECT_EQ(schema().definitionFor(event("scanback/cycle", nullptr)), "Event");
  EXPECT_EQ(schema().definitionFor(request("runInTerminal", nullptr)), "RunInTerminalRequest");
  EXPECT_EQ(schema().definitionFor(request("scanback/timeline", nullptr)), "Request");
  EXPECT_EQ(schema().definitionFor(json{{"seq", 1}, {"type", "notification"}}), "ProtocolMessage");
  EXPECT_EQ(schema().definitionFor(json::array()), "ProtocolMessage");
}

// ---------------------------------------------------------------- responses

TEST(DapSchema, ValidResponses) {
  json caps = {{"supportsConfigurationDoneRequest", true},
               {"supportsStepBack", true},
               {"supportsConditionalBreakpoints", true},
               {"exceptionBreakpointFilters", json::array()}};
  EXPECT_EQ(schema().validate(response("initialize", caps)), "");
  EXPECT_EQ(schema().validate(response("initialize", nullptr)), "");  // the body is optional
  EXPECT_EQ(schema().validate(response("configurationDone", nullptr)), "");
  EXPECT_EQ(
      schema().validate(response("stackTrace", {{"stackFrames", {stackFrame(1), stackFrame(2)}}, {"totalFrames", 2}})),
      "");
  EXPECT_EQ(schema().validate(response("threads", {{"threads", {{{"id", 1}, {"name", "MainTask"}}}}})), "");
  EXPECT_EQ(schema().validate(response("setBreakpoints", {{"breakpoints",
                                                           {{{"id", 1}, {"verified", true}, {"line", 4}},
                                                            {{"verified", false}, {"message", "no statement"}}}}})),
            "");
  EXPECT_EQ(
      schema().validate(response(
          "variables", {{"variables", {{{"name", "x"}, {"value", "5"}, {"type", "INT"}, {"variablesReference", 0}}}}})),
      "");
  EXPECT_EQ(schema().validate(response("continue", {{"allThreadsContinued", true}})), "");
  EXPECT_EQ(schema().validate(response("scanback/timeline", {{"cycles", {1, 2, 3}}})), "");  // custom: base Response
}

TEST(DapSchema, InvalidResponses) {
  // Missing a required body field.
  std::string e = schema().validate(response("stackTrace", json::object()));
  EXPECT_TRUE(contains(e, "not a valid StackTraceResponse")) << e;
  EXPECT_TRUE(contains(e, "\"/body\"")) << e;
  EXPECT_TRUE(contains(e, "stackFrames")) << e;
  // A required body missing altogether.
  e = schema().validate(response("stackTrace", nullptr));
  EXPECT_NE(e, "");
  // A wrong type deep inside, reported with its pointer.
  json frames = {stackFrame(1), stackFrame(2)};
  frames[1]["line"] = "12";
  e = schema().validate(response("stackTrace", {{"stackFrames", frames}}));
  EXPECT_TRUE(contains(e, "\"/body/stackFrames/1/line\"")) << e;
  EXPECT_FALSE(contains(e, "/stackFrames/0/")) << e;
  // A StackFrame without its required name and column.
  frames = {{{"id", 1}, {"line", 1}}};
  e = schema().validate(response("stackTrace", {{"stackFrames", frames}}));
  EXPECT_TRUE(contains(e, "\"/body/stackFrames/0\"")) << e;
  // Base fields: request_seq missing, success not a boolean, type wrong.
  json r = response("threads", {{"threads", json::array()}});
  r.erase("request_seq");
  EXPECT_TRUE(contains(schema().validate(r), "request_seq")) << schema().validate(r);
  r = response("threads", {{"threads", json::array()}});
  r["success"] = "yes";
  EXPECT_TRUE(contains(schema().validate(r), "\"/success\"")) << schema().validate(r);
  // int32 ranges (from "format": "int32").
  e = schema().validate(
      response("variables", {{"variables", {{{"name", "x"}, {"value", "5"}, {"variablesReference", 2147483648LL}}}}}));
  EXPECT_TRUE(contains(e, "\"/body/variables/0/variablesReference\"")) << e;
  EXPECT_EQ(schema().validate(response(
                "variables", {{"variables", {{{"name", "x"}, {"value", "5"}, {"variablesReference", 2147483647}}}}})),
            "");
  // An object where an integer with a "format" belongs is reported (valijson alone would throw).
  frames = {stackFrame(1)};
  frames[0]["line"] = {{"a", 1}};
  e = schema().validate(response("stackTrace", {{"stackFrames", frames}}));
  EXPECT_TRUE(contains(e, "\"/body/stackFrames/0/line\"")) << e;
  EXPECT_FALSE(contains(e, "cannot validate")) << e;
  // seq must be at least 1.
  r = response("threads", {{"threads", json::array()}});
  r["seq"] = 0;
  EXPECT_TRUE(contains(schema().validate(r), "\"/seq\"")) << schema().validate(r);
}

TEST(DapSchema, ErrorResponses) {
  // An error response needs a body (ErrorResponse makes it required), which may hold a Message.
  json r = response("stackTrace", json::object(), false);
  r["message"] = "cannot step: the program is running";
  EXPECT_EQ(schema().validate(r), "");
  r["body"] = {
      {"error", {{"id", 1001}, {"format", "cannot read {path}"}, {"variables", {{"path", "/x"}}}, {"showUser", true}}}};
  EXPECT_EQ(schema().validate(r), "");
  r["message"] = "notStopped";  // one of the suggested values; any string is fine
  EXPECT_EQ(schema().validate(r), "");
  // Without a body: invalid.
  r.erase("body");
  std::string e = schema().validate(r);
  EXPECT_TRUE(contains(e, "not a valid ErrorResponse")) << e;
  EXPECT_TRUE(contains(e, "body")) << e;
  // A Message with a wrong type.
  r["body"] = {{"error", {{"id", "1001"}, {"format", "x"}}}};
  e = schema().validate(r);
  EXPECT_TRUE(contains(e, "\"/body/error/id\"")) << e;
  // Message.variables values must be strings.
  r["body"] = {{"error", {{"id", 1}, {"format", "x"}, {"variables", {{"a", 1}}}}}};
  e = schema().validate(r);
  EXPECT_TRUE(contains(e, "\"/body/error/variables/a\"")) << e;
  // A failed custom request is an ErrorResponse too.
  EXPECT_EQ(schema().validate(response("scanback/timeline", json::object(), false)), "");
}

// ---------------------------------------------------------------- events

TEST(DapSchema, StoppedEventReasonIsAnOpenString) {
  // The schema lists the reasons as "_enum" (suggestions), not "enum": any string is valid.
  EXPECT_EQ(schema().validate(event("stopped", {{"reason", "breakpoint"}, {"threadId", 1}})), "");
  EXPECT_EQ(schema().validate(
                event("stopped", {{"reason", "data breakpoint"}, {"threadId", 1}, {"hitBreakpointIds", {3, 4}}})),
            "");
  EXPECT_EQ(
      schema().validate(event(
          "stopped", {{"reason", "end of history"}, {"threadId", 1}, {"description", "Reached the end of the trace"}})),
      "");
  // But it must be a string, and it is required.
  std::string e = schema().validate(event("stopped", {{"reason", 3}}));
  EXPECT_TRUE(contains(e, "\"/body/reason\"")) << e;
  e = schema().validate(event("stopped", {{"threadId", 1}}));
  EXPECT_TRUE(contains(e, "not a valid StoppedEvent")) << e;
  EXPECT_TRUE(contains(e, "reason")) << e;
  e = schema().validate(event("stopped", nullptr));
  EXPECT_NE(e, "");
}

TEST(DapSchema, ClosedEnumsAreEnforcedOpenOnesAreNot) {
  // Open ("_enum": suggestions): OutputEvent.category, Scope.presentationHint.
  EXPECT_EQ(schema().validate(event("output", {{"category", "console"}, {"output", "hi\n"}})), "");
  EXPECT_EQ(schema().validate(event("output", {{"category", "scanback"}, {"output", "hi\n"}})), "");
  EXPECT_EQ(schema().validate(response("scopes", {{"scopes",
                                                   {{{"name", "Globals"},
                                                     {"variablesReference", 1},
                                                     {"expensive", false},
                                                     {"presentationHint", "globals"}}}}})),
            "");
  // Closed ("enum"): ProcessEvent.startMethod, StackFrame.presentationHint, SteppingGranularity.
  EXPECT_EQ(schema().validate(event("process", {{"name", "scanback"}, {"startMethod", "launch"}})), "");
  std::string e = schema().validate(event("process", {{"name", "scanback"}, {"startMethod", "spawn"}}));
  EXPECT_TRUE(contains(e, "\"/body/startMethod\"")) << e;
  json frame = stackFrame(1);
  frame["presentationHint"] = "label";
  EXPECT_EQ(schema().validate(response("stackTrace", {{"stackFrames", {frame}}})), "");
  frame["presentationHint"] = "cycle";
  e = schema().validate(response("stackTrace", {{"stackFrames", {frame}}}));
  EXPECT_TRUE(contains(e, "\"/body/stackFrames/0/presentationHint\"")) << e;
  EXPECT_EQ(schema().validateRequest(request("next", {{"threadId", 1}, {"granularity", "statement"}})), "");
  EXPECT_NE(schema().validateRequest(request("next", {{"threadId", 1}, {"granularity", "cycle"}})), "");
  // A custom event is checked against the base Event only.
  EXPECT_EQ(schema().validate(event("scanback/cycle", {{"cycle", 12}})), "");
}

TEST(DapSchema, OtherEvents) {
  EXPECT_EQ(schema().validate(event("initialized", nullptr)), "");
  EXPECT_EQ(schema().validate(event("terminated", nullptr)), "");
  EXPECT_EQ(schema().validate(event("exited", {{"exitCode", 0}})), "");
  EXPECT_NE(schema().validate(event("exited", json::object())), "");
  EXPECT_EQ(schema().validate(event("thread", {{"reason", "started"}, {"threadId", 1}})), "");
  EXPECT_EQ(schema().validate(event("continued", {{"threadId", 1}, {"allThreadsContinued", true}})), "");
  EXPECT_EQ(
      schema().validate(event("breakpoint", {{"reason", "changed"}, {"breakpoint", {{"id", 1}, {"verified", true}}}})),
      "");
  EXPECT_NE(schema().validate(event("breakpoint", {{"reason", "changed"}, {"breakpoint", {{"id", 1}}}})), "");
  EXPECT_EQ(schema().validate(event("invalidated", {{"areas", {"variables", "stacks"}}})), "");
  // Missing the base fields.
  json e = event("initialized", nullptr);
  e.erase("seq");
  EXPECT_TRUE(contains(schema().validate(e), "seq")) << schema().validate(e);
}

// ---------------------------------------------------------------- requests

TEST(DapSchema, Requests) {
  EXPECT_EQ(schema().validateRequest(request("initialize", {{"adapterID", "scanback"}, {"linesStartAt1", true}})), "");
  EXPECT_NE(schema().validateRequest(request("initialize", json::object())), "");  // adapterID required
  EXPECT_EQ(schema().validateRequest(
                request("setBreakpoints", {{"source", {{"path", "/p/main.st"}}},
                                           {"breakpoints", {{{"line", 3}}, {{"line", 7}, {"condition", "x > 2"}}}}})),
            "");
  std::string e = schema().validateRequest(request("setBreakpoints", {{"breakpoints", {{{"line", 3}}}}}));
  EXPECT_TRUE(contains(e, "not a valid SetBreakpointsRequest")) << e;
  EXPECT_TRUE(contains(e, "source")) << e;
  EXPECT_EQ(schema().validateRequest(request("configurationDone", nullptr)), "");
  EXPECT_EQ(schema().validateRequest(request("stepBack", {{"threadId", 1}})), "");
  e = schema().validateRequest(request("stepBack", {{"threadId", "1"}}));
  EXPECT_TRUE(contains(e, "\"/arguments/threadId\"")) << e;
  EXPECT_EQ(schema().validateRequest(request("launch", {{"program", "/p/main.st"}, {"noDebug", false}})), "");
  EXPECT_EQ(schema().validateRequest(request("scanback/timeline", {{"from", 0}})), "");  // base Request
  // Not a request at all.
  e = schema().validateRequest(event("initialized", nullptr));
  EXPECT_NE(e, "");
  // validate() checks a reverse request the same way.
  EXPECT_EQ(schema().validate(request("runInTerminal", {{"cwd", "/tmp"}, {"args", {"scanback", "run"}}})), "");
  EXPECT_NE(schema().validate(request("runInTerminal", {{"cwd", "/tmp"}})), "");
}

TEST(DapSchema, NotMessagesAtAll) {
  EXPECT_NE(schema().validate(json::array()), "");
  EXPECT_NE(schema().validate(json("hello")), "");
  std::string e = schema().validate(json{{"seq", 1}, {"type", "notification"}});
  EXPECT_TRUE(contains(e, "\"/type\"")) << e;
  e = schema().validate(json::object());
  EXPECT_TRUE(contains(e, "seq")) << e;
}

TEST(DapSchema, ValidateAgainstAnyDefinition) {
  EXPECT_EQ(schema().validateAgainst(stackFrame(1), "StackFrame"), "");
  EXPECT_NE(schema().validateAgainst(json::object(), "StackFrame"), "");
  EXPECT_TRUE(contains(schema().validateAgainst(json::object(), "NoSuchThing"), "no definition 'NoSuchThing'"));
}

TEST(DapSchema, UsableFromSeveralThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const json frames = {stackFrame(i), stackFrame(t)};
        if (!schema().validate(response("stackTrace", {{"stackFrames", frames}})).empty()) ++failures;
        if (!schema().validate(event("stopped", {{"reason", "step"}, {"threadId", t + 1}})).empty()) ++failures;
        if (schema().validate(response(i % 2 ? "scopes" : "threads", json::object())).empty()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace scanback::dap::testing
