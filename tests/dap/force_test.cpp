// scanback/force, scanback/release and scanback/forced (issue 31): in a live session they act on
// the task (running or paused), the Variables response marks a forced variable with the
// `forced` attribute, and a replayed trace refuses force and release with the reason; in history
// (a replay, a live session paused in its history) scanback/forced lists and Variables mark the
// forces the trace recorded at the position shown. Every message validated
// against the official schema (custom requests by the envelope).
#include <gtest/gtest.h>

#include <string>

#include "dap/handlers/handlers.h"
#include "dap/targets/target.h"
#include "tests/dap/session_client.h"
#include "tests/support/trace_support.h"
#include "vm/runtime/forces.h"

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

TEST_F(DapForce, AReplayedTraceRefusesForceAndReleaseWithTheReason) {
  const std::shared_ptr<const Program> program = test::mustCompileSourceFiles({project_.path("main.st")});
  ASSERT_TRUE(program);
  const std::string trace = project_.path("run.trace");
  test::recordCycles(program, trace, 20, 8);
  client_.start(json{{"trace", trace}});
  client_.configured();
  client_.event("stopped");
  for (const auto& [command, args] : std::vector<std::pair<std::string, json>>{
           {"scanback/force", json{{"target", "Main.speed"}, {"value", "1"}}}, {"scanback/release", json::object()}}) {
    const json r = client_.request(command, args);
    EXPECT_FALSE(r["success"]) << command;
    EXPECT_EQ(r["message"], kForcesNeedALiveTask) << command;
  }
  // What it lists is what the trace held there: nothing was ever forced in this one.
  const json forced = client_.request("scanback/forced");
  ASSERT_TRUE(forced["success"]) << forced.dump();
  EXPECT_EQ(forced["body"]["forced"], json::array());
  EXPECT_EQ(forced["body"]["at"]["cycle"], 19) << forced.dump();  // a replay starts at its end
}

// Main.speed forced to 40 from cycle kForcedFrom's start, %IX0.2 to TRUE from kSensorFrom's, the
// speed released at kReleasedAt's start: the trace of a run that forced and released.
constexpr uint64_t kForcedFrom = 5, kSensorFrom = 7, kReleasedAt = 12;

void recordForcedRun(const std::shared_ptr<const Program>& program, const std::string& path) {
  scanback::Runtime rt(program);
  std::unique_ptr<recorder::Recorder> rec = test::startRecording(rt, test::recordingTo(path, 4));
  ASSERT_TRUE(rec);
  const auto force = [&](bool release, const char* target, const char* value) {
    std::string error;
    const std::optional<Force> f = resolveForce(*program, target, value, error);
    ASSERT_TRUE(f) << error;
    rt.requestForce({release, *f});
  };
  for (uint64_t c = 0; c < 20; ++c) {
    if (c == kForcedFrom) force(false, "Main.speed", "40");
    if (c == kSensorFrom) force(false, "%IX0.2", "TRUE");
    if (c == kReleasedAt) force(true, "Main.speed", "0");
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    while (rec->backlogged())
      static_cast<void>(rec->waitUntilNotBacklogged(std::chrono::seconds(1)));  // (waited again)
  }
  ASSERT_TRUE(test::finishRecording(*rec));
}

TEST_F(DapForce, AReplayListsAndMarksTheForcesHeldAtThePositionShown) {
  const std::shared_ptr<const Program> program = test::mustCompileSourceFiles({project_.path("main.st")});
  ASSERT_TRUE(program);
  const std::string trace = project_.path("forced.trace");
  ASSERT_NO_FATAL_FAILURE(recordForcedRun(program, trace));
  client_.start(json{{"trace", trace}});
  client_.configured();
  client_.event("stopped");
  // Seeks to (cycle, 1) and returns scanback/forced's body there.
  const auto forcedAt = [&](uint64_t cycle) {
    const size_t from = client_.messages().size();
    const json seek = client_.request("scanback/seek", json{{"cycle", cycle}, {"step", 1}});
    EXPECT_TRUE(seek["success"]) << seek.dump();
    client_.awaitMessage([](const json& m) { return m.value("event", "") == "stopped"; }, from);
    const json r = client_.request("scanback/forced");
    EXPECT_TRUE(r["success"]) << r.dump();
    EXPECT_EQ(r["body"]["at"], (json{{"cycle", cycle}, {"step", 1}})) << r.dump();
    return r["body"];
  };
  const json speed40{{"target", "Main.speed"}, {"value", "40"}, {"type", "INT"}, {"sinceCycle", kForcedFrom}};
  const json sensorTrue{{"target", "%IX0.2"}, {"value", "TRUE"}, {"type", "BOOL"}, {"sinceCycle", kSensorFrom}};

  EXPECT_EQ(forcedAt(kForcedFrom + 1)["forced"], json::array({speed40}));
  std::map<std::string, json> variables = instanceVariables();
  EXPECT_TRUE(markedForced(variables.at("speed"))) << variables.at("speed").dump();
  EXPECT_FALSE(markedForced(variables.at("sensor"))) << variables.at("sensor").dump();
  EXPECT_EQ(evaluate("Main.seen"), "40");

  EXPECT_EQ(forcedAt(kReleasedAt - 1)["forced"], json::array({speed40, sensorTrue}));
  variables = instanceVariables();
  EXPECT_TRUE(markedForced(variables.at("speed")) && markedForced(variables.at("sensor")));

  // Back before the first force: none; then after the release at kReleasedAt's start: the sensor alone.
  EXPECT_EQ(forcedAt(kForcedFrom - 2)["forced"], json::array());
  variables = instanceVariables();
  EXPECT_FALSE(markedForced(variables.at("speed")) || markedForced(variables.at("sensor")));
  EXPECT_EQ(forcedAt(kReleasedAt + 1)["forced"], json::array({sensorTrue}));
  variables = instanceVariables();
  EXPECT_FALSE(markedForced(variables.at("speed"))) << variables.at("speed").dump();
  EXPECT_TRUE(markedForced(variables.at("sensor"))) << variables.at("sensor").dump();
  // The first cycle of a chunk (recorded every 4 cycles) lists what it restates.
  EXPECT_EQ(forcedAt(8)["forced"], json::array({speed40, sensorTrue}));
}

TEST_F(DapForce, ALiveSessionPausedInItsHistoryShowsTheForcesHeldThere) {
  client_.start(json{{"program", project_.path("main.st")}, {"stopOnEntry", true}, {"realtime", false}});
  client_.configured();
  client_.event("stopped");
  ASSERT_TRUE(client_.request("scanback/force", json{{"target", "Main.speed"}, {"value", "40"}})["success"]);
  ASSERT_TRUE(
      client_.request("setBreakpoints", json{{"source", json{{"path", project_.path("main.st")}}},
                                             {"breakpoints", json::array({json{{"line", kLineHits}}})}})["success"]);
  for (int i = 0; i < 4; ++i) continueToStop();  // cycles 0 to 3, forced from cycle 1
  json live = client_.request("scanback/forced")["body"];
  EXPECT_FALSE(live.contains("at")) << live.dump();
  ASSERT_EQ(live["forced"].size(), 1u);
  EXPECT_TRUE(markedForced(instanceVariables().at("speed")));

  // Back to cycle 0, before the force: history, where nothing was forced; the force itself still
  // goes to the live task, and the live position lists it again.
  size_t from = client_.messages().size();
  ASSERT_TRUE(client_.request("scanback/seek", json{{"cycle", 0}, {"step", 1}})["success"]);
  client_.awaitMessage([](const json& m) { return m.value("event", "") == "stopped"; }, from);
  const json history = client_.request("scanback/forced")["body"];
  EXPECT_EQ(history["forced"], json::array()) << history.dump();
  EXPECT_EQ(history["at"], (json{{"cycle", 0}, {"step", 1}}));
  EXPECT_FALSE(markedForced(instanceVariables().at("speed")));
  from = client_.messages().size();
  ASSERT_TRUE(client_.request("scanback/seek", json{{"cycle", 2}, {"step", 1}})["success"]);
  client_.awaitMessage([](const json& m) { return m.value("event", "") == "stopped"; }, from);
  const json held = client_.request("scanback/forced")["body"];
  ASSERT_EQ(held["forced"].size(), 1u) << held.dump();
  EXPECT_EQ(held["forced"][0]["target"], "Main.speed");
  EXPECT_EQ(held["forced"][0]["sinceCycle"], 1);
  EXPECT_TRUE(markedForced(instanceVariables().at("speed")));

  from = client_.messages().size();
  ASSERT_TRUE(client_.request("scanback/goToLive")["success"]);
  client_.awaitMessage([](const json& m) { return m.value("event", "") == "stopped"; }, from);
  live = client_.request("scanback/forced")["body"];
  EXPECT_FALSE(live.contains("at")) << live.dump();
  EXPECT_EQ(live["forced"].size(), 1u);
}

}  // namespace
}  // namespace force_tests
