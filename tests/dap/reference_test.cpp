// The debugger on CODESYS's REFERENCE TO (issue 30): the Variables view shows a reference as the
// variable it designates (its value; a structure's fields as children), an unbound one as
// "invalid reference"; evaluate reads a reference as the program does and names an unbound one;
// setVariable writes what a reference designates and refuses an unbound one. Every message is
// checked against the official schema.
#include <gtest/gtest.h>

#include <map>

#include "tests/dap/session_client.h"

using namespace scanback::dap;
using namespace scanback::dap::testing;

namespace {

const char* kReferenceProgram = R"(TYPE Point :
STRUCT
  x : INT;
  y : INT;
END_STRUCT
END_TYPE

PROGRAM Main
VAR
  a : INT := 5;
  pt : Point := (x := 3, y := 4);
  r : REFERENCE TO INT;
  rp : REFERENCE TO Point;
  unbound : REFERENCE TO INT;
  n : INT;
END_VAR
r REF= a;
rp REF= pt;
n := n + 1;
END_PROGRAM
)";
constexpr int kReferenceStopLine = 19;  // n := n + 1;

class DapReferences : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }
  void launchStopped() {
    client_.start(
        json{{"program", json::array({project_.path("refs.st")})}, {"stopOnEntry", false}, {"realtime", false}});
    client_.request("setBreakpoints", json{{"source", json{{"path", project_.path("refs.st")}}},
                                           {"breakpoints", json::array({{{"line", kReferenceStopLine}}})}});
    client_.configured();
    client_.event("stopped");
  }
  std::map<std::string, json> variables(int64_t reference) {
    std::map<std::string, json> byName;
    const json response = client_.request("variables", json{{"variablesReference", reference}});
    for (const json& v : response["body"]["variables"]) byName[v["name"]] = v;
    return byName;
  }
  int64_t instanceScope() {
    const json scopes = client_.request("scopes", json{{"frameId", 1}})["body"]["scopes"];
    for (const json& s : scopes)
      if (s["name"] == "Instance") return s["variablesReference"];
    ADD_FAILURE() << scopes.dump();
    return 0;
  }
  TempProject project_{{{"refs.st", kReferenceProgram}}};
  SessionClient client_;
};

TEST_F(DapReferences, TheVariablesViewShowsWhatAReferenceDesignatesOrThatItIsInvalid) {
  launchStopped();
  const auto main = variables(instanceScope());
  ASSERT_TRUE(main.count("r") && main.count("rp") && main.count("unbound"));
  EXPECT_EQ(main.at("r")["value"], "5");
  EXPECT_EQ(main.at("r")["evaluateName"], "r");
  EXPECT_EQ(main.at("unbound")["value"], "invalid reference");
  EXPECT_EQ(main.at("unbound").value("variablesReference", 0), 0);
  // A reference to a structure expands to the structure's fields.
  ASSERT_GT(main.at("rp")["variablesReference"], 0) << main.at("rp").dump();
  const auto fields = variables(main.at("rp")["variablesReference"]);
  ASSERT_TRUE(fields.count("x") && fields.count("y"));
  EXPECT_EQ(fields.at("y")["value"], "4");
}

TEST_F(DapReferences, EvaluateAndSetVariableReadAndWriteWhatAReferenceDesignates) {
  launchStopped();
  const json r = client_.request("evaluate", json{{"expression", "r * 2"}, {"frameId", 1}});
  ASSERT_TRUE(r["success"]) << r.dump();
  EXPECT_EQ(r["body"]["result"], "10");
  const json bad = client_.request("evaluate", json{{"expression", "unbound + 1"}, {"frameId", 1}});
  EXPECT_FALSE(bad["success"]);
  EXPECT_NE(bad.value("message", std::string()).find("REFERENCE TO 'unbound' is not bound"), std::string::npos)
      << bad.dump();
  // Writing the reference writes the variable it designates.
  const int64_t scope = instanceScope();
  const json set = client_.request("setVariable", json{{"variablesReference", scope}, {"name", "r"}, {"value", "42"}});
  ASSERT_TRUE(set["success"]) << set.dump();
  const json a = client_.request("evaluate", json{{"expression", "a"}, {"frameId", 1}});
  EXPECT_EQ(a["body"]["result"], "42");
  const json refused =
      client_.request("setVariable", json{{"variablesReference", scope}, {"name", "unbound"}, {"value", "1"}});
  EXPECT_FALSE(refused["success"]);
  EXPECT_NE(refused.value("message", std::string()).find("invalid reference"), std::string::npos) << refused.dump();
}

}  // namespace
