// Hot reload in the runtime: a new program version takes over at a cycle boundary and keeps the
// values of the variables whose name and type are unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/vm/test_support.h"
#include "vm/runtime/reload.h"

namespace scanback {
namespace {

using test::mustCompile;
using test::runCycles;
using test::valueOf;

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Reloads `rt` with `text`; the plan is returned for inspection.
ReloadPlan reload(Runtime& rt, const std::string& text, size_t* dropped = nullptr) {
  auto next = mustCompile(text);
  EXPECT_TRUE(next);
  if (!next) return {};
  EXPECT_EQ(reloadBlocker(rt.program(), *next), "");
  ReloadPlan plan = planReload(rt.program(), *next);
  const size_t lost = rt.replaceProgram(next, plan);
  if (dropped) *dropped = lost;
  return plan;
}

const char* kCounter =
    "VAR_GLOBAL total : DINT; END_VAR\n"
    "PROGRAM Main\nVAR n : INT; step : INT := 1; name : STRING := 'a'; END_VAR\n"
    "n := n + step; total := total + 1;\nEND_PROGRAM\n";

TEST(Reload, TheSameProgramKeepsEveryValueAndTheClockGoesOn) {
  Runtime rt(mustCompile(kCounter));
  ASSERT_EQ(runCycles(rt, 5), RunStatus::CycleDone);
  const CycleStart before = rt.nextCycle();
  const ReloadPlan plan = reload(rt, kCounter);
  EXPECT_TRUE(plan.reset.empty()) << plan.reset.front();
  EXPECT_TRUE(plan.removed.empty());
  EXPECT_GE(plan.kept, 4u);
  EXPECT_EQ(valueOf(rt, "Main.n"), "5");
  EXPECT_EQ(valueOf(rt, "total"), "5");
  EXPECT_EQ(rt.nextCycle().cycle, before.cycle);
  EXPECT_EQ(rt.nextCycle().startNs, before.startNs);
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.n"), "6");
  EXPECT_EQ(rt.cycle(), 6u);
}

TEST(Reload, NewCodeRunsWithKeptValuesNewVariablesStartFromTheirInitialValueChangedTypesReset) {
  Runtime rt(mustCompile(kCounter));
  ASSERT_EQ(runCycles(rt, 3), RunStatus::CycleDone);
  const ReloadPlan plan = reload(rt,
                                 "VAR_GLOBAL total : DINT; END_VAR\n"
                                 "PROGRAM Main\nVAR n : INT; step : DINT := 10; added : INT := 7; END_VAR\n"
                                 "n := n + 100; total := total + 1;\nEND_PROGRAM\n");
  EXPECT_TRUE(contains(plan.reset, "Main.added (new)"));
  EXPECT_TRUE(contains(plan.reset, "Main.step (INT -> DINT)"));
  EXPECT_TRUE(contains(plan.removed, "Main.name"));
  EXPECT_EQ(valueOf(rt, "Main.n"), "3");
  EXPECT_EQ(valueOf(rt, "Main.step"), "10");
  EXPECT_EQ(valueOf(rt, "Main.added"), "7");
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.n"), "103");
  EXPECT_EQ(valueOf(rt, "total"), "4");
}

TEST(Reload, FunctionBlockInstancesKeepTheirStateFieldByFieldTimersIncluded) {
  const std::string before =
      "FUNCTION_BLOCK Counter\nVAR count : INT; END_VAR\ncount := count + 1;\nEND_FUNCTION_BLOCK\n"
      "PROGRAM Main\nVAR c : Counter; t : TON; start : BOOL := TRUE; END_VAR\n"
      "c(); t(IN := start, PT := T#1h);\nEND_PROGRAM\n";
  Runtime rt(mustCompile(before));
  ASSERT_EQ(runCycles(rt, 4), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.c.count"), "4");
  const std::string elapsed = valueOf(rt, "Main.t.ET");
  const ReloadPlan plan = reload(rt,
                                 "FUNCTION_BLOCK Counter\nVAR count : INT; extra : INT := 5; END_VAR\n"
                                 "count := count + extra;\nEND_FUNCTION_BLOCK\n"
                                 "PROGRAM Main\nVAR c : Counter; t : TON; start : BOOL := TRUE; END_VAR\n"
                                 "c(); t(IN := start, PT := T#1h);\nEND_PROGRAM\n");
  EXPECT_TRUE(contains(plan.reset, "Main.c.extra (new)"));
  EXPECT_EQ(valueOf(rt, "Main.c.count"), "4");
  EXPECT_EQ(valueOf(rt, "Main.t.ET"), elapsed);
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.c.count"), "9");
  // The timer did not restart: its elapsed time grew on from where it was.
  EXPECT_NE(valueOf(rt, "Main.t.ET"), "T#0s");
  EXPECT_NE(valueOf(rt, "Main.t.ET"), elapsed);
}

TEST(Reload, AnInstanceOfAnotherFunctionBlockTypeStartsAfresh) {
  Runtime rt(
      mustCompile("FUNCTION_BLOCK A\nVAR x : INT; END_VAR\nx := x + 1;\nEND_FUNCTION_BLOCK\n"
                  "FUNCTION_BLOCK B\nVAR x : INT; END_VAR\nx := x + 2;\nEND_FUNCTION_BLOCK\n"
                  "PROGRAM Main\nVAR f : A; END_VAR\nf();\nEND_PROGRAM\n"));
  ASSERT_EQ(runCycles(rt, 3), RunStatus::CycleDone);
  const ReloadPlan plan = reload(rt,
                                 "FUNCTION_BLOCK A\nVAR x : INT; END_VAR\nx := x + 1;\nEND_FUNCTION_BLOCK\n"
                                 "FUNCTION_BLOCK B\nVAR x : INT; END_VAR\nx := x + 2;\nEND_FUNCTION_BLOCK\n"
                                 "PROGRAM Main\nVAR f : B; END_VAR\nf();\nEND_PROGRAM\n");
  EXPECT_TRUE(contains(plan.reset, "Main.f (A -> B)"));
  EXPECT_EQ(valueOf(rt, "Main.f.x"), "0");
}

TEST(Reload, AnArrayWithNewBoundsKeepsTheElementsBothVersionsHave) {
  Runtime rt(
      mustCompile("PROGRAM Main\nVAR a : ARRAY[1..4] OF INT; i : INT; END_VAR\n"
                  "FOR i := 1 TO 4 DO a[i] := i * 10; END_FOR;\nEND_PROGRAM\n"));
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  const ReloadPlan plan = reload(rt,
                                 "PROGRAM Main\nVAR a : ARRAY[3..6] OF INT; i : INT; END_VAR\n"
                                 "i := 0;\nEND_PROGRAM\n");
  EXPECT_EQ(plan.reset.size(), 1u);
  EXPECT_EQ(valueOf(rt, "Main.a[3]"), "30");
  EXPECT_EQ(valueOf(rt, "Main.a[4]"), "40");
  EXPECT_EQ(valueOf(rt, "Main.a[5]"), "0");
}

TEST(Reload, AnArrayOfStructsKeepsUnchangedFieldsOfEveryElement) {
  Runtime rt(
      mustCompile("TYPE Axis : STRUCT pos : INT; END_STRUCT END_TYPE\n"
                  "PROGRAM Main\nVAR a : ARRAY[0..2] OF Axis; END_VAR\n"
                  "a[0].pos := 1; a[1].pos := 2; a[2].pos := 3;\nEND_PROGRAM\n"));
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  const ReloadPlan plan = reload(rt,
                                 "TYPE Axis : STRUCT speed : REAL := 1.5; pos : INT; END_STRUCT END_TYPE\n"
                                 "PROGRAM Main\nVAR a : ARRAY[0..2] OF Axis; END_VAR\n"
                                 "a[0].speed := 2.0;\nEND_PROGRAM\n");
  // Reported once for the array, not once per element.
  EXPECT_EQ(plan.reset, std::vector<std::string>{"Main.a[*].speed (new)"});
  EXPECT_EQ(valueOf(rt, "Main.a[2].pos"), "3");
  EXPECT_EQ(valueOf(rt, "Main.a[1].speed"), "1.5");
}

TEST(Reload, AReferenceFollowsTheVariableItPointsAtToItsNewPlace) {
  Runtime rt(
      mustCompile("VAR_GLOBAL target : INT; END_VAR\n"
                  "PROGRAM Main\nVAR r : REF_TO INT; set : BOOL; END_VAR\n"
                  "IF NOT set THEN r := REF(target); set := TRUE; END_IF; r^ := r^ + 1;\nEND_PROGRAM\n"));
  ASSERT_EQ(runCycles(rt, 2), RunStatus::CycleDone);
  // A new global before `target` moves it.
  reload(rt,
         "VAR_GLOBAL first : ARRAY[0..9] OF INT; target : INT; END_VAR\n"
         "PROGRAM Main\nVAR r : REF_TO INT; set : BOOL; END_VAR\n"
         "IF NOT set THEN r := REF(first[0]); set := TRUE; END_IF; r^ := r^ + 1;\nEND_PROGRAM\n");
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone) << rt.faultMessage();
  EXPECT_EQ(valueOf(rt, "target"), "3");
  EXPECT_EQ(valueOf(rt, "first[0]"), "0");
}

TEST(Reload, AQueuedWriteMovesWithItsVariableAndOneToARemovedVariableIsDropped) {
  Runtime rt(mustCompile("PROGRAM Main\nVAR a : INT; b : INT; END_VAR\na := a;\nEND_PROGRAM\n"));
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  std::string error;
  const auto a = findVariable(rt.program(), "Main.a", error);
  const auto b = findVariable(rt.program(), "Main.b", error);
  ASSERT_TRUE(a && b);
  rt.queueWrite(ExternalWrite{a->offset, -1, {42, 0}});
  rt.queueWrite(ExternalWrite{b->offset, -1, {7, 0}});
  size_t dropped = 0;
  reload(rt, "PROGRAM Main\nVAR first : LINT; a : INT; END_VAR\na := a;\nEND_PROGRAM\n", &dropped);
  EXPECT_EQ(dropped, 1u);
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.a"), "42");
  EXPECT_EQ(valueOf(rt, "Main.first"), "0");
}

TEST(Reload, FieldInputsStayByAddressAndLocatedOutputsKeepTheirValueByName) {
  Runtime rt(mustCompile("PROGRAM Main\nVAR in AT %IW0 : INT; out AT %QW0 : INT; END_VAR\nout := in;\nEND_PROGRAM\n"));
  rt.inputs()[0] = 9;
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  reload(rt, "PROGRAM Main\nVAR in AT %IW0 : INT; out AT %QW2 : INT; END_VAR\nout := out + in;\nEND_PROGRAM\n");
  EXPECT_EQ(valueOf(rt, "Main.out"), "9");
  ASSERT_EQ(runCycles(rt, 1), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(rt, "Main.out"), "18");
  std::string error;
  const auto out = findVariable(rt.program(), "Main.out", error);
  ASSERT_TRUE(out) << error;
  const uint32_t at = out->offset - rt.program().output.offset;
  ASSERT_LT(at, rt.outputs().size());
  EXPECT_EQ(rt.outputs()[at], 18);
}

TEST(Reload, AChangedTaskTableIsRefusedWithWhatChanged) {
  auto withTask = [](const char* interval) {
    return mustCompile(std::string("PROGRAM P\nVAR n : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n"
                                   "CONFIGURATION C\n  TASK Fast (INTERVAL := ") +
                       interval + ", PRIORITY := 1);\n  PROGRAM Main WITH Fast : P;\nEND_CONFIGURATION\n");
  };
  auto a = withTask("T#10ms"), b = withTask("T#20ms");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(reloadBlocker(*a, *b), "the interval of task Fast changed (10000000 ns -> 20000000 ns)");
  auto implicit = mustCompile("PROGRAM Main\nVAR n : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n");
  EXPECT_NE(reloadBlocker(*a, *implicit).find("the tasks changed (Fast -> "), std::string::npos);
  EXPECT_EQ(reloadBlocker(*a, *a), "");
}

}  // namespace
}  // namespace scanback
