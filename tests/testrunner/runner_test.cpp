// The unit test runner (testrunner/) and `scanback test` end to end: passing tests, each
// assertion failing with its exact message, a fault as a failure at its statement, ADVANCE_TIME
// with a TON, --filter, exit codes, JUnit XML, and --record-failures giving a trace that
// verifies and whose replay ends at the failing assertion, from where it steps back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "replayer/replayer.h"
#include "testrunner/testrunner.h"
#include "tests/support/shell.h"
#include "tests/support/xml_check.h"
#include "tests/traces/trace_test_support.h"
#include "vm/compiler/compiler.h"

namespace fs = std::filesystem;
using namespace scanback;
using namespace scanback::testrunner;
using trace::testing::TempDir;

namespace {

// ---------------------------------------------------------------- the library

const char* kLibrary = R"(
FUNCTION Add : INT
VAR_INPUT a, b : INT; END_VAR
Add := a + b;
END_FUNCTION

FUNCTION_BLOCK Delay
VAR_INPUT start : BOOL; END_VAR
VAR_OUTPUT done : BOOL; END_VAR
VAR t : TON; END_VAR
t(IN := start, PT := T#2s);
done := t.Q;
END_FUNCTION_BLOCK
)";

SourceSet project(const std::string& tests) {
  SourceSet sources;
  sources.add("lib.st", kLibrary);
  sources.add("tests.st", tests);
  return sources;
}

// Runs every test of `tests` (with the library); fails the calling test on compile errors.
std::vector<TestResult> runAll(const std::string& tests, const RunOptions& options = {}) {
  const SourceSet sources = project(tests);
  Diagnostics diagnostics;
  std::vector<TestResult> results;
  for (const TestCase& t : findTests(sources, diagnostics)) {
    if (!matchesFilter(options.filter, t.name)) continue;
    std::optional<TestResult> r = runTest(sources, t, options, diagnostics);
    if (!r) {
      ADD_FAILURE() << diagnostics.format(sources);
      return results;
    }
    results.push_back(std::move(*r));
  }
  EXPECT_FALSE(diagnostics.hasErrors()) << diagnostics.format(sources);
  return results;
}

// The failure line of the only test in `body` (a TEST_PROGRAM named T), or "passed".
std::string outcome(const std::string& declarations, const std::string& body) {
  const std::vector<TestResult> results =
      runAll("TEST_PROGRAM T\n" + declarations + "\n" + body + "\nEND_TEST_PROGRAM\n");
  if (results.size() != 1) return "no result";
  return results[0].passed ? "passed" : failureLine(results[0]);
}

TEST(TestRunner, FindsTestsInDeclarationOrder) {
  const SourceSet sources = project(R"(
TEST_PROGRAM Second
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
TEST_FUNCTION_BLOCK First
ASSERT_TRUE(TRUE);
END_TEST_FUNCTION_BLOCK
)");
  Diagnostics diagnostics;
  const std::vector<TestCase> tests = findTests(sources, diagnostics);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0].name, "Second");
  EXPECT_FALSE(tests[0].functionBlock);
  EXPECT_EQ(tests[0].span.line, 2u);
  EXPECT_EQ(tests[1].name, "First");
  EXPECT_TRUE(tests[1].functionBlock);
}

TEST(TestRunner, PassingAssertionsOfEveryKind) {
  EXPECT_EQ(outcome("VAR x : INT := 2; r : REAL := 0.5; s : STRING := 'ab'; END_VAR",
                    "ASSERT_TRUE(x = 2);\n"
                    "ASSERT_FALSE(x = 3);\n"
                    "ASSERT_EQUAL(5, Add(x, 3));\n"
                    "ASSERT_EQUAL('ab', s);\n"
                    "ASSERT_NOT_EQUAL(3, x);\n"
                    "ASSERT_NEAR(0.49, r, 0.02);\n"
                    "ASSERT_LESS(x, 3);\n"
                    "ASSERT_GREATER(x, 1);\n"
                    "ASSERT_EQUAL(T#1s, T#1000ms);"),
            "passed");
}

TEST(TestRunner, EachAssertionFailsWithItsMessage) {
  const std::string vars = "VAR x : INT := 2; r : REAL := 0.5; s : STRING := 'ab'; t : TIME := T#1s; END_VAR";
  EXPECT_EQ(outcome(vars, "ASSERT_TRUE(x = 3);"), "tests.st:3:1: T: ASSERT_TRUE failed: expected TRUE, got FALSE");
  EXPECT_EQ(outcome(vars, "ASSERT_FALSE(x = 2);"), "tests.st:3:1: T: ASSERT_FALSE failed: expected FALSE, got TRUE");
  EXPECT_EQ(outcome(vars, "ASSERT_EQUAL(3, Add(x, -1));"), "tests.st:3:1: T: ASSERT_EQUAL failed: expected 3, got 1");
  EXPECT_EQ(outcome(vars, "ASSERT_EQUAL('abc', s);"), "tests.st:3:1: T: ASSERT_EQUAL failed: expected 'abc', got 'ab'");
  EXPECT_EQ(outcome(vars, "ASSERT_EQUAL(T#2s, t);"), "tests.st:3:1: T: ASSERT_EQUAL failed: expected T#2s, got T#1s");
  EXPECT_EQ(outcome(vars, "ASSERT_NOT_EQUAL(2, x);"),
            "tests.st:3:1: T: ASSERT_NOT_EQUAL failed: expected a value other than 2, got 2");
  EXPECT_EQ(outcome(vars, "ASSERT_NEAR(0.25, r, 0.125);"),
            "tests.st:3:1: T: ASSERT_NEAR failed: expected 0.25 +/- 0.125, got 0.5");
  EXPECT_EQ(outcome(vars, "ASSERT_LESS(x, 2);"), "tests.st:3:1: T: ASSERT_LESS failed: expected 2 < 2");
  EXPECT_EQ(outcome(vars, "ASSERT_GREATER(x, 7);"), "tests.st:3:1: T: ASSERT_GREATER failed: expected 2 > 7");
}

TEST(TestRunner, WStringAssertionsShowTheTextInDoubleQuotes) {
  const std::string vars = "VAR w : WSTRING := \"Grüße\"; c : WCHAR := WCHAR#\"€\"; END_VAR";
  EXPECT_EQ(outcome(vars, "ASSERT_EQUAL(\"Grüße\", w);\nASSERT_NOT_EQUAL(\"x\", w);\nASSERT_LESS(\"A\", w);"),
            "passed");
  EXPECT_EQ(outcome(vars, "ASSERT_EQUAL(\"Grüsse\", w);"),
            "tests.st:3:1: T: ASSERT_EQUAL failed: expected \"Grüsse\", got \"Grüße\"");
  EXPECT_EQ(outcome(vars, "ASSERT_GREATER(\"A\", LEFT(w, 2));"),
            "tests.st:3:1: T: ASSERT_GREATER failed: expected \"A\" > \"Gr\"");
  EXPECT_EQ(outcome(vars, "ASSERT_EQUAL(WCHAR#\"A\", c);"),
            "tests.st:3:1: T: ASSERT_EQUAL failed: expected \"A\", got \"€\"");
}

TEST(TestRunner, AFailedAssertionEndsTheTest) {
  // The second assertion would fail too, and the assignment after the first would change x: the
  // test stops at the first failure, like a fault.
  const std::vector<TestResult> results = runAll(R"(
TEST_PROGRAM Stops
VAR x : INT := 1; END_VAR
ASSERT_EQUAL(2, x);
x := 5;
ASSERT_EQUAL(9, x);
END_TEST_PROGRAM
)");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(failureLine(results[0]), "tests.st:4:1: Stops: ASSERT_EQUAL failed: expected 2, got 1");
  EXPECT_EQ(results[0].kind, "ASSERT_EQUAL");
}

TEST(TestRunner, OperandsAreEvaluatedOnce) {
  // A function block call in an operand runs once: the counter shows how many times.
  const std::vector<TestResult> results = runAll(R"(
FUNCTION_BLOCK Counter
VAR_OUTPUT n : INT; END_VAR
n := n + 1;
END_FUNCTION_BLOCK
FUNCTION Bump : INT
VAR_IN_OUT c : Counter; END_VAR
c();
Bump := c.n;
END_FUNCTION
TEST_PROGRAM Once
VAR c : Counter; END_VAR
ASSERT_EQUAL(5, Bump(c));
END_TEST_PROGRAM
)");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].message, "ASSERT_EQUAL failed: expected 5, got 1");
}

TEST(TestRunner, AFaultIsAFailureAtItsStatement) {
  const std::vector<TestResult> results = runAll(R"(
TEST_PROGRAM Divides
VAR zero : INT; q : INT; END_VAR
q := 10 / zero;
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
)");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].passed);
  EXPECT_EQ(failureLine(results[0]), "tests.st:4:1: Divides: fault: division by zero");
  EXPECT_EQ(results[0].kind, "fault");
}

TEST(TestRunner, AdvanceTimeDrivesATimer) {
  const std::vector<TestResult> results = runAll(R"(
TEST_FUNCTION_BLOCK DelayTest
VAR d : Delay; t0 : TIME; END_VAR
t0 := TIME();
d(start := TRUE);
ASSERT_FALSE(d.done);
ADVANCE_TIME(T#1s999ms);
d(start := TRUE);
ASSERT_FALSE(d.done);
ADVANCE_TIME(T#1ms);
d(start := TRUE);
ASSERT_TRUE(d.done);
ASSERT_EQUAL(T#2s, TIME() - t0);
END_TEST_FUNCTION_BLOCK
TEST_PROGRAM TooEarly
VAR d : Delay; END_VAR
d(start := TRUE);
ADVANCE_TIME(T#1s);
d(start := TRUE);
ASSERT_TRUE(d.done);
END_TEST_PROGRAM
)");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].passed) << failureLine(results[0]);
  EXPECT_EQ(failureLine(results[1]), "tests.st:20:1: TooEarly: ASSERT_TRUE failed: expected TRUE, got FALSE");
}

TEST(TestRunner, MethodsAndActionsOfATestMayAssert) {
  // Helpers of a TEST_FUNCTION_BLOCK assert too; the failure is located in the helper.
  const std::vector<TestResult> results = runAll(R"(
TEST_FUNCTION_BLOCK WithHelpers
VAR total : INT; END_VAR
METHOD Check
VAR_INPUT want : INT; END_VAR
  ASSERT_EQUAL(want, total);
END_METHOD
ACTION Grow:
  total := total + 2;
END_ACTION
Grow();
Check(want := 2);
Grow();
Check(want := 5);
END_TEST_FUNCTION_BLOCK
)");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(failureLine(results[0]), "tests.st:6:3: WithHelpers: ASSERT_EQUAL failed: expected 5, got 4");
}

TEST(TestRunner, AdvanceTimeBackwardsIsAFault) {
  EXPECT_EQ(outcome("", "ADVANCE_TIME(T#-1ms);"),
            "tests.st:3:1: T: fault: ADVANCE_TIME out of range (by -1000000 ns: time only moves forward)");
}

TEST(TestRunner, EachTestStartsFromAFreshInstance) {
  // Both tests count on the same global starting at 0.
  const std::vector<TestResult> results = runAll(R"(
VAR_GLOBAL g : INT; END_VAR
TEST_PROGRAM A
g := g + 1;
ASSERT_EQUAL(1, g);
END_TEST_PROGRAM
TEST_PROGRAM B
g := g + 1;
ASSERT_EQUAL(1, g);
END_TEST_PROGRAM
)");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].passed);
  EXPECT_TRUE(results[1].passed);
}

TEST(TestRunner, FilterIsAGlobIgnoringCase) {
  EXPECT_TRUE(matchesFilter("", "Anything"));
  EXPECT_TRUE(matchesFilter("motor*", "MotorStarts"));
  EXPECT_TRUE(matchesFilter("*Start?", "MotorStarts"));
  EXPECT_FALSE(matchesFilter("Valve*", "MotorStarts"));
  RunOptions options;
  options.filter = "Keep*";
  const std::vector<TestResult> results = runAll(R"(
TEST_PROGRAM KeepMe
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
TEST_PROGRAM DropMe
ASSERT_TRUE(FALSE);
END_TEST_PROGRAM
)",
                                                 options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].test.name, "KeepMe");
}

TEST(TestRunner, AssertionsOutsideTestsAreErrors) {
  SourceSet sources = project(R"(
PROGRAM Main
ASSERT_TRUE(FALSE);
ADVANCE_TIME(T#1s);
END_PROGRAM
)");
  Diagnostics diagnostics;
  EXPECT_EQ(compileProject(sources, diagnostics), nullptr);
  const std::string text = diagnostics.format(sources);
  EXPECT_NE(text.find("tests.st:3:1: error: ASSERT_TRUE may only be used in a TEST_PROGRAM or TEST_FUNCTION_BLOCK"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tests.st:4:1: error: ADVANCE_TIME may only be used"), std::string::npos) << text;
}

TEST(TestRunner, BadAssertionsAreErrors) {
  SourceSet sources = project(R"(
TEST_PROGRAM Bad
VAR s : STRING; d : Delay; END_VAR
ASSERT_EQUAL(1, s);
ASSERT_TRUE(5);
ASSERT_NEAR(1.0, s, 0.1);
ASSERT_EQUAL(1);
ADVANCE_TIME(5);
ASSERT_EQUAL(d, d);
END_TEST_PROGRAM
)");
  Diagnostics diagnostics;
  EXPECT_EQ(compileProject(sources, diagnostics), nullptr);
  const std::string text = diagnostics.format(sources);
  for (const char* expected :
       {"tests.st:4:1: error: operator = cannot be applied", "tests.st:5:13: error: ASSERT_TRUE needs a BOOL",
        "tests.st:6:18: error: ASSERT_NEAR needs numbers, not STRING",
        "tests.st:7:1: error: ASSERT_EQUAL needs 2 arguments, not 1",
        "tests.st:8:14: error: ADVANCE_TIME needs a TIME or LTIME",
        "tests.st:9:1: error: Delay values cannot be compared"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

TEST(TestRunner, ProgramsIgnoreTestsButCheckThem) {
  // A test POU runs in no task of the project, is no type, and its errors are still found.
  SourceSet sources = project(R"(
PROGRAM Main
VAR x : INT; END_VAR
x := Add(x, 1);
END_PROGRAM
TEST_PROGRAM Checked
VAR y : INT; END_VAR
y := 'text';
END_TEST_PROGRAM
)");
  Diagnostics diagnostics;
  EXPECT_EQ(compileProject(sources, diagnostics), nullptr);
  EXPECT_NE(diagnostics.format(sources).find("tests.st:8:6: error: cannot convert"), std::string::npos)
      << diagnostics.format(sources);

  SourceSet good = project(R"(
PROGRAM Main
VAR x : INT; END_VAR
x := Add(x, 1);
END_PROGRAM
TEST_PROGRAM Fine
ASSERT_EQUAL(2, Add(1, 1));
END_TEST_PROGRAM
)");
  Diagnostics d2;
  const std::shared_ptr<const Program> program = compileProject(good, d2);
  ASSERT_NE(program, nullptr) << d2.format(good);
  ASSERT_EQ(program->tasks.size(), 1u);
  EXPECT_EQ(program->tasks[0].name, "Main");
  ASSERT_EQ(program->instances.size(), 1u);

  SourceSet asType = project(R"(
PROGRAM Main
VAR t : Fine; END_VAR
END_PROGRAM
TEST_PROGRAM Fine
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
)");
  Diagnostics d3;
  EXPECT_EQ(compileProject(asType, d3), nullptr);
  EXPECT_NE(d3.format(asType).find("tests.st:3:9: error: unknown type 'Fine'"), std::string::npos) << d3.format(asType);
}

TEST(TestRunner, AProgramIsATypeInTestCode) {
  // Each variable of a PROGRAM type in a test is an instance of its own: its inputs are set by the
  // call, its variables keep their values between the test's calls, two instances do not share
  // them, and its ACTIONs run on the instance they are called on.
  const char* adder = R"(
PROGRAM Adder
VAR_INPUT step : INT := 1; END_VAR
VAR_OUTPUT total : INT; END_VAR
VAR calls : INT; END_VAR
calls := calls + 1;
total := total + step;
ACTION Reset:
  total := 0;
END_ACTION
END_PROGRAM
)";
  const std::vector<TestResult> results = runAll(std::string(adder) + R"(
TEST_PROGRAM T
VAR uut, other : Adder; END_VAR
uut(step := 5);
uut(step := 2);
other();
ASSERT_EQUAL(7, uut.total);
ASSERT_EQUAL(2, uut.calls);
ASSERT_EQUAL(1, other.total);
uut.Reset();
ASSERT_EQUAL(0, uut.total);
ASSERT_EQUAL(1, other.total);
uut(step := 3);
ASSERT_EQUAL(3, uut.total);
ASSERT_EQUAL(3, uut.calls);
END_TEST_PROGRAM
TEST_FUNCTION_BLOCK Many
VAR uuts : ARRAY[1..3] OF Adder; i : INT; END_VAR
FOR i := 1 TO 3 DO
  uuts[i](step := i * 10);
END_FOR
ASSERT_EQUAL(60, Sum());
ASSERT_EQUAL(61, Sum());
METHOD Sum : INT
VAR j : INT; END_VAR
FOR j := 1 TO 3 DO
  Sum := Sum + uuts[j].total;
END_FOR
END_METHOD
END_TEST_FUNCTION_BLOCK
)");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].passed) << failureLine(results[0]);
  // The second assertion of Many fails: the first held, so the instances are what they should be.
  EXPECT_FALSE(results[1].passed);
  EXPECT_EQ(failureLine(results[1]), "tests.st:34:1: Many: ASSERT_EQUAL failed: expected 61, got 60");
}

TEST(TestRunner, AProgramIsATypeInTestCodeOnly) {
  SourceSet sources = project(R"(
PROGRAM Adder
VAR x : INT; END_VAR
x := x + 1;
END_PROGRAM
FUNCTION_BLOCK NotATest
VAR a : Adder; END_VAR
END_FUNCTION_BLOCK
TEST_PROGRAM T
VAR uut : Adder; END_VAR
uut();
ASSERT_EQUAL(1, uut.x);
END_TEST_PROGRAM
)");
  Diagnostics diagnostics;
  EXPECT_EQ(compileProject(sources, diagnostics), nullptr);
  const std::string text = diagnostics.format(sources);
  EXPECT_NE(text.find("tests.st:7:9: error: 'Adder' is a PROGRAM, not a type"), std::string::npos) << text;
  EXPECT_EQ(text.find("tests.st:10:"), std::string::npos) << text;
}

TEST(TestRunner, ATestsProgramRunsOnlyTheTest) {
  SourceSet sources = project(R"(
PROGRAM Main
VAR x : INT; END_VAR
x := Add(x, 1);
END_PROGRAM
TEST_PROGRAM Fine
ASSERT_EQUAL(2, Add(1, 1));
END_TEST_PROGRAM
)");
  Diagnostics diagnostics;
  CompileOptions options;
  options.test = "FINE";
  const std::shared_ptr<const Program> program = compileProject(sources, diagnostics, options);
  ASSERT_NE(program, nullptr) << diagnostics.format(sources);
  ASSERT_EQ(program->tasks.size(), 1u);
  EXPECT_EQ(program->tasks[0].name, "Fine");
  ASSERT_EQ(program->instances.size(), 1u);
  EXPECT_EQ(program->instances[0].name, "Fine");
  // Another program than the project's, on the same sources: a trace tells them apart.
  Diagnostics d2;
  const std::shared_ptr<const Program> plain = compileProject(sources, d2);
  ASSERT_NE(plain, nullptr);
  EXPECT_NE(plain->hash, program->hash);

  options.test = "Main";
  Diagnostics d3;
  EXPECT_EQ(compileProject(sources, d3, options), nullptr);
  EXPECT_NE(d3.format(sources).find("there is no TEST_PROGRAM or TEST_FUNCTION_BLOCK named 'Main'"), std::string::npos);
}

TEST(TestRunner, JunitXmlListsEachTest) {
  const std::vector<TestResult> results = runAll(R"(
TEST_PROGRAM Good
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
TEST_PROGRAM Bad
ASSERT_EQUAL('<&>', '"x"');
END_TEST_PROGRAM
)");
  const std::string xml = junitXml(results);
  EXPECT_NE(xml.find("<testsuite name=\"scanback test\" tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase name=\"Good\" classname=\"tests\" file=\"tests.st\" line=\"2\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"ASSERT_EQUAL failed: expected &apos;&lt;&amp;&gt;&apos;, got "
                     "&apos;&quot;x&quot;&apos;\" type=\"ASSERT_EQUAL\">"),
            std::string::npos)
      << xml;
  EXPECT_EQ(summaryLine(results), "1 passed, 1 failed");
}

TEST(TestRunner, TraceNamesAreSanitised) {
  EXPECT_EQ(traceFileName("MotorStarts"), "MotorStarts.trace");
  EXPECT_EQ(traceFileName("a/b c"), "a_b_c.trace");
  EXPECT_EQ(traceFileName("..x"), "_..x.trace");
}

TEST(TestRunner, ARecordedFailureEndsAtTheAssertion) {
  TempDir dir;
  RunOptions options;
  options.recordDir = (dir.path / "failures").string();
  const std::vector<TestResult> results = runAll(R"(
TEST_PROGRAM Passes
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
TEST_FUNCTION_BLOCK Counts
VAR i, sum : INT; d : Delay; END_VAR
FOR i := 1 TO 4 DO
  sum := sum + i;
END_FOR;
d(start := TRUE);
ADVANCE_TIME(T#3s);
d(start := TRUE);
ASSERT_EQUAL(11, sum);
END_TEST_FUNCTION_BLOCK
)",
                                                 options);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].trace.empty());  // passing tests are not recorded
  EXPECT_FALSE(fs::exists(dir.path / "failures" / "Passes.trace"));
  ASSERT_FALSE(results[1].passed);
  EXPECT_EQ(results[1].traceError, "");
  EXPECT_EQ(results[1].trace, (dir.path / "failures" / "Counts.trace").string());

  std::string error;
  std::unique_ptr<replay::Replayer> replayer = replay::Replayer::open(results[1].trace, {}, error);
  ASSERT_NE(replayer, nullptr) << error;
  EXPECT_EQ(replayer->header().options.test, "Counts");
  const std::optional<replay::Position> end = replayer->end();
  ASSERT_TRUE(end);
  ASSERT_TRUE(replayer->seek(*end, error)) << error;
  const SourceSpan& at = replayer->program().statement(replayer->statement()).span;
  EXPECT_EQ(at.line, 13u);  // the failing ASSERT_EQUAL
  // Stepping back goes through the test: the call before, and the loop.
  ASSERT_TRUE(replayer->stepBack({}, error)) << error;
  EXPECT_EQ(replayer->program().statement(replayer->statement()).span.line, 12u);
  ASSERT_TRUE(replayer->stepBack({}, error)) << error;
  EXPECT_EQ(replayer->program().statement(replayer->statement()).span.line, 11u);
}

// ---------------------------------------------------------------- the command

using test::readText;

// `scanback ARGS` (quoted for the shell) run in `dir`.
test::ShellResult scanback(const std::string& args, const fs::path& dir) {
  return test::runShell("cd " + test::shellQuote(dir.string()) + " && " + test::shellQuote(SCANBACK_BINARY) + " " +
                        args);
}

void writeFile(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

TEST(TestCommand, ExitCodesLinesAndSummary) {
  TempDir dir;
  writeFile(dir.path / "lib.st", kLibrary);
  writeFile(dir.path / "good_test.st", R"(TEST_PROGRAM AddsUp
ASSERT_EQUAL(5, Add(2, 3));
END_TEST_PROGRAM
)");
  writeFile(dir.path / "bad_test.st", R"(TEST_PROGRAM AddsWrong
ASSERT_EQUAL(6, Add(2, 3));
END_TEST_PROGRAM
TEST_FUNCTION_BLOCK Divides
VAR zero : INT; END_VAR
zero := 1 / zero;
END_TEST_FUNCTION_BLOCK
)");
  test::ShellResult ok = scanback("test lib.st good_test.st", dir.path);
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_EQ(ok.out, "1 passed, 0 failed\n");

  test::ShellResult failed = scanback("test lib.st good_test.st bad_test.st", dir.path);
  EXPECT_EQ(failed.exitCode, 1) << failed.err;
  EXPECT_EQ(failed.out,
            "bad_test.st:2:1: AddsWrong: ASSERT_EQUAL failed: expected 6, got 5\n"
            "bad_test.st:6:1: Divides: fault: division by zero\n"
            "1 passed, 2 failed\n");

  test::ShellResult filtered = scanback("test lib.st good_test.st bad_test.st --filter 'adds*'", dir.path);
  EXPECT_EQ(filtered.exitCode, 1);
  EXPECT_EQ(filtered.out, "bad_test.st:2:1: AddsWrong: ASSERT_EQUAL failed: expected 6, got 5\n1 passed, 1 failed\n");

  test::ShellResult none = scanback("test lib.st good_test.st --filter 'Nothing*'", dir.path);
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("no test matches --filter 'Nothing*'"), std::string::npos) << none.err;

  test::ShellResult noTests = scanback("test lib.st", dir.path);
  EXPECT_EQ(noTests.exitCode, 2);
  EXPECT_NE(noTests.err.find("declare no TEST_PROGRAM"), std::string::npos) << noTests.err;

  writeFile(dir.path / "broken_test.st", "TEST_PROGRAM Broken\nASSERT_EQUAL(1, missing);\nEND_TEST_PROGRAM\n");
  test::ShellResult broken = scanback("test lib.st broken_test.st", dir.path);
  EXPECT_EQ(broken.exitCode, 2);
  EXPECT_NE(broken.err.find("broken_test.st:2:17: error:"), std::string::npos) << broken.err;
  EXPECT_EQ(broken.out, "");

  writeFile(dir.path / "syntax_test.st", "TEST_PROGRAM Syntax\nASSERT_TRUE(TRUE)\nEND_TEST_PROGRAM\n");
  EXPECT_EQ(scanback("test lib.st syntax_test.st", dir.path).exitCode, 2);
  EXPECT_EQ(scanback("test", dir.path).exitCode, 2);
  EXPECT_EQ(scanback("test nonexistent.st", dir.path).exitCode, 2);
}

TEST(TestCommand, JunitXmlIsWellFormed) {
  TempDir dir;
  writeFile(dir.path / "lib.st", kLibrary);
  writeFile(dir.path / "mixed_test.st", R"(TEST_PROGRAM Fine
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
TEST_PROGRAM Quotes
ASSERT_EQUAL('a<b & "c"', 'x$Ny');
END_TEST_PROGRAM
)");
  test::ShellResult r = scanback("test lib.st mixed_test.st --junit out/results.xml", dir.path);
  EXPECT_EQ(r.exitCode, 2) << "out/ does not exist: the report cannot be written";
  fs::create_directories(dir.path / "out");
  r = scanback("test lib.st mixed_test.st --junit out/results.xml", dir.path);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const std::string xml = readText(dir.path / "out" / "results.xml");
  std::string why;
  EXPECT_TRUE(test::wellFormedXml(xml, why)) << why << "\n" << xml;
  EXPECT_NE(xml.find("<testcase name=\"Fine\" classname=\"mixed_test\" file=\"mixed_test.st\" line=\"1\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase name=\"Quotes\" classname=\"mixed_test\" file=\"mixed_test.st\" line=\"4\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("got &apos;x&#10;y&apos;"), std::string::npos) << xml;
  std::string bad = "<a><b></a>";
  EXPECT_FALSE(test::wellFormedXml(bad, why));  // the check itself can fail
}

// Issue 27: a STRING may hold any byte; the report must still be UTF-8 and XML 1.0. A byte that is
// not UTF-8 ($81), a control character XML 1.0 cannot hold ($01) and U+FFFF ($EF$BF$BF, UTF-8
// but no XML character) are written as IEC escapes; UTF-8 text stays as it is. Read back with a
// real XML parser (python3's xml.etree, which refuses what is not UTF-8 or not XML 1.0).
TEST(TestCommand, JunitXmlIsUtf8AndXml10WhateverBytesAStringHolds) {
  TempDir dir;
  writeFile(dir.path / "lib.st", kLibrary);
  writeFile(dir.path / "bytes_test.st", R"(TEST_PROGRAM Bytes
ASSERT_EQUAL('a$81b$EF$BF$BF', 'c$01dé');
END_TEST_PROGRAM
)");
  fs::create_directories(dir.path / "out");
  const test::ShellResult r = scanback("test lib.st bytes_test.st --junit out/results.xml", dir.path);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  const fs::path xml = dir.path / "out" / "results.xml";
  const test::ShellResult parsed = test::runShell(
      "python3 -c 'import sys, xml.etree.ElementTree as ET\n"
      "root = ET.parse(sys.argv[1]).getroot()\n"
      "for f in root.iter(\"failure\"):\n"
      "    sys.stdout.buffer.write((f.get(\"message\") + \"|\" + f.text + \"\\n\").encode(\"utf-8\"))' " +
      test::shellQuote(xml.string()));
  ASSERT_EQ(parsed.exitCode, 0) << parsed.err << "\n" << readText(xml);
  const std::string expected = "expected 'a$81b$EF$BF$BF', got 'c$01d\u00e9'";
  EXPECT_NE(parsed.out.find(expected + "|"), std::string::npos) << parsed.out;
  EXPECT_NE(parsed.out.find("Bytes: ASSERT_EQUAL failed: " + expected), std::string::npos) << parsed.out;
}

TEST(TestCommand, RecordFailuresGivesATraceThatVerifiesAndReplaysToTheAssertion) {
  TempDir dir;
  writeFile(dir.path / "lib.st", kLibrary);
  writeFile(dir.path / "timer_test.st", R"(TEST_FUNCTION_BLOCK TimerTooSlow
VAR d : Delay; END_VAR
d(start := TRUE);
ADVANCE_TIME(T#1s);
d(start := TRUE);
ASSERT_TRUE(d.done);
END_TEST_FUNCTION_BLOCK
TEST_PROGRAM Fine
ASSERT_TRUE(TRUE);
END_TEST_PROGRAM
)");
  test::ShellResult r = scanback("test lib.st timer_test.st --record-failures traces", dir.path);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(r.out,
            "timer_test.st:6:1: TimerTooSlow: ASSERT_TRUE failed: expected TRUE, got FALSE\n1 passed, 1 failed\n");
  EXPECT_NE(r.err.find("TimerTooSlow: recorded traces/TimerTooSlow.trace"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path / "traces" / "Fine.trace"));

  test::ShellResult verify = scanback("trace verify traces/TimerTooSlow.trace", dir.path);
  EXPECT_EQ(verify.exitCode, 0) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("faithful"), std::string::npos) << verify.out;

  test::ShellResult replay = scanback("replay traces/TimerTooSlow.trace", dir.path);
  EXPECT_EQ(replay.exitCode, 0) << replay.err;
  EXPECT_NE(replay.out.find("statement  timer_test.st:6:1  ASSERT_TRUE(d.done);"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("time       T#1s (the test's virtual time there, ADVANCE_TIME included)"),
            std::string::npos)
      << replay.out;

  // The trace's own program (compiled for the test) answers the other trace commands too.
  test::ShellResult hits = scanback("trace hits traces/TimerTooSlow.trace timer_test.st:4", dir.path);
  EXPECT_EQ(hits.exitCode, 0) << hits.err;
  EXPECT_NE(hits.out.find("executed 1 time in 1 of 1 cycles"), std::string::npos) << hits.out;

  test::ShellResult state = scanback("replay traces/TimerTooSlow.trace --print-state", dir.path);
  EXPECT_EQ(state.exitCode, 0) << state.err;
  EXPECT_NE(state.out.find("\"TimerTooSlow\""), std::string::npos) << state.out;
  EXPECT_NE(state.out.find("\"ET\": \"T#1s\""), std::string::npos) << state.out;
}

}  // namespace
