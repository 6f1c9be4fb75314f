// Why-chains (replayer/why.h) and logpoints over history through the real `scanback` command:
// `trace why --depth N --json` and `trace log` on a recording of two tasks, a function block, an
// array at a computed index, a reference and a stimulus input; every expected tree and message
// derived by hand from the program below (the comments say how).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/shell.h"
#include "tests/support/trace_support.h"
#include "tests/traces/trace_test_support.h"
#include "vm/runtime/values.h"

using namespace scanback;
using json = nlohmann::json;

namespace {

using test::runScanback;
using test::shellQuote;
using trace::testing::TempDir;

// Line numbers matter: the trees name them.
const char* kPlant = R"(VAR_GLOBAL
  g : INT;
END_VAR

FUNCTION_BLOCK Scale
VAR_INPUT in : INT; END_VAR
VAR_OUTPUT out : INT; END_VAR
out := in * 2;
END_FUNCTION_BLOCK

PROGRAM Fast
VAR k : INT; sensor : INT; END_VAR
k := k + 1;
g := sensor + k;
END_PROGRAM

PROGRAM Slow
VAR
  a : ARRAY[0..3] OF INT;
  i : INT;
  p : REF_TO INT;
  fb : Scale;
  y : INT;
END_VAR
i := (i + 1) MOD 4;
a[i] := g;
p := REF(a[i]);
fb(in := p^);
y := fb.out;
END_PROGRAM

CONFIGURATION C
  RESOURCE R ON PLC
    TASK TFast (INTERVAL := T#10ms, PRIORITY := 1);
    TASK TSlow (INTERVAL := T#20ms, PRIORITY := 2);
    PROGRAM F WITH TFast : Fast;
    PROGRAM S WITH TSlow : Slow;
  END_RESOURCE
END_CONFIGURATION
)";
// The cycles: Fast every 10 ms, Slow every 20 ms, Fast first when both are released:
//   0 F (0 ms)  1 S (0 ms)  2 F (10)  3 F (20)  4 S (20)  5 F (30)  6 F (40)  7 S (40)
// Fast's steps: 0 `k := k + 1`, 1 `g := sensor + k`. Slow's: 0 `i := ...`, 1 `a[i] := g`,
// 2 `p := REF(a[i])`, 3 `fb(in := p^)`, 4 `out := in * 2` (in fb), 5 `y := fb.out`.
// sensor is 5 from cycle 0, 7 from cycle 3 (the stimulus), so k and g after each Fast cycle:
//   c0 k=1 g=6, c2 k=2 g=7, c3 k=3 g=10, c5 k=4 g=11, c6 k=5 g=12
// and Slow: c1 i=1 a[1]=6, c4 i=2 a[2]=10, c7 i=3 a[3]=12; y = 2 * a[i].
const char* kStimulus = "cycle,F.sensor\n0,5\n3,7\n";

struct Plant {
  TempDir dir;
  std::string trace, source;
};

const Plant& plant() {
  static std::unique_ptr<Plant> p = [] {
    auto w = std::make_unique<Plant>();
    w->source = w->dir.file("plant.st");
    std::ofstream(w->source) << kPlant;
    std::ofstream(w->dir.file("plant.csv")) << kStimulus;
    w->trace = w->dir.file("plant.trace");
    const test::ShellResult r =
        runScanback("run --quiet " + shellQuote(w->source) + " --cycles 8 --keyframe-every 4 --record " +
                    shellQuote(w->trace) + " --inputs " + shellQuote(w->dir.file("plant.csv")));
    EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
    return w;
  }();
  return *p;
}

json why(const std::string& args) {
  const test::ShellResult r = runScanback("trace why " + shellQuote(plant().trace) + " " + args + " --json");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  return json::parse(r.out, nullptr, false);
}

// A statement node: {value, variable, cycle, step, file, line, text, origin, reads}.
json stmt(const std::string& variable, const std::string& value, uint64_t cycle, uint64_t step, int line,
          const std::string& text, json reads = json::array()) {
  return json{{"value", value}, {"variable", variable},   {"cycle", cycle},
              {"step", step},   {"file", plant().source}, {"line", line},
              {"text", text},   {"origin", "statement"},  {"reads", std::move(reads)}};
}
json leaf(const std::string& variable, const std::string& value, uint64_t cycle, uint64_t step,
          const std::string& origin) {
  return json{{"value", value}, {"variable", variable}, {"cycle", cycle},
              {"step", step},   {"origin", origin},     {"reads", json::array()}};
}
// An external write's node, which names who made it (ImageWrite.author).
json written(const std::string& variable, const std::string& value, uint64_t cycle, const std::string& author) {
  return json{{"value", value},       {"variable", variable}, {"cycle", cycle},        {"step", 0},
              {"origin", "stimulus"}, {"author", author},     {"reads", json::array()}};
}

}  // namespace

TEST(WhyChain, BackThroughFunctionBlockReferenceArrayAndTasksToTheStimulus) {
  const json root = why("S.y --depth 6");
  ASSERT_FALSE(root.is_discarded());
  // y (cycle 7) <- fb.out <- fb.in <- p^ = a[3] <- g (written by the other task, cycle 6) <- the
  // stimulus's sensor (cycle 3) and k; a[3]'s index i <- i of cycle 4; p <- the same i, shown once.
  json i7 =
      stmt("S.i", "3", 7, 0, 25, "i := (i + 1) MOD 4", json::array({stmt("S.i", "2", 4, 0, 25, "i := (i + 1) MOD 4")}));
  json repeatedI = stmt("S.i", "3", 7, 0, 25, "i := (i + 1) MOD 4");
  repeatedI["repeated"] = true;
  const json g = stmt("g", "12", 6, 1, 14, "g := sensor + k",
                      json::array({written("F.sensor", "7", 3, "stimulus"), stmt("F.k", "5", 6, 0, 13, "k := k + 1")}));
  const json a3 = stmt("S.a[3]", "12", 7, 1, 26, "a[i] := g", json::array({i7, g}));
  const json p = stmt("S.p", "REF(S.a[3])", 7, 2, 27, "p := REF(a[i])", json::array({repeatedI}));
  const json expected =
      stmt("S.y", "24", 7, 5, 29, "y := fb.out",
           json::array({stmt("S.fb.out", "24", 7, 4, 8, "out := in * 2",
                             json::array({stmt("S.fb.in", "12", 7, 3, 28, "fb(in := p^)", json::array({a3, p}))}))}));
  EXPECT_EQ(root, expected) << root.dump(2) << "\nexpected\n" << expected.dump(2);
}

TEST(WhyChain, DepthAndPositionBoundTheTree) {
  // At the end of cycle 4: y = 2 * a[2] = 20; three levels stop at fb.in, whose reads are not
  // followed.
  const json root = why("S.y --at 4 --depth 3");
  const json expected = stmt("S.y", "20", 4, 5, 29, "y := fb.out",
                             json::array({stmt("S.fb.out", "20", 4, 4, 8, "out := in * 2",
                                               json::array({stmt("S.fb.in", "10", 4, 3, 28, "fb(in := p^)")}))}));
  EXPECT_EQ(root, expected) << root.dump(2);
}

TEST(WhyChain, RootsAtInputsAndInitialValues) {
  // The stimulus wrote sensor at cycle 3 (5 -> 7) and at cycle 0 (0 -> 5).
  EXPECT_EQ(why("F.sensor"), written("F.sensor", "7", 3, "stimulus"));
  EXPECT_EQ(why("F.sensor --at 2"), written("F.sensor", "5", 0, "stimulus"));
  // a[0] is never written (i runs 1, 2, 3): the value the recording started with.
  EXPECT_EQ(why("S.a[0] --depth 5"), leaf("S.a[0]", "0", 0, 0, "initial"));
}

TEST(WhyChain, TextTreeAndErrors) {
  const Plant& w = plant();
  test::ShellResult r = runScanback("trace why " + shellQuote(w.trace) + " S.fb.in --depth 2");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "S.fb.in = 12  <- " + w.source + ":28  fb(in := p^)  at 7:3\n" + "  S.a[3] = 12  <- " + w.source +
                       ":26  a[i] := g  at 7:1\n" + "  S.p = REF(S.a[3])  <- " + w.source +
                       ":27  p := REF(a[i])  at 7:2\n")
      << r.out;
  // A value a stimulus file wrote: the text names it.
  r = runScanback("trace why " + shellQuote(w.trace) + " g --at 6 --depth 2");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  F.sensor = 7  <- external write at the cycle start (stimulus)  at 3:0\n"), std::string::npos)
      << r.out;
  // Depth 1 without --json keeps the list of the last changes.
  r = runScanback("trace why " + shellQuote(w.trace) + " S.i");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("last 3 changes, newest first:"), std::string::npos) << r.out;
  r = runScanback("trace why " + shellQuote(w.trace) + " S.nothing --depth 3");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("unknown variable S.nothing"), std::string::npos) << r.err;
  r = runScanback("trace why " + shellQuote(w.trace) + " S.y --depth 0");
  EXPECT_EQ(r.exitCode, 2) << r.out;
}

// External writes recorded with who made them, and one without (as every trace recorded before
// ImageWrite.author was): `trace why` names each, and says of the one without what it may be.
TEST(WhyChain, NamesWhoMadeAnExternalWriteAndWhatAWriteOfAnOlderTraceMayBe) {
  TempDir dir;
  const std::string source = dir.file("main.st");
  std::ofstream(source) << "PROGRAM Main\nVAR a : INT; b : INT; c : INT; out : INT; END_VAR\n"
                           "out := a + b + c;\nEND_PROGRAM\n";
  const std::shared_ptr<const Program> program = test::mustCompileSourceFiles({source});
  ASSERT_TRUE(program);
  std::string error;
  auto offsetOf = [&](const char* path) {
    const std::optional<VariableLocation> v = findVariable(*program, path, error);
    EXPECT_TRUE(v) << error;
    return v ? v->offset : 0;
  };
  const std::string trace = dir.file("writes.trace");
  {
    Runtime rt(program);
    std::unique_ptr<recorder::Recorder> rec = test::startRecording(rt, test::recordingTo(trace, 4));
    ASSERT_TRUE(rec);
    for (uint64_t c = 0; c < 6; ++c) {
      // Cycle 1: a written by no one the trace names (ExternalWrite's author left Unknown, as
      // every writer before it); cycle 2: b by a debugger; cycle 3: c, a force a rerun wrote.
      if (c == 1) rt.queueWrite(ExternalWrite{offsetOf("Main.a"), -1, {1, 0}});
      if (c == 2) rt.queueWrite(ExternalWrite{offsetOf("Main.b"), -1, {20, 0}, WriteAuthor::Debugger});
      if (c == 3) rt.queueWrite(ExternalWrite{offsetOf("Main.c"), -1, {44, 1}, WriteAuthor::Force});
      ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    }
    ASSERT_TRUE(test::finishRecording(*rec));
  }
  // out = 1 + 20 + 300 since (3, 0), where `out := a + b + c` read the three writes.
  test::ShellResult r = runScanback("trace why " + shellQuote(trace) + " Main.out --depth 2");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "Main.out = 321  <- " + source + ":3  out := a + b + c  at 3:0\n" +
                "  Main.a = 1  <- external write at the cycle start (stimulus or a write between cycles)  at 1:0\n" +
                "  Main.b = 20  <- external write at the cycle start (debugger)  at 2:0\n" +
                "  Main.c = 300  <- external write at the cycle start (a force of the rerun recording)  at 3:0\n")
      << r.out;
  r = runScanback("trace why " + shellQuote(trace) + " Main.out --depth 2 --json");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  const json root = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(root.is_object()) << r.out;
  ASSERT_EQ(root["reads"].size(), 3u) << r.out;
  EXPECT_FALSE(root["reads"][0].contains("author")) << r.out;
  EXPECT_EQ(root["reads"][0]["origin"], "stimulus");
  EXPECT_EQ(root["reads"][1]["author"], "debugger");
  EXPECT_EQ(root["reads"][2]["author"], "force");
  // The dump names them too (the write without one as before).
  r = runScanback("trace dump " + shellQuote(trace) + " --cycles 0..5");
  EXPECT_NE(r.out.find(" by debugger"), std::string::npos) << r.out << r.err;
}

TEST(LogOverHistory, EveryRunWithItsPositionAndValues) {
  const Plant& w = plant();
  // `a[i] := g` runs at step 1 of every Slow cycle (1, 4, 7), with i already incremented and g
  // the last Fast cycle's.
  test::ShellResult r = runScanback("trace log " + shellQuote(w.trace) + " plant.st:26 'a[{i}] gets {g}'");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "1:1  a[1] gets 6\n4:1  a[2] gets 10\n7:1  a[3] gets 12\n");
  // In the function block, in each of its runs (cycles 1, 4, 7 at step 4).
  r = runScanback("trace log " + shellQuote(w.trace) + " " + shellQuote(w.source + ":8") + " 'in={in}' --cycles 2..7");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "4:4  in=10\n7:4  in=12\n");
  r = runScanback("trace log " + shellQuote(w.trace) + " plant.st:13 'k={k}' --limit 2");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "0:0  k=0\n2:0  k=1\n");
  EXPECT_NE(r.err.find("stopped after 2 messages"), std::string::npos) << r.err;
  // Bad input: a line without a statement, a file not in the trace, an unknown name.
  r = runScanback("trace log " + shellQuote(w.trace) + " plant.st:4 'x'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("plant.st:4: no statement starts on that line"), std::string::npos) << r.err;
  r = runScanback("trace log " + shellQuote(w.trace) + " other.st:4 'x'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("other.st is not a source of the trace"), std::string::npos) << r.err;
  r = runScanback("trace log " + shellQuote(w.trace) + " plant.st:26 '{nothing}'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("nothing"), std::string::npos) << r.err;
}
