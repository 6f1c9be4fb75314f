// FOR loops whose back edge runs the following iterations itself (FORINCE/FORNEXTE, issue 17):
// a body that is one element store at the control variable, or an IF on a BOOL element at it.
// Every test compares the VM without an observer (where the back edge runs ahead) with the same
// program under an observer that never pauses (where every iteration passes its statement
// boundary in the ordinary code): the same image, steps, faults, statement logs and watchdog
// faults at every budget.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/vm/test_support.h"

namespace scanback {
namespace {

using test::mustCompile;
using test::valueOf;

class Passive : public VmObserver {
 public:
  bool onStatement(uint32_t statement, uint64_t) override {
    statements.push_back(statement);
    return false;
  }
  std::vector<uint32_t> statements;
};

bool hasOp(const Program& p, Op op) {
  for (uint32_t pou = 0; pou < p.pous.size(); ++pou) {
    if (p.pous[pou].kind == PouKind::Native) continue;
    for (const test::Instruction& i : test::decodePou(p, pou))
      if (i.op == op) return true;
  }
  return false;
}

struct RunOutcome {
  RunStatus status = RunStatus::CycleDone;
  std::vector<uint8_t> image;
  uint64_t steps = 0;
  FaultCode fault = FaultCode::None;
  uint32_t faultPc = 0;
  uint32_t faultStatement = UINT32_MAX;
  std::string detail;
  std::vector<uint32_t> log;
  bool logOverflow = false;
};

// Runs `cycles` cycles (stopping at a fault) with a statement log of `logSize` entries.
RunOutcome runVm(const std::shared_ptr<const Program>& p, bool observed, uint64_t budget, int cycles = 2,
                 size_t logSize = 1 << 16) {
  Vm vm(p);
  Passive observer;
  if (observed) vm.setObserver(&observer);
  vm.setStatementBudget(budget);
  std::vector<uint32_t> log(logSize);
  vm.setStatementLog(log.data(), log.data() + log.size());
  RunOutcome out;
  for (int c = 0; c < cycles; ++c) {
    vm.rewindStatementLog();
    vm.beginCycle(0, c * 10'000'000LL);
    out.status = vm.run();
    if (out.status != RunStatus::CycleDone) break;
  }
  out.image.assign(vm.image(), vm.image() + vm.imageSize());
  out.steps = vm.steps();
  out.fault = vm.fault().code;
  out.faultPc = vm.fault().pc;
  out.faultStatement = vm.fault().statement;
  out.detail = vm.fault().detail;
  out.log.assign(vm.statementLogBegin(), vm.statementLogEnd());
  out.logOverflow = vm.statementLogOverflowed();
  return out;
}

void expectSame(const RunOutcome& a, const RunOutcome& b, const std::string& what) {
  EXPECT_EQ(a.status, b.status) << what;
  EXPECT_TRUE(a.image == b.image) << what << ": the images differ";
  EXPECT_EQ(a.steps, b.steps) << what;
  EXPECT_EQ(a.fault, b.fault) << what;
  EXPECT_EQ(a.faultPc, b.faultPc) << what;
  EXPECT_EQ(a.faultStatement, b.faultStatement) << what;
  EXPECT_EQ(a.detail, b.detail) << what;
  EXPECT_EQ(a.log, b.log) << what;
  EXPECT_EQ(a.logOverflow, b.logOverflow) << what;
}

// Without and with an observer; then with every budget below the cycle's statement count (the
// watchdog faults at the same statement with the same image), and with logs that fill up inside a
// loop.
void expectEquivalent(const std::string& source, Op expectedOp, int cycles = 2) {
  SCOPED_TRACE(source);
  auto p = mustCompile(source);
  ASSERT_TRUE(p);
  EXPECT_TRUE(hasOp(*p, expectedOp)) << "not run ahead:\n" << disassemble(*p);
  const RunOutcome fast = runVm(p, false, Vm::kDefaultStatementBudget, cycles);
  const RunOutcome slow = runVm(p, true, Vm::kDefaultStatementBudget, cycles);
  expectSame(fast, slow, "default budget");
  const uint64_t total = runVm(p, false, Vm::kDefaultStatementBudget, 1).steps;
  for (uint64_t budget = 1; budget <= total + 1; ++budget)
    expectSame(runVm(p, false, budget, 1), runVm(p, true, budget, 1), "budget " + std::to_string(budget));
  for (size_t logSize : {size_t{0}, size_t{1}, size_t{3}, size_t{7}, static_cast<size_t>(total / 2)})
    expectSame(runVm(p, false, Vm::kDefaultStatementBudget, 1, logSize),
               runVm(p, true, Vm::kDefaultStatementBudget, 1, logSize), "log of " + std::to_string(logSize));
}

TEST(LoopAhead, ElementStoresOfEveryWidthAndStep) {
  expectEquivalent(R"(PROGRAM Main
VAR flags : ARRAY[0..40] OF BOOL; w : ARRAY[-5..20] OF INT; d : ARRAY[1..30] OF DINT;
    l : ARRAY[0..9] OF LREAL; i : DINT; n : DINT; v : INT := 7; x : LREAL := 2.5; END_VAR
n := n + 1;
FOR i := 0 TO 40 DO flags[i] := TRUE; END_FOR;
FOR i := n * n TO 40 BY n + 1 DO flags[i] := FALSE; END_FOR;
FOR i := 20 TO -5 BY -3 DO w[i] := v; END_FOR;
FOR i := 1 TO 30 BY 2 DO d[i] := n; END_FOR;
FOR i := 9 TO 0 BY -1 DO l[i] := x; END_FOR;
FOR i := 5 TO 4 DO d[i] := 99; END_FOR;
END_PROGRAM
)",
                   Op::FORINCE_I32);
}

TEST(LoopAhead, IntControlVariableUpToItsMaximumWraps) {
  const char* src = R"(PROGRAM Main
VAR a : ARRAY[32760..32767] OF SINT; i : INT; after : INT; c : SINT := -3; END_VAR
FOR i := 32760 TO 32767 DO a[i] := c; END_FOR;
after := i;
END_PROGRAM
)";
  expectEquivalent(src, Op::FORINCE_I16);
  test::Running r = test::run(src);
  EXPECT_EQ(r["Main.after"], "-32768");
  EXPECT_EQ(r["Main.a[32767]"], "-3");
}

TEST(LoopAhead, IntControlVariableWithASteppedLoop) {
  expectEquivalent(R"(PROGRAM Main
VAR a : ARRAY[0..100] OF WORD; i : INT; s : INT := 7; END_VAR
FOR i := 2 TO 100 BY s DO a[i] := 16#BEEF; END_FOR;
FOR i := 100 TO 0 BY -s DO a[i] := 16#0102; END_FOR;
END_PROGRAM
)",
                   Op::FORNEXTE_I16);
}

// An index out of range in the middle of a loop faults at the store, after the iterations before it,
// with the state the ordinary code leaves.
TEST(LoopAhead, IndexOutOfRangeInTheMiddleFaultsAtTheStore) {
  const char* src = R"(PROGRAM Main
VAR a : ARRAY[0..9] OF DINT; i : DINT; END_VAR
FOR i := 3 TO 12 DO
  a[i] := 5;
END_FOR;
END_PROGRAM
)";
  expectEquivalent(src, Op::FORINCE_I32, 1);
  test::Running r = test::run(src);
  ASSERT_EQ(r.status, RunStatus::Faulted);
  EXPECT_EQ(r.rt->vm().fault().code, FaultCode::IndexOutOfRange);
  EXPECT_EQ(r.program->statement(r.rt->vm().fault().statement).span.line, 4u);
  EXPECT_EQ(r["Main.i"], "10");
  EXPECT_EQ(r["Main.a[9]"], "5");
  EXPECT_EQ(r["Main.a[2]"], "0");
  // Below the lower bound at the start, and stepping down past it.
  expectEquivalent(
      "PROGRAM Main VAR a : ARRAY[0..9] OF DINT; i : DINT; END_VAR\n"
      "FOR i := -2 TO 5 DO a[i] := 1; END_FOR; END_PROGRAM\n",
      Op::FORINCE_I32, 1);
  expectEquivalent(
      "PROGRAM Main VAR a : ARRAY[0..9] OF DINT; i : DINT; END_VAR\n"
      "FOR i := 9 TO -9 BY -4 DO a[i] := 1; END_FOR; END_PROGRAM\n",
      Op::FORNEXTE_I32, 1);
}

// IF flags[i] THEN ... END_IF: the back edge skips the iterations whose condition is false.
TEST(LoopAhead, SkippedIterationsOfAnIfOnAnElement) {
  const char* src = R"(PROGRAM Main
VAR flags : ARRAY[0..63] OF BOOL; i : DINT; count : DINT; sum : DINT; j : INT; k : INT; END_VAR
FOR i := 0 TO 63 DO flags[i] := (i MOD 7 = 0) OR (i MOD 11 = 3); END_FOR;
count := 0;
FOR i := 0 TO 63 DO
  IF flags[i] THEN
    count := count + 1;
    sum := sum + i;
    flags[i] := i < 30;
  END_IF;
END_FOR;
FOR j := 63 TO 0 BY -2 DO
  IF flags[j] THEN
    k := k + j;
  END_IF;
END_FOR;
END_PROGRAM
)";
  expectEquivalent(src, Op::FORINCE_I32);
  auto p = mustCompile(src);
  EXPECT_TRUE(hasOp(*p, Op::FORNEXTE_I16)) << disassemble(*p);
}

TEST(LoopAhead, SkippingUpToAnIndexOutOfRangeFaultsAtTheIf) {
  const char* src = R"(PROGRAM Main
VAR flags : ARRAY[0..9] OF BOOL; i : DINT; n : DINT; END_VAR
FOR i := 0 TO 20 DO
  IF flags[i] THEN
    n := n + 1;
  END_IF;
END_FOR;
END_PROGRAM
)";
  expectEquivalent(src, Op::FORINCE_I32, 1);
  test::Running r = test::run(src);
  ASSERT_EQ(r.status, RunStatus::Faulted);
  EXPECT_EQ(r.rt->vm().fault().code, FaultCode::IndexOutOfRange);
  EXPECT_EQ(r.program->statement(r.rt->vm().fault().statement).span.line, 4u);
  EXPECT_EQ(r["Main.i"], "10");
  EXPECT_EQ(r.rt->vm().steps(), 12u);  // the FOR and 11 IFs
}

// A store that changes the loop's own control variable, limit or step, or that stores the control
// variable, is left to the ordinary code (the results are those of running it statement by
// statement).
TEST(LoopAhead, StoresThatTouchTheLoopAreLeftToTheOrdinaryCode) {
  const char* src = R"(PROGRAM Main
VAR a : ARRAY[0..20] OF DINT; i : DINT; END_VAR
FOR i := 0 TO 20 DO a[i] := i; END_FOR;
END_PROGRAM
)";
  expectEquivalent(src, Op::FORINCE_I32);
  test::Running r = test::run(src);
  EXPECT_EQ(r["Main.a[0]"], "0");
  EXPECT_EQ(r["Main.a[17]"], "17");
  EXPECT_EQ(r["Main.a[20]"], "20");
  // The source an element of the array itself: read again for every element.
  expectEquivalent(R"(PROGRAM Main
VAR a : ARRAY[0..20] OF DINT; i : DINT; END_VAR
a[3] := 42;
FOR i := 0 TO 20 DO a[i] := a[3]; END_FOR;
a[3] := 43;
FOR i := 20 TO 0 BY -1 DO a[i] := a[3]; END_FOR;
END_PROGRAM
)",
                   Op::FORINCE_I32);
}

// Pausing at every statement (the debugger's stepping) and resuming gives a fresh run's result.
TEST(LoopAhead, PausingAtEveryStatementGivesTheSameResult) {
  auto p = mustCompile(R"(PROGRAM Main
VAR flags : ARRAY[0..99] OF BOOL; i : DINT; n : DINT; END_VAR
FOR i := 0 TO 99 DO flags[i] := TRUE; END_FOR;
FOR i := 4 TO 99 BY 2 DO flags[i] := FALSE; END_FOR;
FOR i := 0 TO 99 DO IF flags[i] THEN n := n + i; END_IF; END_FOR;
END_PROGRAM
)");
  ASSERT_TRUE(p);
  struct Stepper : VmObserver {
    bool onStatement(uint32_t, uint64_t) override { return true; }
  } stepper;
  Vm stepped(p), fresh(p);
  stepped.setObserver(&stepper);
  for (int c = 0; c < 2; ++c) {
    stepped.beginCycle(0, c * 10'000'000LL);
    fresh.beginCycle(0, c * 10'000'000LL);
    int pauses = 0;
    while (stepped.run() == RunStatus::Paused) ++pauses;
    ASSERT_EQ(fresh.run(), RunStatus::CycleDone);
    EXPECT_EQ(static_cast<uint64_t>(pauses), fresh.steps());
    EXPECT_EQ(stepped.steps(), fresh.steps());
    EXPECT_EQ(0, std::memcmp(stepped.image(), fresh.image(), fresh.imageSize()));
  }
  // The odd numbers below 100 (2500), and 0 and 2, in each of the two cycles.
  EXPECT_EQ(valueOf(fresh, "Main.n"), "5004");
}

}  // namespace
}  // namespace scanback
