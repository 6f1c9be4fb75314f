// Declaration comments in Variables (issue 31): the comment written on a variable's declaration
// (on its line, `(* *)` or `//`, else the comment lines right above it) follows its type in the
// DAP Variable's `type`, which VS Code shows on hover; a variable without one keeps its type alone.
// The same reading as the language server's hover (scanback::declarationComment). Every message
// validated against the official schema.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/dap/session_client.h"

using namespace scanback;
using namespace scanback::dap;
using namespace scanback::dap::testing;

// (Named, not anonymous: the unity build compiles this file with the other DAP tests.)
namespace comment_tests {
namespace {

const char* kCommentedSource = R"(TYPE Valve : STRUCT
  open : BOOL; // the valve is open
  travel : INT;
END_STRUCT
END_TYPE

VAR_GLOBAL
  gTankLimit : INT := 900; (* the level the alarm trips at, in mm *)
END_VAR

PROGRAM Prog
VAR
  level AT %IW2 : INT; (* tank level in mm *)
  // how many cycles the pump has run,
  // since the start
  pumpCycles : DINT;
  plain : INT;
  label : STRING := 'a (* not a comment *)';
  inlet : Valve;
END_VAR
pumpCycles := pumpCycles + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Prog;
END_CONFIGURATION
)";

class DapComments : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }

  // The variables of a reference, by name.
  std::map<std::string, json> variablesOf(const json& reference) {
    const json r = client_.request("variables", json{{"variablesReference", reference}});
    EXPECT_TRUE(r["success"]) << r.dump();
    std::map<std::string, json> out;
    for (const json& v : r["body"]["variables"]) out[v["name"].get<std::string>()] = v;
    return out;
  }
  std::map<std::string, json> scope(const std::string& name) {
    const json frames = client_.request("stackTrace", json{{"threadId", 1}})["body"]["stackFrames"];
    const json scopes = client_.request("scopes", json{{"frameId", frames[0]["id"]}})["body"]["scopes"];
    for (const json& s : scopes)
      if (s["name"] == name) return variablesOf(s["variablesReference"]);
    ADD_FAILURE() << "no scope " << name << " in " << scopes.dump();
    return {};
  }

  TempProject project_{{{"main.st", kCommentedSource}}};
  SessionClient client_;
};

TEST_F(DapComments, VariablesShowTheDeclarationsCommentAfterTheType) {
  client_.start(json{{"program", project_.path("main.st")}, {"stopOnEntry", true}, {"realtime", false}});
  client_.configured();
  client_.event("stopped");
  const std::map<std::string, json> instance = scope("Instance");
  ASSERT_TRUE(instance.count("level") && instance.count("pumpCycles") && instance.count("plain") &&
              instance.count("label") && instance.count("inlet"));
  EXPECT_EQ(instance.at("level")["type"], "INT AT %IW2 — tank level in mm");
  EXPECT_EQ(instance.at("pumpCycles")["type"], "DINT — how many cycles the pump has run, since the start");
  EXPECT_EQ(instance.at("plain")["type"], "INT");
  EXPECT_EQ(instance.at("label")["type"], "STRING") << "a comment marker inside a string is not a comment";
  EXPECT_EQ(instance.at("inlet")["type"], "Valve");
  // A structure's fields carry their own declarations' comments.
  const std::map<std::string, json> inlet = variablesOf(instance.at("inlet")["variablesReference"]);
  ASSERT_TRUE(inlet.count("open") && inlet.count("travel"));
  EXPECT_EQ(inlet.at("open")["type"], "BOOL — the valve is open");
  EXPECT_EQ(inlet.at("travel")["type"], "INT");
  const std::map<std::string, json> globals = scope("Globals");
  ASSERT_TRUE(globals.count("gTankLimit"));
  EXPECT_EQ(globals.at("gTankLimit")["type"], "INT — the level the alarm trips at, in mm");
  // The value is untouched, and so is what evaluates it.
  EXPECT_EQ(instance.at("level")["value"], "0");
  EXPECT_EQ(instance.at("level")["evaluateName"], "level");
  // The I/O scope names it by its path, with the same comment.
  const std::map<std::string, json> io = scope("I/O");
  ASSERT_TRUE(io.count("Main.level")) << json(io).dump();
  EXPECT_EQ(io.at("Main.level")["type"], "INT AT %IW2 — tank level in mm");
}

}  // namespace
}  // namespace comment_tests
