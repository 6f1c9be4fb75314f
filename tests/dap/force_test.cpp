// scanback/force, scanback/release and scanback/forced (issue 31): in a live session they act on
// the task (running or paused), the Variables response marks a forced variable with the
// `forced` attribute, and a replayed trace refuses them with the reason. Every message validated
// against the official schema (custom requests by the envelope).
#include <gtest/gtest.h>

#include <string>

#include "dap/handlers/handlers.h"
#include "dap/targets/target.h"
#include "tests/dap/session_client.h"
#include "tests/support/trace_support.h"

using namespace scanback;
using namespace scanback::dap;
using namespace scanback::dap::testing;

// (Named, not anonymous: the unity build compiles this file with the other DAP tests.)
namespace force_tests {
namespace {

const char* kForceSource = R"(PROGRAM Prog
VAR
  sensor AT %IX0.2 : BOOL;
  speed : INT;
  seen : INT;
  hits : INT;
END_VAR
seen := speed;
speed := speed + 1;
IF sensor THEN hits := hits + 1; END_IF;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Prog;
END_CONFIGURATION
)";
constexpr int kLineHits = 10;

class DapForce : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }

  std::string evaluate(const std::string& expression) {
    const json r = client_.request("evaluate", json{{"expression", expression}, {"frameId", 1}});
    EXPECT_TRUE(r["success"]) << expression << ": " << r.dump();
    return r["body"].value("result", std::string("?"));
  }
  json continueToStop() {
    const size_t from = client_.messages().size();
    EXPECT_TRUE(client_.request("continue", json{{"threadId", 1}})["success"]);
    return client_.awaitMessage([](const json& m) { return m.value("event", "") == "stopped"; }, from);
  }
  // The Instance scope's variables of the top frame, by name.
  std::map<std::string, json> instanceVariables() {
    const json frames = client_.request("stackTrace", json{{"threadId", 1}})["body"]["stackFrames"];
    const json scopes = client_.request("scopes", json{{"frameId", frames[0]["id"]}})["body"]["scopes"];
    std::map<std::string, json> out;
    for (const json& s : scopes) {
      if (s["name"] != "Instance") continue;
      const json r = client_.request("variables", json{{"variablesReference", s["variablesReference"]}});
      for (const json& v : r["body"]["variables"]) out[v["name"].get<std::string>()] = v;
    }
    return out;
  }
  static bool markedForced(const json& variable) {
    if (!variable.contains("presentationHint")) return false;
    const json attributes = variable["presentationHint"].value("attributes", json::array());
    return std::find(attributes.begin(), attributes.end(), "forced") != attributes.end();
  }

  TempProject project_{{{"main.st", kForceSource}}};
  SessionClient client_;
};

TEST_F(DapForce, TheCapabilityIsAdvertised) { EXPECT_EQ(capabilities().value("supportsScanbackForce", false), true); }

TEST_F(DapForce, ALiveSessionForcesHoldsListsMarksAndReleases) {
  client_.start(json{{"program", project_.path("main.st")}, {"stopOnEntry", true}, {"realtime", false}});
  client_.configured();
  client_.event("stopped");  // entry: cycle 0 has begun, so the forces apply from cycle 1
  const json speed = client_.request("scanback/force", json{{"target", "main.speed"}, {"value", "40"}});
  ASSERT_TRUE(speed["success"]) << speed.dump();
  EXPECT_EQ(speed["body"], (json{{"target", "Main.speed"}, {"value", "40"}, {"type", "INT"}}));
  const json sensor = client_.request("scanback/force", json{{"target", "%IX0.2"}, {"value", "TRUE"}});
  ASSERT_TRUE(sensor["success"]) << sensor.dump();
  EXPECT_EQ(sensor["body"]["type"], "BOOL");
  const json forced = client_.request("scanback/forced");
  ASSERT_TRUE(forced["success"]) << forced.dump();
  ASSERT_EQ(forced["body"]["forced"].size(), 2u);
  EXPECT_EQ(forced["body"]["forced"][0]["target"], "Main.speed");
  EXPECT_EQ(forced["body"]["forced"][1]["target"], "%IX0.2");
  EXPECT_TRUE(forced["body"]["forced"][0]["sinceCycle"].is_number_unsigned());

  ASSERT_TRUE(
      client_.request("setBreakpoints", json{{"source", json{{"path", project_.path("main.st")}}},
                                             {"breakpoints", json::array({json{{"line", kLineHits}}})}})["success"]);
  continueToStop();  // cycle 0, line 10: not yet forced
  EXPECT_EQ(evaluate("Main.seen"), "0");
  for (int cycle = 1; cycle <= 3; ++cycle) {
    continueToStop();
    EXPECT_EQ(evaluate("Main.seen"), "40") << "cycle " << cycle;
    EXPECT_EQ(evaluate("Main.sensor"), "TRUE") << "cycle " << cycle;
  }
  const std::map<std::string, json> variables = instanceVariables();
  ASSERT_TRUE(variables.count("speed") && variables.count("sensor") && variables.count("seen"));
  EXPECT_TRUE(markedForced(variables.at("speed"))) << variables.at("speed").dump();
  EXPECT_TRUE(markedForced(variables.at("sensor"))) << variables.at("sensor").dump();
  EXPECT_FALSE(markedForced(variables.at("seen"))) << variables.at("seen").dump();

  const json released = client_.request("scanback/release");
  ASSERT_TRUE(released["success"]) << released.dump();
  EXPECT_EQ(released["body"]["released"], (json::array({"Main.speed", "%IX0.2"})));
  EXPECT_TRUE(client_.request("scanback/forced")["body"]["forced"].empty());
  continueToStop();
  EXPECT_EQ(evaluate("Main.seen"), "41");       // the program goes on from the value the cycle left
  EXPECT_EQ(evaluate("Main.sensor"), "FALSE");  // the field's value latched again
  EXPECT_FALSE(markedForced(instanceVariables().at("speed")));

  const json again = client_.request("scanback/release", json{{"target", "Main.speed"}});
  EXPECT_FALSE(again["success"]);
  EXPECT_EQ(again["message"], "cannot release 'Main.speed': it is not forced");
  const json bad = client_.request("scanback/force", json{{"target", "Main.nothing"}, {"value", "1"}});
  EXPECT_FALSE(bad["success"]);
  EXPECT_NE(bad["message"].get<std::string>().find("cannot force 'Main.nothing'"), std::string::npos) << bad.dump();
  const json value = client_.request("scanback/force", json{{"target", "Main.speed"}, {"value", "fast"}});
  EXPECT_FALSE(value["success"]);
  EXPECT_NE(value["message"].get<std::string>().find("cannot force 'Main.speed' to fast"), std::string::npos)
      << value.dump();
  const json missing = client_.send("scanback/force", json{{"target", "Main.speed"}}, false);
  EXPECT_FALSE(client_.response(missing)["success"]);
}

TEST_F(DapForce, AReplayedTraceRefusesForcesWithTheReason) {
  const std::shared_ptr<const Program> program = test::mustCompileSourceFiles({project_.path("main.st")});
  ASSERT_TRUE(program);
  const std::string trace = project_.path("run.trace");
  test::recordCycles(program, trace, 20, 8);
  client_.start(json{{"trace", trace}});
  client_.configured();
  client_.event("stopped");
  for (const auto& [command, args] :
       std::vector<std::pair<std::string, json>>{{"scanback/force", json{{"target", "Main.speed"}, {"value", "1"}}},
                                                 {"scanback/release", json::object()},
                                                 {"scanback/forced", json::object()}}) {
    const json r = client_.request(command, args);
    EXPECT_FALSE(r["success"]) << command;
    EXPECT_EQ(r["message"], kForcesNeedALiveTask) << command;
  }
}

}  // namespace
}  // namespace force_tests
