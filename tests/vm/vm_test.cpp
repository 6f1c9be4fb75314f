// The bytecode VM: the observer hook (statement boundaries, calls, pausing and resuming), the call
// stack while paused, the watchdog, runtime faults, reset, and sharing one Program between VMs.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/wait.h"
#include "tests/vm/test_support.h"

namespace scanback {
namespace {

using test::mustCompile;
using test::pouIndex;
using test::statementOnLine;
using test::valueOf;

// Line numbers matter below: the statements are on lines 3, 8, 12, 13 and 14.
const char* const kCallProgram =
    "FUNCTION Twice : INT\n"                    // 1
    "VAR_INPUT v : INT; END_VAR\n"              // 2
    "Twice := v * 2;\n"                         // 3
    "END_FUNCTION\n"                            // 4
    "FUNCTION_BLOCK Acc\n"                      // 5
    "VAR_INPUT inc : INT; END_VAR\n"            // 6
    "VAR_OUTPUT total : INT; END_VAR\n"         // 7
    "total := total + Twice(inc);\n"            // 8
    "END_FUNCTION_BLOCK\n"                      // 9
    "PROGRAM Main\n"                            // 10
    "VAR a : Acc; n : INT; i : INT; END_VAR\n"  // 11
    "n := n + 1;\n"                             // 12
    "FOR i := 1 TO 2 DO\n"                      // 13
    "  a(inc := i);\n"                          // 14
    "END_FOR;\n"                                // 15
    "END_PROGRAM\n";                            // 16

// Records every hook call as text; can pause at a chosen statement.
class Recorder : public VmObserver {
 public:
  explicit Recorder(const Program& p) : p_(p) {}
  bool onStatement(uint32_t statement, uint64_t step) override {
    const SourceSpan& s = p_.statement(statement).span;
    events.push_back("stmt " + std::to_string(s.line) + ":" + std::to_string(s.column) + " step " +
                     std::to_string(step));
    statements.push_back(statement);
    steps.push_back(step);
    return pauseWhen && pauseWhen(statement, step);
  }
  void onCall(uint32_t pou) override {
    events.push_back("call " + p_.pous.at(pou).name);
    stack.push_back(pou);
  }
  void onReturn(uint32_t pou) override {
    events.push_back("ret " + p_.pous.at(pou).name);
    if (stack.empty() || stack.back() != pou) unbalanced = true;
    if (!stack.empty()) stack.pop_back();
  }

  const Program& p_;
  std::vector<std::string> events;
  std::vector<uint32_t> statements;
  std::vector<uint64_t> steps;
  std::vector<uint32_t> stack;
  bool unbalanced = false;
  std::function<bool(uint32_t, uint64_t)> pauseWhen;
};

// ------------------------------------------------------------------ observer

TEST(VmObserver, StatementsAndCallsInExecutionOrder) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  Recorder rec(*p);
  vm.setObserver(&rec);
  for (int cycle = 0; cycle < 2; ++cycle) {
    rec.events.clear();
    vm.beginCycle(0, cycle * 10'000'000);
    ASSERT_EQ(vm.run(), RunStatus::CycleDone);
    const std::vector<std::string> expected = {
        "call Main",        "stmt 12:1 step 0", "stmt 13:1 step 1", "stmt 14:3 step 2", "call Acc",
        "stmt 8:1 step 3",  "call Twice",       "stmt 3:1 step 4",  "ret Twice",        "ret Acc",
        "stmt 14:3 step 5", "call Acc",         "stmt 8:1 step 6",  "call Twice",       "stmt 3:1 step 7",
        "ret Twice",        "ret Acc",          "ret Main",
    };
    EXPECT_EQ(rec.events, expected) << "cycle " << cycle;
    EXPECT_EQ(vm.steps(), 8u);
    EXPECT_FALSE(rec.unbalanced);
    EXPECT_TRUE(rec.stack.empty());
  }
  EXPECT_EQ(valueOf(vm, "Main.n"), "2");
  EXPECT_EQ(valueOf(vm, "Main.a.total"), "12");  // (2 + 4) per cycle
}

TEST(VmObserver, StatementIdsMatchTheirSpans) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  Recorder rec(*p);
  vm.setObserver(&rec);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::CycleDone);
  ASSERT_EQ(rec.statements.size(), 8u);
  const uint32_t lines[] = {12, 13, 14, 8, 3, 14, 8, 3};
  const char* pous[] = {"Main", "Main", "Main", "Acc", "Twice", "Main", "Acc", "Twice"};
  for (size_t i = 0; i < 8; ++i) {
    const StatementInfo& s = p->statement(rec.statements[i]);
    EXPECT_EQ(s.span.line, lines[i]) << i;
    EXPECT_EQ(p->pous.at(s.pou).name, pous[i]) << i;
    EXPECT_EQ(rec.steps[i], i);
    const Op op = static_cast<Op>(p->code.at(s.pc));
    EXPECT_TRUE(op == Op::STMT || isFused(op)) << opInfo(op).name;
    EXPECT_EQ(p->code.at(s.pc + 1), rec.statements[i]);
  }
  // Spans cover the whole statement: first token to the end of the statement.
  const SourceSpan& assign = p->statement(statementOnLine(*p, 12)).span;
  EXPECT_EQ(assign.column, 1u);
  EXPECT_EQ(assign.endLine, 12u);
  EXPECT_EQ(assign.endColumn, 11u);  // "n := n + 1" ends before the ';' (exclusive end)
  const SourceSpan& loop = p->statement(statementOnLine(*p, 13)).span;
  EXPECT_EQ(loop.endLine, 15u);
  const SourceSpan& call = p->statement(statementOnLine(*p, 14)).span;
  EXPECT_EQ(call.column, 3u);
  EXPECT_EQ(call.endColumn, 14u);
}

TEST(VmObserver, NoObserverGivesTheSameStepsAndState) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm plain(p), observed(p);
  Recorder rec(*p);
  observed.setObserver(&rec);
  for (int cycle = 0; cycle < 3; ++cycle) {
    plain.beginCycle(0, cycle * 10'000'000);
    observed.beginCycle(0, cycle * 10'000'000);
    ASSERT_EQ(plain.run(), RunStatus::CycleDone);
    ASSERT_EQ(observed.run(), RunStatus::CycleDone);
    EXPECT_EQ(plain.steps(), observed.steps()) << "cycle " << cycle;
    EXPECT_EQ(plain.steps(), 8u);
    EXPECT_EQ(0, std::memcmp(plain.image(), observed.image(), plain.imageSize())) << "cycle " << cycle;
  }
}

TEST(VmObserver, PauseShowsTheCallStackAndResumesWithoutRepeatingTheStatement) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  Recorder rec(*p);
  const uint32_t inTwice = statementOnLine(*p, 3);
  bool paused = false;
  rec.pauseWhen = [&](uint32_t s, uint64_t) {
    if (s != inTwice || paused) return false;
    paused = true;
    return true;
  };
  vm.setObserver(&rec);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::Paused);
  EXPECT_TRUE(vm.inCycle());
  EXPECT_EQ(vm.pausedStatement(), inTwice);
  EXPECT_EQ(rec.steps.back(), 4u);
  EXPECT_EQ(vm.steps(), 5u);  // boundaries passed, the paused one included

  const std::vector<Frame> frames = vm.frames();
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(p->pous.at(frames[0].pou).name, "Main");
  EXPECT_EQ(p->pous.at(frames[1].pou).name, "Acc");
  EXPECT_EQ(p->pous.at(frames[2].pou).name, "Twice");
  std::string err;
  auto main = findVariable(*p, "Main", err);
  auto acc = findVariable(*p, "Main.a", err);
  ASSERT_TRUE(main && acc) << err;
  EXPECT_EQ(frames[0].thisOffset, main->offset);
  EXPECT_EQ(frames[1].thisOffset, acc->offset);
  EXPECT_EQ(p->statement(vm.frameStatement(frames, 0)).span.line, 14u);
  EXPECT_EQ(p->statement(vm.frameStatement(frames, 1)).span.line, 8u);
  EXPECT_EQ(vm.frameStatement(frames, 2), inTwice);
  // The function's argument is visible in its frame.
  const PouInfo& twice = p->pous.at(frames[2].pou);
  ASSERT_FALSE(twice.frameVariables.empty());
  const Variable* v = nullptr;
  for (const Variable& fv : twice.frameVariables)
    if (equalsIgnoreCase(fv.name, "v")) v = &fv;
  ASSERT_TRUE(v);
  EXPECT_EQ(formatValue(*p, vm.memory(), frames[2].frameOffset + v->offset, -1, *v->type), "1");

  // Resuming runs the paused statement without reporting it again.
  const size_t before = rec.statements.size();
  ASSERT_EQ(vm.run(), RunStatus::CycleDone);
  ASSERT_GT(rec.statements.size(), before);
  EXPECT_EQ(p->statement(rec.statements[before]).span.line, 14u);
  EXPECT_EQ(rec.steps[before], 5u);
  EXPECT_EQ(rec.statements.size(), 8u);
  EXPECT_EQ(vm.steps(), 8u);
  EXPECT_EQ(vm.pausedStatement(), UINT32_MAX);
  EXPECT_TRUE(vm.frames().empty());
  EXPECT_FALSE(rec.unbalanced);
  EXPECT_EQ(valueOf(vm, "Main.a.total"), "6");
}

TEST(VmObserver, SteppingThroughEveryStatement) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm stepped(p), plain(p);
  Recorder rec(*p);
  rec.pauseWhen = [](uint32_t, uint64_t) { return true; };
  stepped.setObserver(&rec);
  for (int cycle = 0; cycle < 2; ++cycle) {
    rec.statements.clear();
    rec.steps.clear();
    stepped.beginCycle(0, 0);
    plain.beginCycle(0, 0);
    ASSERT_EQ(plain.run(), RunStatus::CycleDone);
    int pauses = 0;
    RunStatus s;
    while ((s = stepped.run()) == RunStatus::Paused) {
      ++pauses;
      ASSERT_EQ(stepped.pausedStatement(), rec.statements.back());
      ASSERT_LE(pauses, 100);
    }
    EXPECT_EQ(s, RunStatus::CycleDone);
    EXPECT_EQ(pauses, 8);
    EXPECT_EQ(rec.steps, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(stepped.steps(), plain.steps());
    EXPECT_EQ(0, std::memcmp(stepped.image(), plain.image(), plain.imageSize()));
  }
}

TEST(VmObserver, PauseAtTheFirstStatementOfTheCycle) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  Recorder rec(*p);
  rec.pauseWhen = [](uint32_t, uint64_t step) { return step == 0; };
  vm.setObserver(&rec);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::Paused);
  EXPECT_EQ(p->statement(vm.pausedStatement()).span.line, 12u);
  const std::vector<Frame> frames = vm.frames();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(p->pous.at(frames[0].pou).name, "Main");
  EXPECT_EQ(valueOf(vm, "Main.n"), "0");  // not executed yet
  ASSERT_EQ(vm.run(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(vm, "Main.n"), "1");
}

// An observer may uninstall itself; the rest of the cycle runs at full speed.
class Detacher : public VmObserver {
 public:
  explicit Detacher(Vm& vm) : vm_(vm) {}
  bool onStatement(uint32_t, uint64_t) override {
    if (++seen == 3) vm_.setObserver(nullptr);
    return false;
  }
  Vm& vm_;
  int seen = 0;
};

TEST(VmObserver, ObserverCanRemoveItself) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  Detacher d(vm);
  vm.setObserver(&d);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::CycleDone);
  EXPECT_EQ(d.seen, 3);
  EXPECT_EQ(vm.steps(), 8u);
  EXPECT_EQ(vm.observer(), nullptr);
}

// ------------------------------------------------------------------ statement log

std::vector<uint32_t> loggedStatements(const Vm& vm) {
  return std::vector<uint32_t>(vm.statementLogBegin(), vm.statementLogEnd());
}

// The log holds every boundary passed, in order: the observer's sequence, whether the VM runs
// with no observer, with one, or paused at every statement.
TEST(VmStatementLog, LogsEveryBoundaryWithAndWithoutAnObserver) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm observed(p), logged(p), both(p);
  Recorder rec(*p), pausing(*p);
  pausing.pauseWhen = [](uint32_t, uint64_t) { return true; };
  observed.setObserver(&rec);
  both.setObserver(&pausing);
  std::vector<uint32_t> log1(64), log2(64);
  logged.setStatementLog(log1.data(), log1.data() + log1.size());
  both.setStatementLog(log2.data(), log2.data() + log2.size());
  for (int cycle = 0; cycle < 2; ++cycle) {
    rec.statements.clear();
    logged.rewindStatementLog();
    both.rewindStatementLog();
    for (Vm* vm : {&observed, &logged, &both}) vm->beginCycle(0, cycle * 10'000'000);
    ASSERT_EQ(observed.run(), RunStatus::CycleDone);
    ASSERT_EQ(logged.run(), RunStatus::CycleDone);
    int pauses = 0;
    while (both.run() == RunStatus::Paused) ASSERT_LT(++pauses, 100);
    EXPECT_EQ(pauses, 8);
    ASSERT_EQ(rec.statements.size(), 8u);
    EXPECT_EQ(loggedStatements(logged), rec.statements) << "cycle " << cycle;
    EXPECT_EQ(loggedStatements(both), rec.statements) << "cycle " << cycle;
    EXPECT_FALSE(logged.statementLogOverflowed());
    EXPECT_FALSE(both.statementLogOverflowed());
  }
}

// A log that fills up keeps its first entries, reports the overflow and does not stop the VM.
TEST(VmStatementLog, AFullLogKeepsItsEntriesAndReportsTheOverflow) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm full(p), small(p);
  std::vector<uint32_t> fullLog(64), smallLog(3);
  full.setStatementLog(fullLog.data(), fullLog.data() + fullLog.size());
  small.setStatementLog(smallLog.data(), smallLog.data() + smallLog.size());
  for (Vm* vm : {&full, &small}) {
    vm->beginCycle(0, 0);
    ASSERT_EQ(vm->run(), RunStatus::CycleDone);
  }
  const std::vector<uint32_t> all = loggedStatements(full);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(loggedStatements(small), std::vector<uint32_t>(all.begin(), all.begin() + 3));
  EXPECT_TRUE(small.statementLogOverflowed());
  EXPECT_EQ(small.steps(), full.steps());
  EXPECT_EQ(0, std::memcmp(full.image(), small.image(), full.imageSize()));
  // Rewound, it logs the next cycle from its start again.
  small.rewindStatementLog();
  EXPECT_FALSE(small.statementLogOverflowed());
  small.beginCycle(0, 10'000'000);
  ASSERT_EQ(small.run(), RunStatus::CycleDone);
  EXPECT_EQ(loggedStatements(small), std::vector<uint32_t>(all.begin(), all.begin() + 3));
  EXPECT_TRUE(small.statementLogOverflowed());
}

// An exactly full log is not an overflow.
TEST(VmStatementLog, ALogOfExactlyTheCyclesSizeDoesNotOverflow) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  std::vector<uint32_t> log(8);
  vm.setStatementLog(log.data(), log.data() + log.size());
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::CycleDone);
  EXPECT_EQ(loggedStatements(vm).size(), 8u);
  EXPECT_FALSE(vm.statementLogOverflowed());
}

// ------------------------------------------------------------------ watchdog

const char* const kEndlessLoop =
    "PROGRAM Main\n"           // 1
    "VAR x : DINT; END_VAR\n"  // 2
    "x := 0;\n"                // 3
    "WHILE TRUE DO\n"          // 4
    "  x := x + 1;\n"          // 5
    "END_WHILE;\n"             // 6
    "END_PROGRAM\n";

TEST(VmWatchdog, EndlessLoopFaultsAtTheLoop) {
  auto p = mustCompile(kEndlessLoop);
  ASSERT_TRUE(p);
  for (bool withObserver : {false, true}) {
    Vm vm(p);
    Recorder rec(*p);
    if (withObserver) vm.setObserver(&rec);
    vm.setStatementBudget(1000);
    vm.beginCycle(0, 0);
    ASSERT_EQ(vm.run(), RunStatus::Faulted);
    EXPECT_EQ(vm.fault().code, FaultCode::Watchdog);
    ASSERT_LT(vm.fault().statement, p->statements.size());
    const uint32_t line = p->statement(vm.fault().statement).span.line;
    EXPECT_TRUE(line == 4 || line == 5) << "faulted at line " << line;
    EXPECT_EQ(vm.steps(), 1000u);
    EXPECT_NE(vm.fault().detail.find("1000"), std::string::npos) << vm.fault().detail;
    if (withObserver) {
      EXPECT_EQ(rec.statements.size(), 1000u);
    }
    // A faulted VM stays faulted.
    EXPECT_EQ(vm.run(), RunStatus::Faulted);
  }
}

TEST(VmWatchdog, BudgetIsExact) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  vm.setStatementBudget(8);  // the cycle passes exactly 8 boundaries
  vm.beginCycle(0, 0);
  EXPECT_EQ(vm.run(), RunStatus::CycleDone);
  Vm tight(p);
  tight.setStatementBudget(7);
  tight.beginCycle(0, 0);
  ASSERT_EQ(tight.run(), RunStatus::Faulted);
  EXPECT_EQ(tight.fault().code, FaultCode::Watchdog);
  EXPECT_EQ(p->statement(tight.fault().statement).span.line, 3u);  // the 8th statement did not run
  EXPECT_EQ(valueOf(tight, "Main.a.total"), "2");
}

// Runs each function in its own child process; returns each one's exit code, or -1 for those that
// did not finish within `seconds` (they are killed).
std::vector<int> runInChildren(const std::vector<std::function<int()>>& fns, double seconds) {
  std::vector<pid_t> pids;
  fflush(nullptr);
  for (const auto& fn : fns) {
    const pid_t pid = fork();
    if (pid == 0) _exit(fn());
    pids.push_back(pid);
  }
  std::vector<int> result(fns.size(), -2);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  size_t open = pids.size();
  while (open > 0 && std::chrono::steady_clock::now() < deadline) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (result[i] != -2) continue;
      int status = 0;
      if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        result[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --open;
      }
    }
    test::awaitAnyExit(pids, deadline);
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    if (result[i] != -2) continue;
    kill(pids[i], SIGKILL);
    waitpid(pids[i], nullptr, 0);
    result[i] = -1;
  }
  return result;
}

// A loop with an empty body must still pass a statement boundary per iteration, or nothing
// bounds the cycle: the watchdog has to stop these too. (Run in child processes, so that a VM
// that hangs fails the test instead of hanging the suite.)
TEST(VmWatchdog, LoopsWithEmptyBodiesAreStoppedToo) {
  const char* programs[] = {
      "PROGRAM Main\nVAR b : BOOL := TRUE; END_VAR\nWHILE b DO\nEND_WHILE;\nEND_PROGRAM\n",
      "PROGRAM Main\nVAR b : BOOL; END_VAR\nREPEAT\nUNTIL b\nEND_REPEAT;\nEND_PROGRAM\n",
      "PROGRAM Main\nVAR i : LINT; END_VAR\nFOR i := 0 TO LINT#9223372036854775807 DO\nEND_FOR;\nEND_PROGRAM\n",
  };
  std::vector<std::shared_ptr<const Program>> compiled;
  std::vector<std::function<int()>> runs;
  for (const char* src : programs) {
    compiled.push_back(mustCompile(src));
    ASSERT_TRUE(compiled.back());
    auto p = compiled.back();
    runs.push_back([p]() {
      Vm vm(p);
      vm.setStatementBudget(1000);
      vm.beginCycle(0, 0);
      const RunStatus s = vm.run();
      return s == RunStatus::Faulted && vm.fault().code == FaultCode::Watchdog ? 0 : 1;
    });
  }
  const std::vector<int> codes = runInChildren(runs, 2.0);
  for (size_t i = 0; i < codes.size(); ++i) {
    EXPECT_NE(codes[i], -1) << "the VM ran for 2 s without the watchdog stopping it:\n" << programs[i];
    EXPECT_EQ(codes[i], 0) << programs[i];
  }
}

// ------------------------------------------------------------------ faults

struct FaultCase {
  const char* name;
  const char* vars;
  const char* body;  // the faulting statement is on line 6 (the body's second line)
  FaultCode code;
  const char* detail;  // substring of the detail, or ""
};

TEST(VmFaults, EachKindNamesItsCauseAndStatement) {
  const FaultCase cases[] = {
      {"int div", "x : DINT := 10; z : DINT; y : DINT;", "y := 1;\ny := x / z;\ny := 2;", FaultCode::DivisionByZero,
       ""},
      {"lint div", "x : LINT := 10; z : LINT; y : LINT;", "y := 1;\ny := x / z;\ny := 2;", FaultCode::DivisionByZero,
       ""},
      {"uint div", "x : UINT := 10; z : UINT; y : UINT;", "y := 1;\ny := x / z;\ny := 2;", FaultCode::DivisionByZero,
       ""},
      {"real div", "x : REAL := 1.5; z : REAL; y : REAL;", "y := 1.0;\ny := x / z;\ny := 2.0;",
       FaultCode::DivisionByZero, ""},
      {"lreal div", "x : LREAL := 1.5; z : LREAL; y : LREAL;", "y := 1.0;\ny := x / z;\ny := 2.0;",
       FaultCode::DivisionByZero, ""},
      {"time div", "x : TIME := T#1s; z : DINT; y : TIME;", "y := T#1ms;\ny := x / z;\ny := T#2ms;",
       FaultCode::DivisionByZero, ""},
      {"mod", "x : INT := 7; z : INT; y : INT;", "y := 1;\ny := x MOD z;\ny := 2;", FaultCode::DivisionByZero, ""},
      {"index write", "a : ARRAY[1..10] OF INT; i : DINT := 11; y : INT;", "y := 1;\na[i] := 5;\ny := 2;",
       FaultCode::IndexOutOfRange, "11"},
      {"index read", "a : ARRAY[1..10] OF INT; i : INT; y : INT;", "y := 1;\ny := a[i];\ny := 2;",
       FaultCode::IndexOutOfRange, "0"},
      {"index 2d", "a : ARRAY[0..2, 0..3] OF INT; i : INT := 1; j : INT := 4; y : INT;",
       "y := 1;\na[i, j] := 3;\ny := 2;", FaultCode::IndexOutOfRange, "4"},
      {"index lint", "a : ARRAY[0..3] OF INT; i : LINT := 4294967296; y : INT;", "y := 1;\ny := a[i];\ny := 2;",
       FaultCode::IndexOutOfRange, ""},
      {"null", "r : REF_TO INT; y : INT;", "y := 1;\ny := r^;\ny := 2;", FaultCode::NullReference, ""},
      {"null write", "r : REF_TO INT; y : INT;", "y := 1;\nr^ := 3;\ny := 2;", FaultCode::NullReference, ""},
      {"subrange", "p : INT (0..100); i : INT := 101; y : INT;", "y := 1;\np := i;\ny := 2;", FaultCode::Subrange,
       "101"},
      {"subrange arith", "p : INT (0..100) := 100; y : INT;", "y := 1;\np := p + 1;\ny := 2;", FaultCode::Subrange,
       "101"},
  };
  for (const FaultCase& fc : cases) {
    SCOPED_TRACE(fc.name);
    const std::string src = std::string("PROGRAM Main\nVAR\n") + fc.vars + "\nEND_VAR\n" + fc.body + "\nEND_PROGRAM\n";
    auto p = mustCompile(src);
    if (!p) continue;
    Runtime rt(p);
    ASSERT_EQ(rt.runCycle(), RunStatus::Faulted) << src;
    const FaultInfo& f = rt.vm().fault();
    EXPECT_EQ(f.code, fc.code) << faultText(f.code);
    ASSERT_LT(f.statement, p->statements.size());
    EXPECT_EQ(p->statement(f.statement).span.line, 6u);
    EXPECT_NE(f.detail.find(fc.detail), std::string::npos) << f.detail;
    EXPECT_EQ(rt.vm().steps(), 2u);
    // The statement before the fault ran; the one after did not.
    EXPECT_TRUE(valueOf(rt, "Main.y") == "1" || valueOf(rt, "Main.y") == "1.0" || valueOf(rt, "Main.y") == "T#1ms")
        << valueOf(rt, "Main.y");
    const std::string msg = rt.faultMessage();
    EXPECT_EQ(msg.rfind("main.st:6:1: fault: " + std::string(faultText(fc.code)), 0), 0u) << msg;
    EXPECT_NE(msg.find("(cycle 0, task Main)"), std::string::npos) << msg;
    EXPECT_TRUE(rt.faulted());
    EXPECT_EQ(rt.run(), RunStatus::Faulted);
  }
}

TEST(VmFaults, IndexDetailNamesTheIndexAndTheBounds) {
  auto p = mustCompile("PROGRAM Main\nVAR a : ARRAY[1..10] OF INT; i : INT := 11; END_VAR\na[i] := 1;\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  Vm vm(p);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::Faulted);
  EXPECT_EQ(vm.fault().code, FaultCode::IndexOutOfRange);
  EXPECT_EQ(vm.fault().detail, "index 11 outside 1..10");
}

TEST(VmFaults, FaultInsideAFunctionKeepsTheCallStack) {
  const char* src =
      "FUNCTION Div : DINT\n"             // 1
      "VAR_INPUT a, b : DINT; END_VAR\n"  // 2
      "Div := a / b;\n"                   // 3
      "END_FUNCTION\n"                    // 4
      "PROGRAM Main\n"                    // 5
      "VAR r : DINT; END_VAR\n"           // 6
      "r := 1;\n"                         // 7
      "r := Div(10, 0) + 1;\n"            // 8
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Vm vm(p);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::Faulted);
  EXPECT_EQ(vm.fault().code, FaultCode::DivisionByZero);
  EXPECT_EQ(p->statement(vm.fault().statement).span.line, 3u);
  const std::vector<Frame> frames = vm.frames();
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(p->pous.at(frames[0].pou).name, "Main");
  EXPECT_EQ(p->pous.at(frames[1].pou).name, "Div");
  EXPECT_EQ(p->statement(vm.frameStatement(frames, 0)).span.line, 8u);
  EXPECT_EQ(vm.frameStatement(frames, 1), vm.fault().statement);
  EXPECT_EQ(valueOf(vm, "Main.r"), "1");
}

TEST(VmFaults, UnboundedRecursionIsAStackOverflow) {
  const char* src =
      "FUNCTION A : DINT\nVAR_INPUT n : DINT; END_VAR\nA := B(n);\nEND_FUNCTION\n"  // 1-4
      "FUNCTION B : DINT\nVAR_INPUT n : DINT; END_VAR\nB := A(n);\nEND_FUNCTION\n"  // 5-8
      "PROGRAM Main\nVAR r : DINT; END_VAR\nr := A(1);\nEND_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Vm vm(p);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::Faulted);
  EXPECT_EQ(vm.fault().code, FaultCode::StackOverflow);
  ASSERT_LT(vm.fault().statement, p->statements.size());
  const uint32_t line = p->statement(vm.fault().statement).span.line;
  EXPECT_TRUE(line == 3 || line == 7) << line;
  EXPECT_NE(vm.fault().detail.find("depth"), std::string::npos) << vm.fault().detail;
  EXPECT_LE(vm.frames().size(), Vm::kMaxCallDepth);
  EXPECT_GT(vm.frames().size(), 100u);
}

// The code after a compound statement belongs to the next statement, however long the program
// (the line table must keep the statement's own entry when two entries share a pc).
TEST(VmFaults, FaultAfterACompoundStatementNamesTheRightStatement) {
  const char* src =
      "PROGRAM Main\n"           // 1
      "VAR\n"                    // 2
      "  sel, out, z : DINT;\n"  // 3
      "END_VAR\n"                // 4
      "CASE sel OF\n"            // 5
      "  1: out := 10;\n"        // 6
      "  2, 3: out := 20;\n"     // 7
      "  4..6: out := 30;\n"     // 8
      "  8: out := 40;\n"        // 9
      "ELSE\n"                   // 10
      "  out := -1;\n"           // 11
      "END_CASE;\n"              // 12
      "out := 100 / z;\n"        // 13
      "CASE sel OF\n"            // 14
      "  1: out := 1;\n"         // 15
      "  1000: out := 2;\n"      // 16
      "ELSE\n"                   // 17
      "  out := 0;\n"            // 18
      "END_CASE;\n"              // 19
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  for (uint32_t id = 0; id < p->statements.size(); ++id)
    EXPECT_EQ(p->statementAt(p->statements[id].pc), id) << "statement on line " << p->statements[id].span.line;
  Runtime rt(p);
  ASSERT_EQ(rt.runCycle(), RunStatus::Faulted);
  EXPECT_EQ(p->statement(rt.vm().fault().statement).span.line, 13u) << rt.faultMessage();
  EXPECT_EQ(rt.faultMessage().rfind("main.st:13:1:", 0), 0u) << rt.faultMessage();
}

TEST(VmFaults, FaultInALoopConditionNamesTheLoop) {
  const char* src =
      "PROGRAM Main\n"
      "VAR x, d : DINT; END_VAR\n"
      "x := 1;\n"               // 3
      "WHILE x < 100 / d DO\n"  // 4
      "  x := x + 1;\n"
      "END_WHILE;\n"
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  Vm vm(p);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::Faulted);
  EXPECT_EQ(p->statement(vm.fault().statement).span.line, 4u);
}

// ------------------------------------------------------------------ reset, sharing

TEST(VmLifecycle, ResetRestoresTheInitialImage) {
  auto p = mustCompile(kCallProgram);
  ASSERT_TRUE(p);
  Vm vm(p);
  ASSERT_EQ(vm.imageSize(), p->imageSize());
  EXPECT_EQ(0, std::memcmp(vm.image(), p->initialImage.data(), vm.imageSize()));
  for (int i = 0; i < 3; ++i) {
    vm.beginCycle(0, i * 10'000'000);
    ASSERT_EQ(vm.run(), RunStatus::CycleDone);
  }
  EXPECT_NE(0, std::memcmp(vm.image(), p->initialImage.data(), vm.imageSize()));
  vm.reset();
  EXPECT_EQ(0, std::memcmp(vm.image(), p->initialImage.data(), vm.imageSize()));
  EXPECT_FALSE(vm.inCycle());
  EXPECT_FALSE(vm.faulted());
  EXPECT_EQ(vm.steps(), 0u);

  // Reset in the middle of a paused cycle, and after a fault.
  Recorder rec(*p);
  rec.pauseWhen = [](uint32_t, uint64_t step) { return step == 4; };
  vm.setObserver(&rec);
  vm.beginCycle(0, 0);
  ASSERT_EQ(vm.run(), RunStatus::Paused);
  vm.reset();
  EXPECT_FALSE(vm.inCycle());
  EXPECT_EQ(vm.pausedStatement(), UINT32_MAX);
  EXPECT_TRUE(vm.frames().empty());
  EXPECT_EQ(0, std::memcmp(vm.image(), p->initialImage.data(), vm.imageSize()));
  vm.setObserver(nullptr);
  vm.beginCycle(0, 0);
  EXPECT_EQ(vm.run(), RunStatus::CycleDone);
  EXPECT_EQ(valueOf(vm, "Main.a.total"), "6");

  auto faulty = mustCompile("PROGRAM Main\nVAR x, z : DINT; END_VAR\nx := 5;\nx := x / z;\nEND_PROGRAM\n");
  ASSERT_TRUE(faulty);
  Vm fvm(faulty);
  fvm.beginCycle(0, 0);
  ASSERT_EQ(fvm.run(), RunStatus::Faulted);
  fvm.reset();
  EXPECT_FALSE(fvm.faulted());
  EXPECT_EQ(fvm.fault().code, FaultCode::None);
  EXPECT_EQ(valueOf(fvm, "Main.x"), "0");
}

TEST(VmLifecycle, TwoVmsShareOneImmutableProgram) {
  const char* src =
      "PROGRAM Main\n"
      "VAR n : DINT; s : STRING[20] := 'x'; a : ARRAY[0..3] OF INT; END_VAR\n"
      "n := n + 1;\n"
      "s := CONCAT(s, 'y');\n"
      "a[n MOD 4] := a[n MOD 4] + 1;\n"
      "END_PROGRAM\n";
  auto p = mustCompile(src);
  ASSERT_TRUE(p);
  const std::vector<uint32_t> code = p->code;
  const std::vector<uint8_t> constants = p->constants;
  const std::vector<uint8_t> initial = p->initialImage;
  Vm one(p), two(p);
  for (int i = 0; i < 5; ++i) {
    one.beginCycle(0, i * 10'000'000);
    ASSERT_EQ(one.run(), RunStatus::CycleDone);
    if (i % 2 == 0) {
      two.beginCycle(0, i * 10'000'000);
      ASSERT_EQ(two.run(), RunStatus::CycleDone);
    }
  }
  EXPECT_EQ(valueOf(one, "Main.n"), "5");
  EXPECT_EQ(valueOf(two, "Main.n"), "3");
  EXPECT_EQ(valueOf(one, "Main.s"), "'xyyyyy'");
  EXPECT_EQ(valueOf(two, "Main.s"), "'xyyy'");
  EXPECT_EQ(p->code, code);
  EXPECT_EQ(p->constants, constants);
  EXPECT_EQ(p->initialImage, initial);

  // And concurrently, on two threads.
  Vm a(p), b(p);
  auto spin = [](Vm& vm, int cycles) {
    for (int i = 0; i < cycles; ++i) {
      vm.beginCycle(0, 0);
      if (vm.run() != RunStatus::CycleDone) return;
    }
  };
  std::thread ta(spin, std::ref(a), 2000), tb(spin, std::ref(b), 3000);
  ta.join();
  tb.join();
  EXPECT_EQ(valueOf(a, "Main.n"), "2000");
  EXPECT_EQ(valueOf(b, "Main.n"), "3000");
  EXPECT_EQ(p->code, code);
  EXPECT_EQ(p->constants, constants);
}

TEST(VmLifecycle, CycleTimeIsTheVirtualStartTime) {
  auto p = mustCompile(
      "PROGRAM Main\nVAR t : TON; q : BOOL; et : TIME; END_VAR\n"
      "t(IN := TRUE, PT := T#25ms);\nq := t.Q;\net := t.ET;\nEND_PROGRAM\n");
  ASSERT_TRUE(p);
  Vm vm(p);
  const int64_t ms = 1'000'000;
  const int64_t starts[] = {0, 10 * ms, 20 * ms, 30 * ms};
  const char* et[] = {"T#0s", "T#10ms", "T#20ms", "T#25ms"};
  const char* q[] = {"FALSE", "FALSE", "FALSE", "TRUE"};
  for (int i = 0; i < 4; ++i) {
    vm.beginCycle(0, starts[i]);
    EXPECT_EQ(vm.cycleTime(), starts[i]);
    ASSERT_EQ(vm.run(), RunStatus::CycleDone);
    EXPECT_EQ(valueOf(vm, "Main.et"), et[i]) << i;
    EXPECT_EQ(valueOf(vm, "Main.q"), q[i]) << i;
  }
}

}  // namespace
}  // namespace scanback
