// The debugger on object-oriented ST (issue 19): an extending block's Instance scope shows the
// inherited variables flat beside its own, stepIn enters the method a call through an interface
// reaches, and evaluate shows the instance an interface references (its fields as children),
// while a property's GET, being a call, is refused like any call. Every message is checked
// against the official schema.
#include <gtest/gtest.h>

#include <map>

#include "tests/dap/session_client.h"

using namespace scanback::dap;
using namespace scanback::dap::testing;

namespace {

const char* kShapes = R"(INTERFACE I_Shape
METHOD Area : REAL
END_METHOD
END_INTERFACE

FUNCTION_BLOCK Shape IMPLEMENTS I_Shape
VAR
  id : INT := 7;
END_VAR
METHOD Area : REAL
Area := 0.0;
END_METHOD
END_FUNCTION_BLOCK

FUNCTION_BLOCK Rect EXTENDS Shape
VAR
  w : REAL := 2.0;
  h : REAL := 3.0;
END_VAR
METHOD Area : REAL
Area := w * h;
END_METHOD
PROPERTY Width : REAL
GET
  Width := w;
END_GET
END_PROPERTY
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  r : Rect;
  s : I_Shape;
  a : REAL;
END_VAR
s := r;
a := s.Area();
END_PROGRAM
)";
constexpr int kCallLine = 37;  // a := s.Area();
constexpr int kAreaLine = 21;  // Area := w * h; (Rect.Area)

class DapObjects : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }
  void launchStoppedAt(int line) {
    client_.start(
        json{{"program", json::array({project_.path("shapes.st")})}, {"stopOnEntry", false}, {"realtime", false}});
    client_.request("setBreakpoints", json{{"source", json{{"path", project_.path("shapes.st")}}},
                                           {"breakpoints", json::array({{{"line", line}}})}});
    client_.configured();
    client_.event("stopped");
  }
  json topFrame() { return client_.request("stackTrace", json{{"threadId", 1}})["body"]["stackFrames"][0]; }
  std::map<std::string, json> variables(int64_t reference) {
    std::map<std::string, json> byName;
    const json response = client_.request("variables", json{{"variablesReference", reference}});
    for (const json& v : response["body"]["variables"]) byName[v["name"]] = v;
    return byName;
  }
  TempProject project_{{{"shapes.st", kShapes}}};
  SessionClient client_;
};

TEST_F(DapObjects, StepInThroughAnInterfaceEntersTheMethodOfTheReferencedInstancesBlock) {
  launchStoppedAt(kCallLine);
  EXPECT_EQ(topFrame()["line"], kCallLine) << client_.request("stackTrace", json{{"threadId", 1}}).dump();
  client_.request("stepIn", json{{"threadId", 1}});
  EXPECT_EQ(client_.event("stopped")["body"]["reason"], "step");
  const json frame = topFrame();
  EXPECT_EQ(frame["line"], kAreaLine);  // Rect's Area, not Shape's
  EXPECT_EQ(frame["name"], "Main.r (Rect.Area)");
  // Out again: the caller's next statement (the call is the cycle's last one: the next cycle's
  // first).
  client_.request("stepOut", json{{"threadId", 1}});
  client_.event("stopped");
  EXPECT_EQ(topFrame()["line"], kCallLine - 1);
}

TEST_F(DapObjects, TheInstanceScopeOfAnExtendingBlockShowsItsInheritedVariablesFlat) {
  launchStoppedAt(kAreaLine);
  ASSERT_EQ(topFrame()["line"], kAreaLine) << client_.request("stackTrace", json{{"threadId", 1}}).dump();
  const json scopes = client_.request("scopes", json{{"frameId", 1}})["body"]["scopes"];
  ASSERT_GE(scopes.size(), 2u);
  ASSERT_EQ(scopes[1]["name"], "Instance");
  const auto instance = variables(scopes[1]["variablesReference"]);
  std::vector<std::string> names;
  for (const auto& [name, v] : instance) names.push_back(name);
  // The base's id beside Rect's own w and h; the hidden class id is not shown.
  EXPECT_EQ(names, (std::vector<std::string>{"h", "id", "w"}));
  EXPECT_EQ(instance.at("id")["value"], "7");
  EXPECT_EQ(instance.at("w")["value"], "2");
}

TEST_F(DapObjects, EvaluateShowsTheInstanceAnInterfaceReferencesAndRefusesAPropertysGet) {
  launchStoppedAt(kCallLine);
  const json r = client_.request("evaluate", json{{"expression", "s"}, {"frameId", 1}});
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_EQ(r["body"]["result"], "REF(Main.r) : Rect");
  ASSERT_GT(r["body"]["variablesReference"], 0);
  const auto fields = variables(r["body"]["variablesReference"]);
  ASSERT_TRUE(fields.count("id") && fields.count("w") && fields.count("h"));
  EXPECT_EQ(fields.at("h")["value"], "3");
  // The children name the instance itself, so they evaluate and can be watched.
  EXPECT_EQ(fields.at("h")["evaluateName"], "Main.r.h");
  const json h = client_.request("evaluate", json{{"expression", "Main.r.h"}, {"frameId", 1}});
  EXPECT_EQ(h["body"]["result"], "3");
  // A property's GET runs code: evaluating it is refused, as a function call is.
  const json width = client_.request("evaluate", json{{"expression", "r.Width"}, {"frameId", 1}});
  EXPECT_FALSE(width["success"]);
  EXPECT_NE(width.value("message", std::string()).find("must not change the program state"), std::string::npos)
      << width.dump();
  // Interface values compare with 0 (NULL) in the debugger as in the program.
  const json isSet = client_.request("evaluate", json{{"expression", "s <> 0"}, {"frameId", 1}});
  EXPECT_EQ(isSet["body"]["result"], "TRUE");
}

}  // namespace
