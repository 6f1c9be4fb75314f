// The debugger on WSTRING and WCHAR (issue 19): the Variables view and evaluate show a WSTRING as
// ST writes it, "text" in double quotes with its characters as UTF-8, functions on WSTRING
// evaluate as the program computes them, and setVariable and setExpression take a "..." value
// (truncation and mixing with STRING are refused with a message). Every message is checked
// against the official schema.
#include <gtest/gtest.h>

#include <map>

#include "tests/dap/session_client.h"
#include "tests/support/trace_support.h"

using namespace scanback::dap;
using namespace scanback::dap::testing;

namespace {

const char* kText = R"(PROGRAM Main
VAR
  w : WSTRING[10] := "Grüße $"x$"";
  c : WCHAR := WCHAR#"€";
  s : STRING := 'plain';
  n : INT;
END_VAR
n := LEN(w);
n := n + 1;
END_PROGRAM
)";
constexpr int kSecondLine = 9;  // n := n + 1;

class DapWString : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }
  void launchStoppedAt(int line) {
    client_.start(
        json{{"program", json::array({project_.path("text.st")})}, {"stopOnEntry", false}, {"realtime", false}});
    client_.request("setBreakpoints", json{{"source", json{{"path", project_.path("text.st")}}},
                                           {"breakpoints", json::array({{{"line", line}}})}});
    client_.configured();
    client_.event("stopped");
  }
  int64_t instanceScope() {
    const json scopes = client_.request("scopes", json{{"frameId", 1}})["body"]["scopes"];
    for (const json& scope : scopes)
      if (scope["name"] == "Instance") return scope["variablesReference"];
    ADD_FAILURE() << "no Instance scope: " << scopes.dump();
    return 0;
  }
  std::map<std::string, json> variables(int64_t reference) {
    std::map<std::string, json> byName;
    const json response = client_.request("variables", json{{"variablesReference", reference}});
    for (const json& v : response["body"]["variables"]) byName[v["name"]] = v;
    return byName;
  }
  json evaluate(const std::string& expression) {
    return client_.request("evaluate", json{{"expression", expression}, {"frameId", 1}});
  }
  TempProject project_{{{"text.st", kText}}};
  SessionClient client_;
};

TEST_F(DapWString, VariablesAndEvaluateShowTheTextInDoubleQuotes) {
  launchStoppedAt(kSecondLine);
  const auto vars = variables(instanceScope());
  EXPECT_EQ(vars.at("w")["value"], "\"Grüße $\"x$\"\"");
  EXPECT_EQ(vars.at("w")["type"], "WSTRING[10]");
  EXPECT_EQ(vars.at("c")["value"], "\"€\"");
  EXPECT_EQ(vars.at("s")["value"], "'plain'");
  EXPECT_EQ(evaluate("w")["body"]["result"], "\"Grüße $\"x$\"\"");
  EXPECT_EQ(evaluate("n")["body"]["result"], "9");  // LEN counts UTF-16 units
  EXPECT_EQ(evaluate("LEFT(w, 3)")["body"]["result"], "\"Grü\"");
  EXPECT_EQ(evaluate("CONCAT(w, \"€\")")["body"]["result"], "\"Grüße $\"x$\"€\"");
  EXPECT_EQ(evaluate("FIND(w, \"ß\")")["body"]["result"], "4");
  EXPECT_EQ(evaluate("w > \"Gr\"")["body"]["result"], "TRUE");
  EXPECT_EQ(evaluate("WSTRING_TO_STRING(w)")["body"]["result"], "'Gr??e \"x\"'");
  EXPECT_EQ(evaluate("STRING_TO_WSTRING(s)")["body"]["result"], "\"plain\"");
  EXPECT_EQ(evaluate("WCHAR_TO_WORD(c)")["body"]["result"], "8364");
  const json mixed = evaluate("w = s");
  EXPECT_FALSE(mixed["success"]);
  EXPECT_NE(mixed.value("message", std::string()).find("cannot compare WSTRING[10] and STRING"), std::string::npos)
      << mixed.dump();
}

TEST_F(DapWString, SetVariableAndSetExpressionTakeADoubleQuotedValue) {
  launchStoppedAt(kSecondLine);
  const int64_t instance = instanceScope();
  const json set =
      client_.request("setVariable", json{{"variablesReference", instance}, {"name", "w"}, {"value", "\"ñ$N€\""}});
  ASSERT_TRUE(set["success"]) << set.dump();
  EXPECT_EQ(set["body"]["value"], "\"ñ$N€\"");
  EXPECT_EQ(evaluate("LEN(w)")["body"]["result"], "3");
  const json tooLong = client_.request(
      "setVariable", json{{"variablesReference", instance}, {"name", "w"}, {"value", "\"12345678901\""}});
  EXPECT_FALSE(tooLong["success"]);
  EXPECT_NE(tooLong.value("message", std::string()).find("longer than WSTRING[10]"), std::string::npos)
      << tooLong.dump();
  const json narrow =
      client_.request("setVariable", json{{"variablesReference", instance}, {"name", "w"}, {"value", "'abc'"}});
  EXPECT_FALSE(narrow["success"]);
  const json expr =
      client_.request("setExpression", json{{"expression", "c"}, {"value", "WCHAR#\"ß\""}, {"frameId", 1}});
  ASSERT_TRUE(expr["success"]) << expr.dump();
  EXPECT_EQ(expr["body"]["value"], "\"ß\"");
  // The program goes on from the written value: the next cycle's LEN(w) is 3, then n + 1.
  client_.request("continue", json{{"threadId", 1}});
  client_.event("stopped");
  EXPECT_EQ(evaluate("n")["body"]["result"], "3");
  EXPECT_EQ(evaluate("c = WCHAR#\"ß\"")["body"]["result"], "TRUE");
}

// The timeline's signals of a recorded WSTRING: each change's text as the Variables view shows it,
// and no number (a text is no point on a value axis).
TEST(DapWStringReplay, SignalsShowEveryChangeOfAWString) {
  const char* source = R"(PROGRAM Main
VAR grow : WSTRING[4]; END_VAR
grow := CONCAT(grow, "é");
END_PROGRAM
)";
  TempProject project{{{"grow.st", source}}};
  const std::shared_ptr<const scanback::Program> program =
      scanback::test::mustCompileSourceFiles({project.path("grow.st")});
  ASSERT_TRUE(program);
  const std::string trace = project.path("grow.trace");
  scanback::test::recordCycles(program, trace, 6, 16);
  SessionClient client;
  client.start(json{{"trace", trace}});
  client.configured();
  client.event("stopped");
  const json r = client.request("scanback/signals", json{{"variables", json::array({"Main.grow"})}});
  ASSERT_TRUE(r["success"]) << r.dump();
  const json& s = r["body"]["signals"][0];
  EXPECT_EQ(s["type"], "WSTRING[4]");
  EXPECT_EQ(s["kind"], "string");
  EXPECT_EQ(s["initial"]["text"], "\"\"");
  std::vector<std::string> texts;
  for (const json& c : s["changes"]) {
    texts.push_back(c["value"]["text"]);
    EXPECT_FALSE(c["value"].contains("number"));
  }
  // One more é each cycle up to the capacity; then the assignment writes the same text.
  EXPECT_EQ(texts, (std::vector<std::string>{"\"é\"", "\"éé\"", "\"ééé\"", "\"éééé\""}));
  EXPECT_EQ(client.schemaErrors(), "");
}

}  // namespace
