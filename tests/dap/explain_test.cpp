// The explain requests (docs/explain.md): scanback/why, scanback/values and scanback/flow on a
// replay session, every message validated against the official schema (the envelopes of the
// custom requests), every expected answer derived by hand from the program below.
#include <gtest/gtest.h>

#include "tests/dap/session_client.h"
#include "tests/support/trace_support.h"
#include "vm/runtime/forces.h"

using namespace scanback;
using namespace scanback::dap;
using namespace scanback::dap::testing;

namespace {

// Cycle c: n = c + 1 after step 0; an even n sets x := 10 n (steps 0 n, 1 IF, 2 x, 3 a[2]), an
// odd one toggles b. Ten cycles: the replay stops at the end, (9, 3): `a[2] := x + 1` about to
// run, with n = 10, x = 100 (cycle 9) and a[2] = 81 (x + 1 in cycle 8, x = 80 from cycle 7).
const char* kFlow = R"(PROGRAM Main
VAR n : INT; x : INT; b : BOOL; a : ARRAY[1..3] OF INT; END_VAR
n := n + 1;
IF n MOD 2 = 0 THEN
  x := n * 10;
ELSE
  b := NOT b;
END_IF;
a[2] := x + 1;
END_PROGRAM
)";

class DapExplain : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }

  void startReplay() {
    const std::shared_ptr<const Program> program = test::mustCompileSourceFiles({project_.path("main.st")});
    ASSERT_TRUE(program);
    const std::string trace = project_.path("run.trace");
    test::recordCycles(program, trace, 10, 4);
    client_.start(json{{"trace", trace}});
    client_.configured();
    const json stopped = client_.event("stopped");
    ASSERT_EQ(stopped["body"]["reason"], "entry");
  }
  json body(const std::string& command, json args) {
    const json r = client_.request(command, std::move(args));
    EXPECT_TRUE(r["success"]) << command << ": " << r.dump();
    return r.value("body", json::object());
  }
  json node(const std::string& variable, const std::string& value, uint64_t cycle, uint64_t step, int line,
            const std::string& text, json reads = json::array()) {
    return json{{"value", value}, {"variable", variable},  {"cycle", cycle},
                {"step", step},   {"file", main()},        {"line", line},
                {"text", text},   {"origin", "statement"}, {"reads", std::move(reads)}};
  }
  std::string main() { return project_.path("main.st"); }

  TempProject project_{{{"main.st", kFlow}}};
  SessionClient client_;
};

TEST_F(DapExplain, InitializeAnnouncesTheExplainRequests) {
  const json r = client_.request("initialize", json{{"adapterID", "scanback"}});
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_EQ(r["body"]["supportsScanbackWhy"], true);
  EXPECT_EQ(r["body"]["supportsScanbackValues"], true);
  EXPECT_EQ(r["body"]["supportsScanbackFlow"], true);
}

TEST_F(DapExplain, WhyFollowsTheReadsBackAndDoesNotMove) {
  startReplay();
  // x = 100 from `x := n * 10` at (9, 2); it read n = 10 (from `n := n + 1` at (9, 0)), which read
  // n = 9 (from the same statement in cycle 8): three levels.
  const json why = body("scanback/why", json{{"variable", "x"}, {"depth", 3}});
  const json expected = node("Main.x", "100", 9, 2, 5, "x := n * 10",
                             json::array({node("Main.n", "10", 9, 0, 3, "n := n + 1",
                                               json::array({node("Main.n", "9", 8, 0, 3, "n := n + 1")}))}));
  EXPECT_EQ(why["root"], expected) << why.dump(2);
  // The position did not move: still (9, 3).
  const json t = body("scanback/timeline", json::object());
  EXPECT_EQ(t["cycle"], 9);
  EXPECT_EQ(t["step"], 3);
  // At another position: b after step 2 of cycle 2 (n = 3, odd: TRUE since cycle 0, toggled there).
  const json b = body("scanback/why", json{{"variable", "Main.b"}, {"cycle", 2}, {"step", 3}, {"depth", 1}});
  EXPECT_EQ(b["root"], node("Main.b", "FALSE", 2, 2, 7, "b := NOT b")) << b.dump(2);
  // Bad arguments are errors that say what is wrong.
  json r = client_.request("scanback/why", json{{"variable", "nosuch"}});
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r.value("message", "").find("unknown variable nosuch"), std::string::npos) << r.dump();
  r = client_.request("scanback/why", json{{"variable", "x"}, {"depth", 0}});
  EXPECT_FALSE(r["success"]);
  r = client_.request("scanback/why", json{{"variable", "n + 1"}});
  EXPECT_FALSE(r["success"]);
  EXPECT_NE(r.value("message", "").find("is a value, not a variable"), std::string::npos) << r.dump();
}

TEST_F(DapExplain, ValuesEvaluatesEachExpressionInTheFrame) {
  startReplay();
  const json v =
      body("scanback/values", json{{"frameId", 1}, {"expressions", {"n", "x", "a[2]", "nosuch", "b", "IF"}}});
  EXPECT_EQ(v["values"], (json{"10", "100", "81", nullptr, "TRUE", nullptr})) << v.dump();
  const json r = client_.request("scanback/values", json{{"frameId", 1}, {"expressions", "n"}});
  EXPECT_FALSE(r["success"]);
}

TEST_F(DapExplain, FlowMarksTheStatementsThatRanInTheCycle) {
  startReplay();
  // Cycle 9 (n = 10, even) ran n, IF, x and is at a[2]; the ELSE branch's `b := NOT b` did not run.
  json f = body("scanback/flow", json{{"frameId", 1}});
  EXPECT_EQ(f["cycle"], 9);
  EXPECT_EQ(f["ran"], (json{{{"file", main()}, {"line", 3}},
                            {{"file", main()}, {"line", 4}},
                            {{"file", main()}, {"line", 5}},
                            {{"file", main()}, {"line", 9}}}))
      << f.dump();
  EXPECT_EQ(f["notRan"], (json{{{"file", main()}, {"line", 7}}})) << f.dump();
  // In cycle 8 (n = 9, odd), at its second step (the IF): only n and the IF have run.
  const int64_t seq = client_.send("scanback/seek", json{{"cycle", 8}, {"step", 1}});
  ASSERT_TRUE(client_.response(seq)["success"]);
  client_.event("stopped");
  f = body("scanback/flow", json{{"frameId", 1}});
  EXPECT_EQ(f["ran"], (json{{{"file", main()}, {"line", 3}}, {{"file", main()}, {"line", 4}}})) << f.dump();
  EXPECT_EQ(f["notRan"],
            (json{{{"file", main()}, {"line", 5}}, {{"file", main()}, {"line", 7}}, {{"file", main()}, {"line", 9}}}))
      << f.dump();
  // The extension asks for the flow and the inline values by itself at every stop: their errors
  // (a frame gone, a cycle not recorded yet) are not popped up to the user.
  for (const char* command : {"scanback/flow", "scanback/values"}) {
    const json r = client_.request(command, json{{"frameId", 999999}, {"expressions", json::array({"n"})}});
    ASSERT_FALSE(r["success"]) << r.dump();
    EXPECT_FALSE(r["body"]["error"]["showUser"]) << command;
  }
}

// A force deep in the chain: `out` from `scaled`, `scaled` from `setpoint`, which only a force set
// (at the start of cycle 4). The same tree as `scanback trace why --json`
// (tests/replayer/forces_test.cpp), through the adapter.
TEST(DapExplainForces, WhyNamesAForceAsTheOriginDeepInTheChain) {
  const char* program =
      "PROGRAM Main\nVAR setpoint : INT; scaled : INT; out : INT; END_VAR\n"
      "scaled := setpoint * 2;\nout := scaled + 1;\nEND_PROGRAM\n";
  TempProject project{{{"main.st", program}}};
  const std::shared_ptr<const Program> p = test::mustCompileSourceFiles({project.path("main.st")});
  ASSERT_TRUE(p);
  const std::string trace = project.path("forced.trace");
  {
    scanback::Runtime rt(p);
    auto rec = test::startRecording(rt, test::recordingTo(trace, 4));
    ASSERT_TRUE(rec);
    for (uint64_t c = 0; c < 8; ++c) {
      if (c == 4) {
        std::string error;
        std::optional<Force> force = resolveForce(*p, "Main.setpoint", "21", error);
        ASSERT_TRUE(force) << error;
        rt.requestForce({false, *force});
      }
      ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
      while (rec->backlogged()) static_cast<void>(rec->waitUntilNotBacklogged(std::chrono::seconds(1)));
    }
    ASSERT_TRUE(test::finishRecording(*rec));
  }
  SessionClient client;
  client.start(json{{"trace", trace}});
  client.configured();
  ASSERT_EQ(client.event("stopped")["body"]["reason"], "entry");
  const json r =
      client.request("scanback/why", json{{"variable", "Main.out"}, {"cycle", 6}, {"step", 1}, {"depth", 3}});
  ASSERT_TRUE(r["success"]) << r.dump();
  const json& root = r["body"]["root"];
  EXPECT_EQ(root["value"], "43");
  const json& setpoint = root["reads"].at(0)["reads"].at(0);
  EXPECT_EQ(setpoint, (json{{"value", "21"},
                            {"variable", "Main.setpoint"},
                            {"cycle", 4},
                            {"step", 0},
                            {"origin", "force"},
                            {"reads", json::array()}}))
      << root.dump(2);
  EXPECT_EQ(client.schemaErrors(), "");
}

}  // namespace
