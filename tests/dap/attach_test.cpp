// Attached sessions end to end (issue 15): `scanback run --control` in a child process on a unix
// socket in a temporary directory; `scanback ctl` as another process; DAP sessions in this process
// (SessionClient) attached to it. Every wait is on a condition: a message, the runtime's stderr, a
// status that changes, a process that ends.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "control/client.h"
#include "tests/dap/session_client.h"
#include "tests/support/control_runtime.h"
#include "tests/support/shell.h"
#include "tests/support/st_programs.h"
#include "tests/support/wait.h"

namespace scanback::dap::testing {
namespace {

namespace fs = std::filesystem;

// Counts its cycles every 10 ms; line 6 is the statement the tests break at.
const char* kCounter = R"(PROGRAM Counter
VAR
  count : DINT;
  x : DINT;
END_VAR
count := count + 1;
x := count MOD 7;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Counter;
END_CONFIGURATION
)";

// Checks a control message against a definition of control/control.schema.json: "" when valid.
std::string validateControl(const control::json& value, const std::string& definition) {
  static const control::json document = [] {
    std::ifstream in(SCANBACK_CONTROL_SCHEMA);
    return control::json::parse(in);
  }();
  const control::json root = {{"$ref", "#/definitions/" + definition}, {"definitions", document["definitions"]}};
  valijson::Schema schema;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schemaAdapter(root);
  parser.populateSchema(schemaAdapter, schema);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(value);
  if (validator.validate(schema, target, &results)) return "";
  std::string out = "not a valid " + definition + ": " + value.dump();
  for (const auto& error : results) out += "\n  " + error.description;
  return out;
}

using test::shellQuote;
using CliResult = test::ShellResult;

using test::runScanback;

using Runtime = test::ControlRuntime;

class Attach : public ::testing::Test {
 protected:
  TempProject project_{
      {{"counter.st", kCounter}, {"faulty.st", test::kFaultsInCycle19}, {"token", "s3cret-token-of-24-bytes\n"}}};
  fs::path dir() const { return project_.dir(); }

  // The runtime's status, through the control protocol.
  control::json status(const Runtime& rt, std::optional<std::string> token = std::nullopt) {
    std::string error;
    auto client = control::ControlClient::connect(*control::parseEndpoint(rt.endpoint(), error), token, error);
    if (!client) return control::json{{"error", error}};
    auto response = client->request(control::json{{"command", "status"}}, error);
    if (!response) return control::json{{"error", error}};
    return response->value("status", control::json::object());
  }
  uint64_t cycles(const Runtime& rt) { return status(rt).value("cycles", uint64_t{0}); }
  // Waits until the runtime has run more cycles than `than`.
  bool cyclesGrowBeyond(const Runtime& rt, uint64_t than) {
    return test::eventually([&] { return cycles(rt) > than; }, std::chrono::seconds(20));
  }

  void attach(SessionClient& c, const Runtime& rt, control::json extra = control::json::object()) {
    c.request("initialize", {{"adapterID", "scanback"}, {"linesStartAt1", true}, {"columnsStartAt1", true}});
    control::json args{{"endpoint", rt.endpoint()}};
    args.update(extra);
    const control::json r = c.request("attach", args, std::chrono::seconds(30));
    ASSERT_TRUE(r.value("success", false)) << r.dump();
    c.event("initialized");
  }
  void breakAt(SessionClient& c, int line) {
    const control::json r = c.request(
        "setBreakpoints", {{"source", {{"path", project_.path("counter.st")}}}, {"breakpoints", {{{"line", line}}}}});
    ASSERT_TRUE(r["body"]["breakpoints"][0].value("verified", false)) << r.dump();
  }
};

TEST_F(Attach, CtlStatusReportsTheRuntimeWhileItsCycleCountGrows) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  EXPECT_EQ(fs::status(dir() / "rt.sock").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(cyclesGrowBeyond(rt, 0));
  // The task statistics are read from the histograms at most every kStatisticsEvery
  // (docs/control.md, "Limits"): the status that first counts a cycle may still carry a reading
  // from before it.
  control::json s;
  ASSERT_TRUE(test::eventually(
      [&] {
        const CliResult first = runScanback("ctl " + shellQuote(rt.endpoint()) + " status --json");
        if (first.exitCode != 0) return false;
        s = control::json::parse(first.out);
        return s["tasks"].size() == 1 && s["tasks"][0]["cycles"].get<uint64_t>() > 0;
      },
      std::chrono::seconds(20)));
  EXPECT_EQ(validateControl(s, "Status"), "");
  EXPECT_NE(validateControl(control::json{{"state", "dancing"}, {"cycles", -1}}, "Status"), "");  // the check bites
  EXPECT_EQ(s["state"], "running");
  EXPECT_EQ(s["debugEnabled"], true);
  ASSERT_EQ(s["tasks"].size(), 1u);
  EXPECT_EQ(s["tasks"][0]["name"], "Fast");
  EXPECT_GT(s["tasks"][0]["cycleTimeNs"]["max"].get<uint64_t>(), 0u);
  EXPECT_TRUE(s.contains("ring"));
  EXPECT_FALSE(s.contains("fault"));
  const uint64_t before = s["cycles"].get<uint64_t>();
  ASSERT_TRUE(test::eventually(
      [&] {
        const CliResult again = runScanback("ctl " + shellQuote(rt.endpoint()) + " status --json");
        return again.exitCode == 0 && control::json::parse(again.out)["cycles"].get<uint64_t>() > before;
      },
      std::chrono::seconds(20)));
  const CliResult human = runScanback("ctl " + shellQuote(rt.endpoint()) + " status");
  EXPECT_EQ(human.exitCode, 0);
  EXPECT_NE(human.out.find("state: running"), std::string::npos) << human.out;
  const CliResult stop = runScanback("ctl " + shellQuote(rt.endpoint()) + " stop");
  EXPECT_EQ(stop.exitCode, 0) << stop.err;
  EXPECT_EQ(rt.exitCode(), 0);
  EXPECT_FALSE(fs::exists(dir() / "rt.sock"));  // removed at the end
}

TEST_F(Attach, CtlAndAttachWithAWrongTokenAreRefusedAndTheSessionStaysDisconnected) {
  fs::permissions(project_.path("token"), fs::perms::owner_read | fs::perms::owner_write);
  Runtime rt(project_.path("counter.st"), dir(), {"--auth-token-file", project_.path("token")});
  ASSERT_TRUE(rt.ready());
  const CliResult none = runScanback("ctl " + shellQuote(rt.endpoint()) + " status");
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("requires a token"), std::string::npos) << none.err;
  const TempProject wrong{{{"token", "not-the-token-of-this-runtime\n"}}};
  fs::permissions(wrong.path("token"), fs::perms::owner_read | fs::perms::owner_write);
  const CliResult bad = runScanback("ctl " + shellQuote(rt.endpoint()) + " --auth-token-file " +
                                    shellQuote(wrong.path("token")) + " status");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("wrong token"), std::string::npos) << bad.err;
  const CliResult good = runScanback("ctl " + shellQuote(rt.endpoint()) + " --auth-token-file " +
                                     shellQuote(project_.path("token")) + " status");
  EXPECT_EQ(good.exitCode, 0) << good.err;
  const CliResult unreachable = runScanback("ctl unix://" + shellQuote((dir() / "none.sock").string()) + " status");
  EXPECT_EQ(unreachable.exitCode, 2);
  EXPECT_NE(unreachable.err.find("cannot connect"), std::string::npos) << unreachable.err;

  SessionClient c;
  c.request("initialize", {{"adapterID", "scanback"}});
  const control::json refused =
      c.request("attach", {{"endpoint", rt.endpoint()}, {"authToken", "not-the-token"}}, std::chrono::seconds(30));
  EXPECT_FALSE(refused.value("success", true));
  EXPECT_NE(refused.value("message", "").find("wrong token"), std::string::npos) << refused.dump();
  // The control connection's request number means nothing to whoever attaches (issue 31).
  EXPECT_EQ(refused.value("message", "").find("request 1"), std::string::npos) << refused.dump();
  // Still disconnected: the same session attaches with the right token.
  const control::json accepted = c.request(
      "attach", {{"endpoint", rt.endpoint()}, {"authToken", "s3cret-token-of-24-bytes"}}, std::chrono::seconds(30));
  EXPECT_TRUE(accepted.value("success", false)) << accepted.dump();
  EXPECT_EQ(c.schemaErrors(), "");
}

TEST_F(Attach, BreakpointAndStepBackWhileTheRuntimeRunsOnAndWritesAreRefused) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  SessionClient c;
  attach(c, rt);
  breakAt(c, 7);
  c.request("configurationDone");
  const control::json hit = c.event("stopped", std::chrono::seconds(30));
  EXPECT_EQ(hit["body"]["reason"], "breakpoint");
  const control::json back = c.request("stepBack", {{"threadId", 1}});
  ASSERT_TRUE(back.value("success", false)) << back.dump();
  const control::json stepped = c.event("stopped", std::chrono::seconds(30));
  EXPECT_EQ(stepped["body"]["reason"], "step");
  const control::json frames = c.request("stackTrace", {{"threadId", 1}});
  ASSERT_TRUE(frames.value("success", false));
  EXPECT_EQ(frames["body"]["stackFrames"][0]["line"], 6);
  // The session is stopped in history; the task is not.
  const uint64_t now = cycles(rt);
  EXPECT_TRUE(cyclesGrowBeyond(rt, now));

  // Inspection and the timeline work on the streamed history; the timeline has the runtime's
  // cycle times.
  const control::json value = c.request("evaluate", {{"expression", "count"}, {"frameId", 1}, {"context", "watch"}});
  ASSERT_TRUE(value.value("success", false)) << value.dump();
  EXPECT_GT(std::stoll(value["body"]["result"].get<std::string>()), 0);
  const control::json timeline = c.request("scanback/timeline");
  ASSERT_TRUE(timeline.value("success", false)) << timeline.dump();
  EXPECT_GT(timeline["body"]["cycleTime"]["cycles"].get<uint64_t>(), 0u);
  // The runtime scans on while the session shows its history: the timeline and the threads say so.
  EXPECT_EQ(timeline["body"]["running"], true);
  const control::json threads = c.request("threads");
  ASSERT_FALSE(threads["body"]["threads"].empty()) << threads.dump();
  for (const control::json& thread : threads["body"]["threads"])
    EXPECT_TRUE(thread["name"].get<std::string>().ends_with(" (running)")) << thread.dump();
  const control::json seek = c.request("scanback/seek", {{"cycle", timeline["body"]["firstCycle"]}});
  ASSERT_TRUE(seek.value("success", false)) << seek.dump();
  EXPECT_EQ(c.event("stopped", std::chrono::seconds(30))["body"]["reason"], "goto");

  const control::json scopes = c.request("scopes", {{"frameId", 1}});
  // A PROGRAM's variables are in its Instance scope.
  int64_t ref = 0;
  for (const control::json& scope : scopes["body"]["scopes"])
    if (scope["name"] == "Instance") ref = scope["variablesReference"];
  ASSERT_NE(ref, 0) << scopes.dump();
  // Every variable of an attached session is history: read-only, so no Set Value is offered.
  const control::json vars = c.request("variables", {{"variablesReference", ref}});
  ASSERT_FALSE(vars["body"]["variables"].empty()) << vars.dump();
  for (const control::json& v : vars["body"]["variables"])
    EXPECT_EQ(v["presentationHint"]["attributes"], control::json::array({"readOnly"})) << v.dump();
  const control::json set = c.request("setVariable", {{"variablesReference", ref}, {"name", "x"}, {"value", "3"}});
  EXPECT_FALSE(set.value("success", true));
  EXPECT_NE(set.value("message", "").find("attach mode"), std::string::npos) << set.dump();
  const control::json expr = c.request("setExpression", {{"expression", "x"}, {"value", "3"}, {"frameId", 1}});
  EXPECT_FALSE(expr.value("success", true));
  EXPECT_NE(expr.value("message", "").find("attach mode"), std::string::npos) << expr.dump();
  const control::json caps = c.messages().front();
  EXPECT_EQ(c.schemaErrors(), "");

  // Disconnect: the runtime runs on.
  c.request("disconnect");
  const uint64_t after = cycles(rt);
  EXPECT_TRUE(cyclesGrowBeyond(rt, after));
  EXPECT_TRUE(rt.running());
}

// Forcing a running runtime (issue 31): from `scanback ctl` and from an attached session, which
// forwards to the runtime; the streamed history replays the forced cycles exactly (a breakpoint
// there reads the forced value), and ctl status lists the forces.
TEST_F(Attach, ForcesReachTheRuntimeFromCtlAndAnAttachedSessionAndItsHistoryHoldsThem) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  const std::string ctl = "ctl " + shellQuote(rt.endpoint());
  const CliResult forced = runScanback(ctl + " force main.x 5");
  ASSERT_EQ(forced.exitCode, 0) << forced.err;
  EXPECT_EQ(forced.out, "Main.x forced to 5 (DINT) from the next cycle start\n");
  const CliResult list = runScanback(ctl + " forced --json");
  ASSERT_EQ(list.exitCode, 0) << list.err;
  const control::json held = control::json::parse(list.out);
  EXPECT_EQ(validateControl(held, "Forced"), "");
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["target"], "Main.x");
  const uint64_t since = held[0]["sinceCycle"].get<uint64_t>();
  ASSERT_TRUE(cyclesGrowBeyond(rt, since + 1));
  const CliResult human = runScanback(ctl + " status");
  EXPECT_NE(human.out.find("forced: Main.x = 5 (DINT), since cycle"), std::string::npos) << human.out;
  const CliResult json = runScanback(ctl + " status --json");
  EXPECT_EQ(validateControl(control::json::parse(json.out), "Status"), "");
  const CliResult bad = runScanback(ctl + " force Main.nothing 1");
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("cannot force 'Main.nothing'"), std::string::npos) << bad.err;

  SessionClient c;
  attach(c, rt);
  breakAt(c, 6);  // before count := count + 1: x as the cycle start forced it
  c.request("configurationDone");
  EXPECT_EQ(c.event("stopped", std::chrono::seconds(30))["body"]["reason"], "breakpoint");
  const control::json value = c.request("evaluate", {{"expression", "x"}, {"frameId", 1}, {"context", "watch"}});
  ASSERT_TRUE(value.value("success", false)) << value.dump();
  EXPECT_EQ(value["body"]["result"], "5");
  const control::json fromSession = c.request("scanback/forced");
  ASSERT_TRUE(fromSession.value("success", false)) << fromSession.dump();
  ASSERT_EQ(fromSession["body"]["forced"].size(), 1u);
  EXPECT_EQ(fromSession["body"]["forced"][0]["target"], "Main.x");
  const control::json second = c.request("scanback/force", {{"target", "Main.count"}, {"value", "100"}});
  ASSERT_TRUE(second.value("success", false)) << second.dump();
  EXPECT_EQ(second["body"]["type"], "DINT");
  EXPECT_EQ(control::json::parse(runScanback(ctl + " forced --json").out).size(), 2u);
  // The session shows history (stopped, while the runtime runs on): what was forced in the cycle
  // shown, not the runtime's forces of now (issue 31).
  EXPECT_TRUE(fromSession["body"].contains("at")) << fromSession.dump();
  const control::json shown = c.request("scanback/forced");
  ASSERT_TRUE(shown.value("success", false)) << shown.dump();
  ASSERT_EQ(shown["body"]["forced"].size(), 1u) << shown.dump();
  EXPECT_EQ(shown["body"]["forced"][0]["target"], "Main.x");
  EXPECT_EQ(shown["body"]["forced"][0]["value"], "5");
  EXPECT_EQ(shown["body"]["at"], fromSession["body"]["at"]);
  const control::json released = c.request("scanback/release");
  ASSERT_TRUE(released.value("success", false)) << released.dump();
  EXPECT_EQ(released["body"]["released"], (control::json::array({"Main.x", "Main.count"})));
  EXPECT_EQ(runScanback(ctl + " forced").out, "forced: none\n");
  const CliResult again = runScanback(ctl + " release Main.x");
  EXPECT_EQ(again.exitCode, 2);
  EXPECT_NE(again.err.find("cannot release 'Main.x': it is not forced"), std::string::npos) << again.err;
  EXPECT_EQ(c.schemaErrors(), "");
  c.request("disconnect");
}

TEST_F(Attach, ATcpEndpointListensOnLoopbackAndNeedsATokenOrAllowNoToken) {
  const CliResult refused = runScanback("run " + shellQuote(project_.path("counter.st")) +
                                        " --cycles 5 --control tcp://127.0.0.1:0 --control-bind 0.0.0.0");
  EXPECT_EQ(refused.exitCode, 2);
  EXPECT_NE(refused.err.find("needs a token"), std::string::npos) << refused.err;
  const CliResult elsewhere =
      runScanback("run " + shellQuote(project_.path("counter.st")) + " --cycles 5 --control tcp://0.0.0.0:0");
  EXPECT_EQ(elsewhere.exitCode, 2);
  EXPECT_NE(elsewhere.err.find("--control-bind"), std::string::npos) << elsewhere.err;
  const CliResult badEndpoint =
      runScanback("run " + shellQuote(project_.path("counter.st")) + " --cycles 5 --control http://x");
  EXPECT_EQ(badEndpoint.exitCode, 2);
  EXPECT_NE(badEndpoint.err.find("expected unix:///path.sock or tcp://127.0.0.1:PORT"), std::string::npos)
      << badEndpoint.err;
  // Loopback without a token: any local user could control the runtime, so it takes a token or
  // --allow-no-token, which warns at start.
  const CliResult noToken = runScanback("run " + shellQuote(project_.path("counter.st")) +
                                        " --cycles 50 --quiet --control tcp://127.0.0.1:0");
  EXPECT_EQ(noToken.exitCode, 2);
  EXPECT_NE(noToken.err.find("every local user can connect to a TCP port"), std::string::npos) << noToken.err;
  EXPECT_NE(noToken.err.find("--allow-no-token"), std::string::npos) << noToken.err;
  // A runtime on a free loopback port answers there, and ends by its cycle limit.
  const CliResult finite = runScanback("run " + shellQuote(project_.path("counter.st")) +
                                       " --cycles 50 --quiet --control tcp://127.0.0.1:0 --allow-no-token");
  EXPECT_EQ(finite.exitCode, 0) << finite.err;
  EXPECT_NE(finite.err.find("scanback: control endpoint tcp://127.0.0.1:"), std::string::npos) << finite.err;
  EXPECT_NE(finite.err.find("scanback: WARNING: the control endpoint tcp://127.0.0.1:"), std::string::npos)
      << finite.err;
  EXPECT_NE(finite.err.find("has no token (--allow-no-token): EVERY LOCAL USER can pause, stop and snapshot"),
            std::string::npos)
      << finite.err;
  const CliResult withToken = runScanback("run " + shellQuote(project_.path("counter.st")) +
                                          " --cycles 50 --quiet --control tcp://127.0.0.1:0 --auth-token-file " +
                                          shellQuote(project_.path("token")));
  EXPECT_EQ(withToken.exitCode, 0) << withToken.err;
  EXPECT_EQ(withToken.err.find("WARNING"), std::string::npos) << withToken.err;
}

TEST_F(Attach, DisconnectWithTerminateDebuggeeStopsTheRuntime) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  SessionClient c;
  c.request("initialize", {{"adapterID", "scanback"}});
  const control::json init = c.messages().front();
  EXPECT_EQ(init["body"].value("supportTerminateDebuggee", false), true) << init.dump();
  const control::json r = c.request("attach", {{"endpoint", rt.endpoint()}}, std::chrono::seconds(30));
  ASSERT_TRUE(r.value("success", false)) << r.dump();
  c.event("initialized");
  c.request("configurationDone");
  const control::json d = c.request("disconnect", {{"terminateDebuggee", true}});
  EXPECT_TRUE(d.value("success", false)) << d.dump();
  EXPECT_EQ(rt.exitCode(), 0);
}

TEST_F(Attach, ARuntimeWithoutDebuggingAnswersStatusAndRefusesAttach) {
  Runtime rt(project_.path("counter.st"), dir(), {"--no-debug"});
  ASSERT_TRUE(rt.ready());
  const CliResult st = runScanback("ctl " + shellQuote(rt.endpoint()) + " status --json");
  ASSERT_EQ(st.exitCode, 0) << st.err;
  EXPECT_EQ(control::json::parse(st.out)["debugEnabled"], false);
  SessionClient c;
  c.request("initialize", {{"adapterID", "scanback"}});
  const control::json refused = c.request("attach", {{"endpoint", rt.endpoint()}}, std::chrono::seconds(30));
  EXPECT_FALSE(refused.value("success", true));
  EXPECT_NE(refused.value("message", "").find("debugging is disabled"), std::string::npos) << refused.dump();
  const control::json frames = c.request("stackTrace", {{"threadId", 1}});
  EXPECT_FALSE(frames.value("success", true));  // nothing attached
  EXPECT_TRUE(rt.running());
}

TEST_F(Attach, AFaultedRuntimeStaysUpForAPostMortemAttachAndItsSnapshotReplaysToTheFault) {
  Runtime rt(project_.path("faulty.st"), dir());
  ASSERT_TRUE(rt.ready());
  ASSERT_TRUE(test::eventually([&] { return status(rt).value("state", "") == "faulted"; }, std::chrono::seconds(30)));
  const control::json s = status(rt);
  EXPECT_EQ(validateControl(s, "Status"), "");
  EXPECT_EQ(s["fault"]["line"], 8) << s.dump();
  EXPECT_NE(s["fault"]["file"].get<std::string>().find("faulty.st"), std::string::npos);
  EXPECT_EQ(s["cycles"], 20);

  SessionClient c;
  c.request("initialize", {{"adapterID", "scanback"}, {"linesStartAt1", true}});
  const control::json r = c.request("attach", {{"endpoint", rt.endpoint()}}, std::chrono::seconds(30));
  ASSERT_TRUE(r.value("success", false)) << r.dump();
  c.event("initialized");
  c.request("configurationDone");
  const control::json stop = c.event("stopped", std::chrono::seconds(30));
  EXPECT_EQ(stop["body"]["reason"], "exception") << [&] {
    std::string all;
    for (const control::json& m : c.messages()) all += m.dump() + "\n";
    return all;
  }();
  const control::json frames = c.request("stackTrace", {{"threadId", 1}});
  EXPECT_EQ(frames["body"]["stackFrames"][0]["line"], 8);
  c.request("disconnect");

  const std::string snapshot = (dir() / "post-mortem.trace").string();
  const CliResult snap = runScanback("ctl " + shellQuote(rt.endpoint()) + " snapshot " + shellQuote(snapshot));
  ASSERT_EQ(snap.exitCode, 0) << snap.err;
  const CliResult replay = runScanback("replay " + shellQuote(snapshot));
  EXPECT_EQ(replay.exitCode, 0) << replay.err;
  EXPECT_NE(replay.out.find("faulty.st:8"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("division by zero"), std::string::npos) << replay.out;
  const CliResult verify = runScanback("trace verify " + shellQuote(snapshot));
  EXPECT_EQ(verify.exitCode, 0) << verify.out << verify.err;
  EXPECT_TRUE(rt.running());
  ::kill(rt.pid(), SIGTERM);
  EXPECT_EQ(rt.exitCode(), 3);  // a fault's exit code, after a clean stop
}

TEST_F(Attach, AnOperatorsPauseHoldsTheTaskAndAnAttachReportsItAtOnce) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  ASSERT_TRUE(cyclesGrowBeyond(rt, 3));
  const std::string endpoint = shellQuote(rt.endpoint());
  const CliResult pause = runScanback("ctl " + endpoint + " pause");
  ASSERT_EQ(pause.exitCode, 0) << pause.err;
  EXPECT_NE(pause.out.find("paused"), std::string::npos) << pause.out;
  // The pause is answered once the task holds: the very next status says so.
  const control::json held = status(rt);
  EXPECT_EQ(held["state"], "paused") << held.dump();
  EXPECT_EQ(validateControl(held, "Status"), "");
  const uint64_t heldAt = held["cycles"];

  // Attaching to the paused runtime reports the pause at once, at the newest cycle it ran.
  SessionClient c;
  attach(c, rt);
  c.request("configurationDone");
  const control::json stop = c.event("stopped", std::chrono::seconds(30));
  EXPECT_EQ(stop["body"]["reason"], "pause") << stop.dump();
  const control::json frames = c.request("stackTrace", {{"threadId", 1}});
  ASSERT_TRUE(frames.value("success", false)) << frames.dump();
  EXPECT_FALSE(frames["body"]["stackFrames"].empty());
  const control::json value = c.request("evaluate", {{"expression", "count"}, {"frameId", 1}, {"context", "watch"}});
  ASSERT_TRUE(value.value("success", false)) << value.dump();
  // The history reaches the cycle the task holds after: count is the number of cycles run.
  EXPECT_EQ(std::stoull(value["body"]["result"].get<std::string>()), heldAt);
  // All that took many task intervals; the task held through them.
  EXPECT_EQ(cycles(rt), heldAt);

  const CliResult resume = runScanback("ctl " + endpoint + " resume");
  ASSERT_EQ(resume.exitCode, 0) << resume.err;
  EXPECT_TRUE(cyclesGrowBeyond(rt, heldAt));
  EXPECT_EQ(status(rt)["state"], "running");
  c.request("disconnect");
  EXPECT_TRUE(rt.running());
}

TEST_F(Attach, DataBreakpointsStopAtWritesForwardAsTheHistoryGrowsAndBackward) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  SessionClient c;
  attach(c, rt);
  breakAt(c, 6);
  c.request("configurationDone");
  ASSERT_EQ(c.event("stopped", std::chrono::seconds(30))["body"]["reason"], "breakpoint");
  c.request("setBreakpoints",
            {{"source", {{"path", project_.path("counter.st")}}}, {"breakpoints", control::json::array()}});
  const control::json info = c.request("dataBreakpointInfo", {{"name", "x"}, {"frameId", 1}});
  ASSERT_TRUE(info["body"]["dataId"].is_string()) << info.dump();
  const control::json set =
      c.request("setDataBreakpoints", {{"breakpoints", control::json::array({{{"dataId", info["body"]["dataId"]}}})}});
  ASSERT_TRUE(set.value("success", false)) << set.dump();
  auto value = [&](const char* name) {
    const control::json r = c.request("evaluate", {{"expression", name}, {"frameId", 1}, {"context", "watch"}});
    EXPECT_TRUE(r.value("success", false)) << r.dump();
    return std::stoll(r["body"]["result"].get<std::string>());
  };
  const int64_t countAtBreak = value("count");  // line 6 has not run yet in this cycle
  // Forward: x changes every cycle (count MOD 7), the first time at line 7 of this very cycle.
  c.request("continue", {{"threadId", 1}});
  control::json stop = c.event("stopped", std::chrono::seconds(30));
  EXPECT_EQ(stop["body"]["reason"], "data breakpoint") << stop.dump();
  EXPECT_EQ(value("count"), countAtBreak + 1);
  EXPECT_EQ(value("x"), (countAtBreak + 1) % 7);
  // Again, into cycles the runtime runs after the attach.
  for (int i = 2; i <= 4; ++i) {
    c.request("continue", {{"threadId", 1}});
    stop = c.event("stopped", std::chrono::seconds(30));
    EXPECT_EQ(stop["body"]["reason"], "data breakpoint");
    EXPECT_EQ(value("count"), countAtBreak + i);
    EXPECT_EQ(value("x"), (countAtBreak + i) % 7);
  }
  // Backward: the write of the cycle before.
  c.request("reverseContinue", {{"threadId", 1}});
  stop = c.event("stopped", std::chrono::seconds(30));
  EXPECT_EQ(stop["body"]["reason"], "data breakpoint");
  EXPECT_EQ(value("count"), countAtBreak + 3);
  EXPECT_EQ(value("x"), (countAtBreak + 3) % 7);
  EXPECT_TRUE(cyclesGrowBeyond(rt, static_cast<uint64_t>(countAtBreak + 4)));
  c.request("disconnect");
}

TEST_F(Attach, TwoClientsAttachAtOnceEachWithItsOwnSession) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  SessionClient a, b;
  attach(a, rt);
  attach(b, rt);
  breakAt(a, 6);
  breakAt(b, 7);
  a.request("configurationDone");
  b.request("configurationDone");
  EXPECT_EQ(a.event("stopped", std::chrono::seconds(30))["body"]["reason"], "breakpoint");
  EXPECT_EQ(b.event("stopped", std::chrono::seconds(30))["body"]["reason"], "breakpoint");
  EXPECT_EQ(a.request("stackTrace", {{"threadId", 1}})["body"]["stackFrames"][0]["line"], 6);
  EXPECT_EQ(b.request("stackTrace", {{"threadId", 1}})["body"]["stackFrames"][0]["line"], 7);
  a.request("stepBack", {{"threadId", 1}});
  EXPECT_EQ(a.event("stopped", std::chrono::seconds(30))["body"]["reason"], "step");
  // b, stopped, is untouched by a's move.
  EXPECT_EQ(b.request("stackTrace", {{"threadId", 1}})["body"]["stackFrames"][0]["line"], 7);
  a.request("disconnect");
  b.request("disconnect");
  EXPECT_TRUE(rt.running());
}

TEST_F(Attach, AStreamingClientKilledMidStreamLeavesTheRuntimeUnaffected) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t client = ::fork();
  if (client == 0) {
    // A client that streams, says so, then stops reading: the test kills it.
    std::string error;
    auto c = control::ControlClient::connect(*control::parseEndpoint(rt.endpoint(), error), std::nullopt, error);
    if (!c || !c->request(control::json{{"command", "stream"}}, error)) ::_exit(1);
    if (!c->nextEvent(error)) ::_exit(1);  // the header
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::kill(client, SIGKILL);
  ::waitpid(client, nullptr, 0);
  const uint64_t now = cycles(rt);
  EXPECT_TRUE(cyclesGrowBeyond(rt, now + 20));
  EXPECT_EQ(status(rt).value("state", ""), "running");
  // And a debugger still attaches.
  SessionClient c;
  attach(c, rt);
  c.request("configurationDone");
  c.request("pause", {{"threadId", 1}});
  EXPECT_EQ(c.event("stopped", std::chrono::seconds(30))["body"]["reason"], "pause");
}

TEST_F(Attach, MalformedControlMessagesGetAnErrorAndTheRuntimeKeepsRunning) {
  Runtime rt(project_.path("counter.st"), dir());
  ASSERT_TRUE(rt.ready());
  std::string error;
  const control::Endpoint endpoint = *control::parseEndpoint(rt.endpoint(), error);
  std::unique_ptr<net::FdStream> stream = control::connectTo(endpoint, error);
  ASSERT_TRUE(stream) << error;
  net::LineReader reader(*stream);
  auto exchange = [&](const std::string& bytes) {
    EXPECT_TRUE(stream->write(bytes, error));
    std::string line;
    EXPECT_EQ(reader.readLine(line, error), net::LineReader::Result::Line);
    const control::json response = control::json::parse(line);
    EXPECT_EQ(validateControl(response, "Response"), "");
    return response;
  };
  control::json r = exchange("not json\n");
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["error"], "request 1: syntax error at byte 2 of the request");
  r = exchange("[1,2]\n");
  EXPECT_NE(r["error"].get<std::string>().find("request 2: a request must be a JSON object"), std::string::npos);
  r = exchange("{\"command\":\"explode\"}\n");
  EXPECT_NE(r["error"].get<std::string>().find("'command' must be one of"), std::string::npos) << r.dump();
  r = exchange("{\"command\":\"stream\",\"fromCycle\":-1}\n");
  EXPECT_NE(r["error"].get<std::string>().find("'fromCycle' must be a whole number"), std::string::npos) << r.dump();
  r = exchange("{\"command\":\"snapshot\",\"path\":\"relative.trace\"}\n");
  EXPECT_NE(r["error"].get<std::string>().find("'path' must be absolute"), std::string::npos) << r.dump();
  r = exchange(std::string(control::kMaxLineBytes + 10, 'x') + "\n");
  EXPECT_NE(r["error"].get<std::string>().find("longer than"), std::string::npos) << r.dump();
  r = exchange(std::string("{\"command\":\"status\"}\n"));
  EXPECT_EQ(r["ok"], true);
  EXPECT_EQ(r["status"]["state"], "running");
  stream->close();
  const uint64_t now = cycles(rt);
  EXPECT_TRUE(cyclesGrowBeyond(rt, now));

  // A stream's events follow the schema too: the header, status, chunks, caughtUp.
  auto client = control::ControlClient::connect(endpoint, std::nullopt, error);
  ASSERT_TRUE(client) << error;
  const std::optional<control::json> started = client->request(control::json{{"command", "stream"}}, error);
  ASSERT_TRUE(started) << error;
  EXPECT_EQ(validateControl(*started, "Response"), "");
  std::set<std::string> seen;
  while (!seen.contains("caughtUp") || !seen.contains("chunk")) {
    std::optional<control::ControlClient::Event> event = client->nextEvent(error);
    ASSERT_TRUE(event) << error;
    EXPECT_EQ(validateControl(event->message, "StreamEvent"), "");
    seen.insert(event->message["event"].get<std::string>());
  }
  EXPECT_TRUE(seen.contains("header"));
  EXPECT_TRUE(seen.contains("status"));
}

}  // namespace
}  // namespace scanback::dap::testing
