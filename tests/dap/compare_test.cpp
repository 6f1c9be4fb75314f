// scanback/compare (docs/extension.md): a replay session's recording compared with another, the
// body being `scanback trace diff --json`'s object; every message validated against the official
// DAP schema.
#include <fmt/format.h>  // first: see the namespace below
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "compare/trace_diff.h"
#include "tests/dap/session_client.h"
#include "tests/support/st_programs.h"
#include "tests/support/trace_support.h"

// In the namespaces, not through using-directives. In the unity build other files' `using namespace
// scanback` make scanback::compare (declared by compare/trace_diff.h) a candidate for fmt's own
// unqualified compare() calls, so fmt/format.h is parsed above, before that namespace exists.
namespace scanback::dap::testing {
namespace compare_requests {

// Counter resets above 30000 in A, above 300 in B: Main.n reaches 17 in cycle 20 (Main runs in
// every Fast cycle, Watch every fifth), and B's count passes 300 there: B takes the branch, A not.
std::string counterLib(int limit) {
  return "FUNCTION Twice : INT\nVAR_INPUT x : INT; END_VAR\nTwice := x * 2;\nEND_FUNCTION\n\n"
         "FUNCTION_BLOCK Counter\nVAR_INPUT step : INT; END_VAR\nVAR count : INT; END_VAR\n"
         "count := count + step;\nIF count > " +
         std::to_string(limit) + " THEN count := 0; END_IF\nEND_FUNCTION_BLOCK\n";
}
constexpr int kLineReset = 10;  // IF count > ... THEN count := 0; in both

class DapCompare : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(client_.schemaErrors(), ""); }

  // The two versions are files of the same names in two directories, as a fix is: statements are
  // matched file by file (compare/statement_map.h).
  std::string record(const TempProject& version, const std::string& name) {
    const std::shared_ptr<const Program> program =
        test::mustCompileSourceFiles({version.path("main.st"), version.path("lib.st")});
    if (!program) return {};
    const std::string trace = project_.path(name);
    test::recordCycles(program, trace, 60, 16);
    return trace;
  }
  void SetUp() override {
    a_ = record(project_, "a.trace");
    b_ = record(fixed_, "b.trace");
    ASSERT_FALSE(a_.empty());
    ASSERT_FALSE(b_.empty());
  }
  json startReplay(const std::string& trace) {
    client_.start(json{{"trace", trace}, {"cwd", project_.dir().string()}});
    client_.configured();
    return client_.event("stopped");
  }
  // What `scanback trace diff --json A B` prints.
  static json expected(const std::string& a, const std::string& b, const std::string& vars = {}) {
    compare::DiffOptions options;
    options.choice.vars = vars;
    compare::DiffReport report;
    std::string error;
    EXPECT_TRUE(compare::diffTraces(a, b, options, report, error)) << error;
    return json::parse(compare::diffToJson(report).dump());
  }

  TempProject project_{{{"main.st", test::twoTaskMain()}, {"lib.st", counterLib(30000)}}};
  TempProject fixed_{{{"main.st", test::twoTaskMain()}, {"lib.st", counterLib(300)}}};
  SessionClient client_;
  std::string a_, b_;
};

TEST_F(DapCompare, TheCapabilityIsAdvertisedInTheInitializeResponse) {
  startReplay(a_);
  bool found = false;
  for (const json& m : client_.messages())
    if (m.value("type", "") == "response" && m.value("command", "") == "initialize") {
      found = true;
      EXPECT_EQ(m["body"].value("supportsScanbackCompare", false), true) << m.dump();
    }
  EXPECT_TRUE(found);
}

TEST_F(DapCompare, TheBodyIsTraceDiffsJsonWithTheSessionAsAOrAsB) {
  startReplay(a_);
  const json r = client_.request("scanback/compare", json{{"trace", b_}});
  ASSERT_TRUE(r["success"]) << r.dump();
  json body = r["body"];
  EXPECT_EQ(body["sessionIs"], "a");
  EXPECT_EQ(body["a"]["path"], a_);
  EXPECT_EQ(body["b"]["path"], b_);
  body.erase("sessionIs");
  EXPECT_EQ(body, expected(a_, b_));
  EXPECT_FALSE(body["equal"]);
  EXPECT_EQ(body["firstDivergence"]["kind"], "pathsSplit") << body.dump();
  EXPECT_EQ(body["firstDivergence"]["cycle"], 20) << body.dump();

  // The session's recording as B: the other trace is A (a rerun opened as a session, compared
  // with the recording it reran).
  const json asB = client_.request("scanback/compare", json{{"trace", b_}, {"sessionIs", "b"}});
  ASSERT_TRUE(asB["success"]) << asB.dump();
  EXPECT_EQ(asB["body"]["sessionIs"], "b");
  EXPECT_EQ(asB["body"]["a"]["path"], b_);
  EXPECT_EQ(asB["body"]["b"]["path"], a_);

  // A relative path is the session's directory's; vars narrow the comparison.
  const json narrow =
      client_.request("scanback/compare", json{{"trace", "b.trace"}, {"vars", json::array({"Watch.ticks"})}});
  ASSERT_TRUE(narrow["success"]) << narrow.dump();
  EXPECT_TRUE(narrow["body"]["equal"]) << narrow.dump();
  ASSERT_EQ(narrow["body"]["values"].size(), 1u);
  EXPECT_EQ(narrow["body"]["values"][0]["name"], "Watch.ticks");
}

TEST_F(DapCompare, SeekingToTheFirstDivergenceStopsAtTheStatementWherePathsSplit) {
  startReplay(a_);
  const json r = client_.request("scanback/compare", json{{"trace", b_}, {"sessionIs", "b"}});
  ASSERT_TRUE(r["success"]) << r.dump();
  const json& d = r["body"]["firstDivergence"];
  // The session (a.trace, limit 30000) is B, b.trace (limit 300) A: at the split A resets the
  // count, B's cycle goes on past the IF.
  EXPECT_EQ(r["body"]["a"]["path"], b_);
  ASSERT_TRUE(d["a"].is_object()) << d.dump();
  EXPECT_EQ(d["a"]["text"].get<std::string>().rfind("count := 0;", 0), 0u) << d.dump();
  const json seek = client_.request("scanback/seek", json{{"cycle", d["cycle"]}, {"step", d["step"]}});
  ASSERT_TRUE(seek["success"]) << seek.dump();
  client_.event("stopped");
  const json frames = client_.request("stackTrace", json{{"threadId", 1}});
  ASSERT_FALSE(frames["body"]["stackFrames"].empty()) << frames.dump();
  const json& top = frames["body"]["stackFrames"][0];
  // The session stops where B goes on: the statement after the IF, never A's reset.
  const std::string b = d["b"].is_object() ? d["b"]["location"].get<std::string>() : "(the cycle ends)";
  EXPECT_EQ(b.substr(b.rfind(':') + 1), std::to_string(top["line"].get<int>())) << top.dump() << d.dump();
  EXPECT_NE(top["line"], kLineReset) << top.dump();
}

TEST_F(DapCompare, BadArgumentsAndUnreadableTracesAreErrorsThatSayWhy) {
  startReplay(a_);
  auto message = [&](json args) {
    const json r = client_.request("scanback/compare", std::move(args));
    EXPECT_FALSE(r["success"]) << r.dump();
    return r.value("message", std::string());
  };
  EXPECT_NE(message(json::object()).find("'trace'"), std::string::npos);
  EXPECT_NE(message(json{{"trace", b_}, {"sessionIs", "c"}}).find("sessionIs"), std::string::npos);
  EXPECT_NE(message(json{{"trace", b_}, {"vars", "Main.n"}}).find("'vars'"), std::string::npos);
  const std::string missing = message(json{{"trace", "nosuch.trace"}});
  EXPECT_NE(missing.find("trace B"), std::string::npos) << missing;
  EXPECT_NE(missing.find("nosuch.trace"), std::string::npos) << missing;
  EXPECT_NE(message(json{{"trace", b_}, {"vars", json::array({"Main.nosuch"})}}).find("nosuch"), std::string::npos);
  // The session goes on.
  EXPECT_TRUE(client_.request("scanback/timeline")["success"]);
}

// A lane overlaid (docs/timeline-protocol.md): scanback/signals with `trace` reads the same
// variable from the other recording: B's own changes (its counter resets above 300), not A's.
TEST_F(DapCompare, SignalsOfTheOtherRecordingAreItsOwnChanges) {
  startReplay(a_);
  const json args{{"variables", json::array({"Main.c.count", "Main.nosuch"})}, {"firstCycle", 0}, {"lastCycle", 59}};
  const json fromA = client_.request("scanback/signals", args);
  json withB = args;
  withB["trace"] = "b.trace";  // relative: the session's directory's
  const json fromB = client_.request("scanback/signals", withB);
  ASSERT_TRUE(fromA["success"]) << fromA.dump();
  ASSERT_TRUE(fromB["success"]) << fromB.dump();
  const json& a = fromA["body"]["signals"][0];
  const json& b = fromB["body"]["signals"][0];
  EXPECT_EQ(b["variable"], "Main.c.count");
  EXPECT_EQ(b["type"], "INT");
  EXPECT_NE(fromB["body"]["signals"][1].value("error", ""), "") << "a variable neither has stays an error";
  ASSERT_FALSE(a["changes"].empty());
  ASSERT_FALSE(b["changes"].empty());
  // A's count only grows; B's falls back to 0 once past 300, and never exceeds the limit by more
  // than one step.
  auto largest = [](const json& lane) {
    double m = 0;
    for (const json& c : lane["changes"]) m = std::max(m, c["value"]["number"].get<double>());
    return m;
  };
  EXPECT_GT(largest(a), 300) << a.dump();
  EXPECT_LE(largest(b), 300 + 2 * 60) << b.dump();
  bool resets = false;
  for (const json& c : b["changes"]) resets = resets || (c["value"]["text"] == "0" && c["cycle"].get<int>() > 0);
  EXPECT_TRUE(resets) << b.dump();
  // Both sides agree up to the divergence (cycle 20): the first changes are the same.
  EXPECT_EQ(a["changes"][0], b["changes"][0]);

  // B's changes are the ones a replay of B itself reports.
  SessionClient ofB;
  ofB.start(json{{"trace", b_}, {"cwd", project_.dir().string()}});
  ofB.configured();
  ofB.event("stopped");
  const json own = ofB.request("scanback/signals", args);
  ASSERT_TRUE(own["success"]) << own.dump();
  EXPECT_EQ(own["body"]["signals"][0], b);
  EXPECT_EQ(ofB.schemaErrors(), "");

  // Asked again, the other recording's reader is reused and answers the same; the session's own
  // lanes are untouched.
  EXPECT_EQ(client_.request("scanback/signals", withB)["body"], fromB["body"]);
  EXPECT_EQ(client_.request("scanback/signals", args)["body"], fromA["body"]);
}

TEST_F(DapCompare, SignalsOfAnUnreadableOtherRecordingAreAnErrorNamingTrace) {
  startReplay(a_);
  auto message = [&](json trace) {
    const json r =
        client_.request("scanback/signals", json{{"variables", json::array({"Main.n"})}, {"trace", std::move(trace)}});
    EXPECT_FALSE(r["success"]) << r.dump();
    return r.value("message", std::string());
  };
  const std::string missing = message("nosuch.trace");
  EXPECT_NE(missing.find("'trace'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("nosuch.trace"), std::string::npos) << missing;
  // A corrupt recording: B's first bytes (its header) overwritten. (A recording cut short is read
  // as far as its chunks are whole, as a crashed recorder's is: no error.)
  const std::string cut = project_.path("cut.trace");
  std::filesystem::copy_file(b_, cut);
  {
    std::fstream f(cut, std::ios::in | std::ios::out | std::ios::binary);
    f.write("not a scanback trace", 20);
  }
  const std::string corrupt = message(cut);
  EXPECT_NE(corrupt.find("'trace'"), std::string::npos) << corrupt;
  EXPECT_NE(corrupt.find("cut.trace"), std::string::npos) << corrupt;
  EXPECT_NE(message(42).find("'trace'"), std::string::npos);
  // The session goes on, its own lanes too.
  EXPECT_TRUE(client_.request("scanback/signals", json{{"variables", json::array({"Main.n"})}})["success"]);
}

}  // namespace compare_requests
}  // namespace scanback::dap::testing
